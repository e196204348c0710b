"""ASER ingest benchmark: relations/s and peak RSS, beside a plain sqlite3 scan of the same file.

    .venv/bin/python bench/ingest_bench.py              # 1M/1M and 1M/3M (eventualities/relations)
    .venv/bin/python bench/ingest_bench.py --scale 0.1  # ten times smaller, for a quick look

For each generated ``KG.db`` (ASER schema, see ``ingest.synthetic``) three child processes run
one after another, each measured on its own (wall time; CPU time of all the process's threads,
which shows how much of the machine's cores a mode keeps busy; peak RSS from ``wait4``'s
``ru_maxrss``):

* ``scan``   — a plain sqlite3 scan of ``Relations`` (the baseline: what reading costs);
* ``engine`` — LadybugDB alone: the very rows the ingest writes, built in memory first (not
  timed), then written the fastest way we know (one ``COPY`` per table from Arrow, each
  followed by ``CHECKPOINT``); only the engine is timed. This is the floor any ingest into
  this engine pays; its RSS holds the whole graph in memory and means nothing;
* ``loader`` — the ASER loader and pipeline with a store that discards batches (our share);
* ``ingest`` — ``ingest.aser.load`` into a fresh LadybugDB store (loader + store).

Targets: >= 200,000 relations/s; peak RSS under 2 GB and flat as the file grows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = [(1_000_000, 1_000_000), (1_000_000, 3_000_000)]


def child(mode: str, kg: str, store_path: str, batch_size: int | None = None) -> None:
    """Runs inside the measured process; prints one JSON line."""
    from graphstore import open_store
    from graphstore.ladybug_store import _import_ladybug
    from ingest import aser

    _import_ladybug()  # imported before the clock starts, as the engine mode does
    start, cpu = time.perf_counter(), cpu_seconds()
    out: dict = {"mode": mode}
    if mode == "engine":
        out["seconds"], out["cpu"], out["counts"] = engine_floor(kg, store_path)
        print(json.dumps(out))
        return
    if mode == "scan":
        conn = sqlite3.connect(f"file:{kg}?mode=ro", uri=True)
        cur = conn.execute("SELECT * FROM Relations")
        n = 0
        while chunk := cur.fetchmany(10_000):
            n += len(chunk)
        out["relations"] = n
    else:
        if mode == "loader":
            store = Sink(keep=False)
        else:
            store = open_store(store_path)
        report = aser.load(store, kg, **({"batch_size": batch_size} if batch_size else {}))
        if mode == "ingest":
            out["counts"] = {k: sum(v.values()) for k, v in store.counts().items()}
            store.close()
        out["rows"] = report.rows
    out["seconds"], out["cpu"] = time.perf_counter() - start, cpu_seconds() - cpu
    print(json.dumps(out))


class Sink:
    """A store stub: discards what the loader hands over, or keeps its tables (for the engine floor)."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.tables: dict[str, list] = {}

    def write_batch(self, batch):
        from graphstore.base import WriteResult

        if self.keep:
            for name, table in [*batch.node_tables.items(), *batch.edge_tables.items()]:
                self.tables.setdefault(name, []).append(table)
        return WriteResult()

    def bulk_load(self):
        return contextlib.nullcontext(self)


def cpu_seconds() -> float:
    """CPU time of this process so far, all threads (the engine's included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def engine_floor(kg: str, store_path: str) -> tuple[float, float, dict]:
    """Seconds LadybugDB takes to write the ingest's rows, prebuilt as typed Arrow tables."""
    import ladybug
    import pyarrow as pa

    from graphstore.ladybug_store import schema_statements
    from graphstore.model import NODE_TYPES, REL_TYPES
    from graphstore.tables import conform_table
    from ingest import aser

    sink = Sink(keep=True)
    aser.load(sink, kg)
    tables = []
    for name in [*NODE_TYPES, *REL_TYPES]:
        if name in sink.tables:
            kind, keys = (NODE_TYPES[name], ("id",)) if name in NODE_TYPES else (REL_TYPES[name], ("src", "dst"))
            tables.append((name, conform_table(name, pa.concat_tables(sink.tables.pop(name)), keys, kind.properties)))
    db = ladybug.Database(store_path)
    conn = ladybug.Connection(db)
    conn.execute("CALL auto_checkpoint=false")
    for stmt in schema_statements():
        conn.execute(stmt)
    start, cpu = time.perf_counter(), cpu_seconds()
    for name, rows in tables:  # noqa: B007 - COPY binds the Python variable `rows` by name
        conn.execute(f"COPY {name} FROM rows")
        conn.execute("CHECKPOINT")
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    counts = {"nodes": sum(t.num_rows for n, t in tables if n in NODE_TYPES),
              "edges": sum(t.num_rows for n, t in tables if n in REL_TYPES)}
    conn.close()
    db.close()
    return seconds, cpu, counts


