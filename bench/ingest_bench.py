
"""ASER ingest benchmark on a toolkit-shaped KG.db: wall time, CPU and peak RSS of each way in, beside a plain scan.

    .venv/bin/python -m bench.ingest_bench                       # 1M eventualities / 3M relations
    .venv/bin/python -m bench.ingest_bench --sizes 330000,1000000 # RSS flat in graph size?
    .venv/bin/python -m bench.ingest_bench --sizes 1000000x6000000 --modes scan,ingest
    .venv/bin/python -m bench.ingest_bench --sizes 330000,1000000 --modes scan,ingest,ingest-map --repeat 3

The file comes from ``tests.support.aser_shape`` (the shape of a file the ASER toolkit writes:
repeated texts spread over the file, 1-3 senses per relation, full ``info`` JSON); a size
``N`` means N eventualities and 3N relations, ``NxM`` says both. Each mode runs in a child
process of its own, measured on its own (wall time; CPU time of all its threads, which
shows how much of the 2 cores it keeps busy; peak RSS from ``wait4``'s ``ru_maxrss``):

* ``scan``       — the baseline: a plain ``sqlite3`` scan of the whole file (every column of
  ``Eventualities``, then of ``Relations``), what merely reading it costs;
* ``engine``     — LadybugDB alone: the rows the ingest writes, deduplicated by key as the
  store does (``eventkg.graphstore.tables.dedupe``), prebuilt into Parquet files by another
  process (not timed), then written the engine's own way: one ``COPY table FROM 'file.parquet'``
  per table into an empty database, each followed by ``CHECKPOINT``, with the engine's default
  buffer pool (no eventkg logic, no budget); the floor any ingest into this engine pays, in
  time and in memory (its peak RSS is the engine's alone);
* ``engine-budget`` — the same COPYs with the buffer pool the default memory budget gives the
  ingest's rel COPYs (``edge_pool_bytes``, 1.5 GiB of ``EVENTKG_MEMORY_MB=2048``): the floor
  under the memory the ingest may use, where the default pool takes most of the machine;
* ``loader``     — the ASER loader with a store that discards batches (our share; not run
  by default);
* ``ingest``     — ``eventkg.ingest_source(store, "aser", ...)`` into a fresh LadybugDB store;
* ``ingest-map`` — the same with ``--map-events`` (CAUSES/BEFORE edges too);
* ``crash``      — an ingest killed with SIGKILL at a fixed point (right after the first
  checkpoint that leaves more than half of the held rel tables durable: nodes and those
  tables stored, the rest lost; see :func:`kill_after_durable_share`), then run again into
  the same store; the figures are the re-run's, and its graph must equal the clean ``ingest``'s;
* ``neo4j-bolt``, ``neo4j-bulk`` — Neo4j, run by ``bench.neo4j_modes`` in a child of its own
  (``--neo4j``, on by default when java and mvn are found).

What it checks: each ingest mode's wall time over the scan's (target <= 2.5x) and over the
engine floor's, peak RSS under the default memory budget (<= 2 GB), the crash re-run's graph
equal to the clean ingest's, and the peak RSS at the biggest size over the smallest once the
memory that grows with the graph by design is taken off (target <= 1.2x).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import (
    Sink,
    copy_each_table,
    cpu_seconds,
    fresh,
    generated_kg,
    measure_child,
    parse_sizes,
    tables_folder,
    write_engine_tables,
)
from eventkg import ingest_source

MODULE = "bench.ingest_bench"

SIZES = "1000000"
MODES = ("scan", "engine", "ingest", "ingest-map", "crash")
NEO4J_MODES = ("neo4j-bolt", "neo4j-bulk")
ENGINE_MODES = ("engine", "engine-budget")  # the engine's own bulk load: default pool, the budget's
KILL_SHARE = 0.5  # crash mode: SIGKILL once more than this share of the held rel tables is durable


def child(mode: str, kg: str, store_path: str, batch_size: int | None = None) -> None:
    """Runs inside the measured process; prints one JSON line."""
    from eventkg.graphstore.ladybug.database import import_ladybug

    import_ladybug()  # imported before the clock starts, as the engine mode does
    out: dict = {"mode": mode}
    start, cpu = time.perf_counter(), cpu_seconds()
    if mode in ENGINE_MODES:
        out["seconds"], out["cpu"], out["counts"] = engine_floor(kg, store_path, budgeted=mode == "engine-budget")
        print(json.dumps(out))
        return
    if mode == "scan":
        conn = sqlite3.connect(f"file:{kg}?mode=ro", uri=True)
        n = 0
        for table in ("Eventualities", "Relations"):
            cur = conn.execute(f"SELECT * FROM {table}")
            while chunk := cur.fetchmany(10_000):
                n += len(chunk)
        out["rows"] = n
    else:
        out.update(ingest(mode, kg, store_path, batch_size))
    out["seconds"], out["cpu"] = time.perf_counter() - start, cpu_seconds() - cpu
    print(json.dumps(out))


def ingest(mode: str, kg: str, store_path: str, batch_size: int | None) -> dict:
    from eventkg.graphstore import open_store
    from eventkg.ingest import aser

    options = {"batch_size": batch_size} if batch_size else {}
    if mode == "loader":
        return {"rows": ingest_source(Sink(keep=False), "aser", kg, **options).rows}
    store = open_store(store_path)
    if mode == "crash-first":
        kill_after_durable_share(store)
    eid_map_bytes = []
    freeze = aser.EidMap.freeze

    def measured_freeze(self) -> None:
        freeze(self)
        eid_map_bytes.append(self.nbytes)

    aser.EidMap.freeze = measured_freeze
    report = ingest_source(store, "aser", kg, map_events=mode == "ingest-map", **options)
    counts = store.counts()
    keyset_bytes = store._keys.nbytes()
    store.close()
    return {"rows": report.rows, "counts": {k: sum(v.values()) for k, v in counts.items()}, "by_table": counts,
            "by_design_mb": (sum(eid_map_bytes) + keyset_bytes) / 2**20,
            "late_skipped": sum(getattr(store, "late_skipped", {}).values())}


def kill_after_durable_share(store) -> None:
    """Make ``store`` die (SIGKILL) right after the first checkpoint that leaves more than
    ``KILL_SHARE`` of the held rel tables durable: the nodes and those tables stored, the rest lost.

    The same state at every size. Killing when that share of the tables had been *written*
    (the earlier rule) came before any rel-table checkpoint at 330K/1M (its 1.45M edges wait
    for one until ``REL_PENDING_EDGES``) but after several at 1M/3M, so the small re-run found no
    stored edges and its RSS was no fair base for the flatness ratio.
    """
    from eventkg.graphstore.model import REL_TYPES

    state = {"written": 0, "total": 0}

    def hook(message: str) -> None:
        if message.startswith("writing ") and message.split()[1] in REL_TYPES:
            state["total"] = int(message.split("(")[1].split(",")[0].split("/")[1])

    session, database = store._session, store._database
    write_edges, checkpoint = session._held._write_held_edges, database.checkpoint_and_release

    def counted_write(name: str) -> None:
        write_edges(name)
        state["written"] += 1

    def checkpoint_then_maybe_die() -> None:
        checkpoint()
        if state["total"] and state["written"] > state["total"] * KILL_SHARE:
            os.kill(os.getpid(), signal.SIGKILL)

    store.on_bulk_write = hook
    session._held._write_held_edges, database.checkpoint_and_release = counted_write, checkpoint_then_maybe_die


def engine_floor(kg: str, store_path: str, budgeted: bool = False) -> tuple[float, float, dict]:
    """Seconds LadybugDB takes to write the ingest's rows (prebuilt by :func:`engine_tables` in
    another process as Parquet files): one ``COPY ... FROM 'file'`` per table, each followed by a
    CHECKPOINT, with the engine's default buffer pool (its own bulk load, no eventkg logic), or
    (``budgeted``) the pool the memory budget gives the ingest's rel COPYs."""
    from eventkg.graphstore.ladybug.engine import edge_pool_bytes

    folder = tables_folder(Path(store_path))
    counts, seconds, cpu = {"nodes": 0, "edges": 0}, 0.0, 0.0
    for table in copy_each_table(store_path, folder, edge_pool_bytes() if budgeted else 0):
        counts["edges" if table["rel"] else "nodes"] += table["rows"]
        seconds, cpu = seconds + table["copy"] + table["checkpoint"], cpu + table["cpu"]
    shutil.rmtree(folder, ignore_errors=True)
    return seconds, cpu, counts


def measure(mode: str, kg: Path, store: Path, batch_size: int | None, may_die: bool = False) -> dict:
    """One mode in a child process of its own (the Neo4j modes in ``bench.neo4j_modes``'), measured."""
    if mode in NEO4J_MODES:
        return measure_child("bench.neo4j_modes", [mode, str(kg), str(store.parent)])
    extra = ["--batch-size", str(batch_size)] if batch_size else []
    return measure_child(MODULE, [mode, str(kg), str(store), *extra], may_die=may_die)


def _graph(counts: dict | None) -> str:
    """``nodes / edges`` from counts given as totals or per label/type."""
    if not counts:
        return "-"
    if "nodes" not in counts and "edges" not in counts:  # flat {Label: n, REL_TYPE: n} (the Neo4j modes)
        nodes = sum(v for k, v in counts.items() if not k.isupper())
        return f"{nodes:,} / {sum(counts.values()) - nodes:,}"
    total = [
        sum(v.values()) if isinstance(v, dict) else int(v) for v in (counts.get("nodes", 0), counts.get("edges", 0))
    ]
    return f"{total[0]:,} / {total[1]:,}"


def neo4j_available() -> tuple[bool, str]:
    if not (shutil.which("java") and shutil.which("mvn")):
        return False, "java or mvn not found"
    return True, ""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default=SIZES,
        help="eventualities (relations = 3x) or EVxREL, comma-separated (default 1000000 = 1M/3M)",
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sizes (e.g. 0.1 for a quick run)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated subset of {', '.join(MODES)}, engine-budget, loader"
    )
    parser.add_argument(
        "--neo4j",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also run neo4j-bolt and neo4j-bulk (default: when java and mvn are found)",
    )
    parser.add_argument("--workdir", default=None, help="where to put the files (kept, and a generated KG.db reused)")
    parser.add_argument("--batch-size", type=int, default=None, help="rows per store write (default: the loader's)")
    parser.add_argument("--seed", type=int, default=7, help="generator seed")
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="rounds of every mode per size; with more than one, a table of each mode's medians follows (ratios "
             "taken within each round) and the flatness uses the medians: this machine's noise moves one run by 20%%",
    )
    parser.add_argument("--child", nargs=3, metavar=("MODE", "KG", "STORE"), help=argparse.SUPPRESS)
    return parser.parse_args()