def measure(mode: str, kg: Path, store: Path, batch_size: int | None) -> dict:
    extra = ["--batch-size", str(batch_size)] if batch_size else []
    proc = subprocess.Popen([sys.executable, __file__, "--child", mode, str(kg), str(store), *extra],
                            stdout=subprocess.PIPE, cwd=ROOT)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} child failed with exit code {proc.returncode}")
    result = json.loads(stdout.decode().strip().splitlines()[-1])
    result["peak_rss_mb"] = usage.ru_maxrss / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(f"{e}x{r}" for e, r in SIZES),
                        help="eventualities x relations, comma-separated (e.g. 1000000x6000000 to see RSS stay flat)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sizes (e.g. 0.1 for a quick run)")
    parser.add_argument("--modes", default="scan,engine,loader,ingest", help="comma-separated subset of scan,engine,loader,ingest")
    parser.add_argument("--workdir", default=None, help="where to put the generated files (default: a temp folder)")
    parser.add_argument("--batch-size", type=int, default=None, help="rows per store write (default: the loader's)")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "KG", "STORE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, batch_size=args.batch_size)
        return
    from ingest.synthetic import make_aser_kg

    work = Path(args.workdir or tempfile.mkdtemp(prefix="eventkg-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        print(f"{'eventualities':>13} {'relations':>10} {'mode':>7} {'seconds':>8} {'CPU s':>6} {'relations/s':>12} {'peak RSS MB':>12}")
        sizes = [tuple(int(x) for x in size.split("x")) for size in args.sizes.split(",")]
        for n_ev, n_rel in sizes:
            n_ev, n_rel = int(n_ev * args.scale), int(n_rel * args.scale)
            kg = work / f"KG_{n_ev}_{n_rel}.db"
            t = time.perf_counter()
            make_aser_kg(kg, n_ev, n_rel)
            print(f"# generated {kg.name} ({kg.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s", flush=True)
            base, rates, cpus = None, {}, {}
            for mode in args.modes.split(","):
                store = work / f"store_{n_ev}_{n_rel}.lbug"
                shutil.rmtree(store, ignore_errors=True)
                if store.exists():
                    store.unlink()
                r = measure(mode, kg, store, args.batch_size)
                rate = n_rel / r["seconds"]
                rates[mode], cpus[mode] = rate, r["cpu"]
                base = base or rate
                extra = f"  ({rate / base:.2f}x the sqlite scan)" if mode != "scan" and "scan" in args.modes else ""
                if "counts" in r:
                    extra += f"  store: {r['counts']['nodes']:,} nodes, {r['counts']['edges']:,} edges"
                print(f"{n_ev:>13,} {n_rel:>10,} {mode:>7} {r['seconds']:>8.1f} {r['cpu']:>6.1f} {rate:>12,.0f} {r['peak_rss_mb']:>12,.0f}{extra}"
                      f"  [load {os.getloadavg()[0]:.1f}]", flush=True)
            if "ingest" in rates and "engine" in rates:
                print(f"# ingest / engine floor = {rates['ingest'] / rates['engine']:.2f}"
                      f" (the engine alone takes {n_rel / rates['engine']:.1f} s of the ingest's {n_rel / rates['ingest']:.1f} s)")
            if {"engine", "loader"} <= cpus.keys():
                need = cpus["engine"] + cpus["loader"]
                cores = os.cpu_count() or 1
                print(f"# CPU floor: engine {cpus['engine']:.1f} s + loader {cpus['loader']:.1f} s = {need:.1f} CPU-seconds;"
                      f" on {cores} cores no overlap beats {need / cores:.1f} s = {n_rel * cores / need:,.0f} relations/s")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