def measure_mode(mode: str, kg: Path, store: Path, batch_size: int | None, clean: dict | None) -> tuple[dict, str]:
    """One mode's figures and a note; ``crash`` is a killed first run, then the measured re-run,
    whose graph is compared with the clean ingest's (``clean``, its counts per table)."""
    if mode in ENGINE_MODES:  # its tables are built by a process of its own: a child's peak RSS counts its children's
        write_engine_tables(kg, tables_folder(store))
    if mode != "crash":
        return measure(mode, kg, store, batch_size), ""
    died = measure("crash-first", kg, store, batch_size, may_die=True)
    note = (
        f"killed by signal {-died['exit']} after {died['seconds']:.1f} s"
        if died["exit"] < 0
        else f"first run was not killed (exit {died['exit']})"
    )
    r = measure("ingest", kg, store, batch_size)
    if r.get("late_skipped") is not None:  # rows sent again and found stored by digest (no upsert)
        note += f"; {r['late_skipped']:,} rows seen before skipped by digest"
    if clean is not None:
        note += "; re-run graph " + (
            "equals the clean ingest's" if r["by_table"] == clean else "DIFFERS from the clean ingest's"
        )
    return r, note


def report_line(size: str, mode: str, r: dict, base: float | None, note: str) -> tuple[str, str]:
    """(the progress line printed at once, the markdown table row) of one measured mode (its
    ratio to ``base`` seconds, or the ``ratio`` it carries: a median of rounds)."""
    ratio = f"{r['seconds'] / base:.2f}" if base else f"{r['ratio']:.2f}" if r.get("ratio") else "-"
    graph = _graph(r.get("counts"))
    if "server_peak_rss_mb" in r:
        note += f"; server peak RSS {r['server_peak_rss_mb']:,.0f} MB"
    if "raw_create_rate" in r:
        note += f"; raw driver UNWIND CREATE {r['raw_create_rate']:,.0f} edges/s"
    line = (
        f"{size:>22} {mode:>11} {r['seconds']:>8.1f} s {ratio:>6}x  CPU {r['cpu']:>6.1f} s"
        f"  RSS {r['peak_rss_mb']:>7,.0f} MB  graph {graph}  {note} [load {os.getloadavg()[0]:.1f}]"
    )
    row = (
        f"| {size} | {mode} | {r['seconds']:.1f} | {ratio} | {r['cpu']:.1f} | "
        f"{r['peak_rss_mb']:,.0f} | {graph}{' (' + note.strip('; ') + ')' if note else ''} |"
    )
    return line, row


def engine_floor_notes(results: dict[str, dict]) -> list[str]:
    """How much of the ingest each engine floor takes (its ratio to it), and the best any schedule could do."""
    notes = []
    for floor in ENGINE_MODES:
        if not {"ingest", floor} <= results.keys():
            continue
        e, i = results[floor], results["ingest"]
        scan_cpu = results.get("scan", {}).get("cpu", 0)
        notes.append(
            f"# {floor} floor: {e['seconds']:.1f} s ({e['cpu']:.1f} CPU-s, {e['peak_rss_mb']:,.0f} MB) of the ingest's"
            f" {i['seconds']:.1f} s ({i['cpu']:.1f} CPU-s): ingest / floor {i['seconds'] / e['seconds']:.2f}x;"
            f" with the scan's {scan_cpu:.1f} CPU-s no schedule on {os.cpu_count()} cores beats"
            f" {(e['cpu'] + scan_cpu) / (os.cpu_count() or 1):.1f} s"
        )
    return notes


def rss_flatness_notes(by_size: list[tuple[str, dict[str, dict]]]) -> list[str]:
    """Peak RSS of each ingest mode at the biggest size over the smallest, as measured and without
    the memory that grows with the graph by design (the key sets, 16 B per stored key, and the
    ASER eid map, ~26 B per eventuality; measured in the child). Target: <= 1.2x."""
    if len(by_size) < 2:
        return []
    (small, first), (big, last) = by_size[0], by_size[-1]
    notes = []
    for mode in ("engine", "ingest", "ingest-map", "crash"):
        if mode in first and mode in last:
            a, b = first[mode], last[mode]
            da, db = a.get("by_design_mb", 0), b.get("by_design_mb", 0)
            notes.append(
                f"# RSS flatness {mode}: {b['peak_rss_mb']:,.0f} / {a['peak_rss_mb']:,.0f} MiB"
                f" = {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x ({big} over {small}); key sets + eid map"
                f" {db:,.0f} / {da:,.0f} MiB; without them {b['peak_rss_mb'] - db:,.0f} / {a['peak_rss_mb'] - da:,.0f}"
                f" = {(b['peak_rss_mb'] - db) / (a['peak_rss_mb'] - da):.2f}x"
            )
    return notes


def rss_flatness_rows(by_size: list[tuple[str, dict[str, dict]]]) -> list[str]:
    """Table rows: each mode's peak RSS at the biggest size over the smallest (the flatness ratio)."""
    if len(by_size) < 2:
        return []
    (small, first), (big, last) = by_size[0], by_size[-1]
    return [
        f"| RSS {big} over {small} | {mode} | | | | {last[mode]['peak_rss_mb'] / first[mode]['peak_rss_mb']:.2f}x | |"
        for mode in last
        if mode in first and mode != "scan"
    ]


def median_results(rounds: list[dict[str, dict]]) -> dict[str, dict]:
    """Each mode's median wall time, CPU, peak RSS and ratio to the scan of its own round, over ``rounds``."""
    out = {}
    for mode in rounds[0]:
        runs = [r[mode] for r in rounds if mode in r]
        med = {k: statistics.median(r[k] for r in runs) for k in ("seconds", "cpu", "peak_rss_mb")}
        med["by_design_mb"] = statistics.median(r.get("by_design_mb", 0) for r in runs)
        if mode == "scan":
            med["ratio"] = 1.0
        elif all("scan" in r for r in rounds):
            med["ratio"] = statistics.median(r[mode]["seconds"] / r["scan"]["seconds"] for r in rounds if mode in r)
        out[mode] = {**runs[0], **med}
    return out


def median_rows(size: str, rounds: list[dict[str, dict]]) -> tuple[dict[str, dict], list[str]]:
    """The medians of ``rounds`` (:func:`median_results`) and their table rows, printed as they are made."""
    med = median_results(rounds)
    rows = []
    for mode, r in med.items():
        spread = [x[mode]["seconds"] for x in rounds if mode in x]
        line, row = report_line(f"{size} (median of {len(rounds)})", mode, r, None,
                                f"wall {min(spread):.1f}-{max(spread):.1f} s")
        print(line, flush=True)
        rows.append(row)
    return med, rows


def bench_size(work: Path, n_ev: int, n_rel: int, modes: list[str], args: argparse.Namespace,
               results: dict[str, dict] | None = None) -> list[str]:
    """Run every mode on one size (progress lines printed as they come); returns the table rows
    (and fills ``results``, mode -> figures)."""
    kg = generated_kg(work, n_ev, n_rel, args.seed)
    size = f"{n_ev:,} / {n_rel:,}"
    base, clean = None, None
    results = {} if results is None else results
    rows = []
    for mode in modes:
        store = fresh(work / f"store_{n_ev}_{n_rel}.lbug")
        r, note = measure_mode(mode, kg, store, args.batch_size, clean)
        if mode == "ingest":
            clean = r["by_table"]
        results[mode] = r
        base = r["seconds"] if mode == "scan" else base
        line, row = report_line(size, mode, r, base, note)
        print(line, flush=True)
        rows.append(row)
    for note in engine_floor_notes(results):
        print(note)
    return rows


def main() -> None:
    args = parse_args()
    if args.child:
        child(*args.child, batch_size=args.batch_size)
        return
    modes = [m for m in args.modes.split(",") if m]
    have_neo4j, why = neo4j_available()
    if args.neo4j is not False and have_neo4j and (args.neo4j or shutil.which("java")):
        modes += [m for m in NEO4J_MODES if m not in modes]
    skipped = [] if have_neo4j or args.neo4j is False else list(NEO4J_MODES)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="eventkg-bench-", dir=os.environ.get("TMPDIR")))
    work.mkdir(parents=True, exist_ok=True)
    table = [
        "| eventualities / relations | mode | wall s | x scan | CPU s | peak RSS MB | graph (nodes / edges) |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    try:
        print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        if skipped:
            print(f"# skipped {', '.join(skipped)}: {why}")
        by_size = []
        for n_ev, n_rel in parse_sizes(args.sizes, args.scale):
            rounds: list[dict[str, dict]] = []
            for _ in range(max(1, args.repeat)):
                rounds.append({})
                table += bench_size(work, n_ev, n_rel, modes, args, rounds[-1])
            result = rounds[0]
            if len(rounds) > 1:
                result, rows = median_rows(f"{n_ev:,} / {n_rel:,}", rounds)
                table += rows
            by_size.append((f"{n_ev:,} / {n_rel:,}", result))
        table += rss_flatness_rows(by_size)
        print()
        print("\n".join(table))
        print("\n".join(rss_flatness_notes(by_size)))
        if skipped:
            print(f"\n{', '.join(skipped)}: skipped ({why})")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
