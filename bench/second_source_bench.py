
"""A second ASER file into a store that holds a graph already: wall time, CPU and peak RSS.

    .venv/bin/python -m bench.second_source_bench --workdir DIR
    .venv/bin/python -m bench.second_source_bench --base 1000000 --second 330000 --engine-nodes 300000,1000000
    EVENTKG_MEMORY_MB=3072 .venv/bin/python -m bench.second_source_bench --base 10000000 \
        --second 1000000 --seed 11 --workdir DIR --modes fresh,onto,engine-floor --engine-nodes ''

A user adds ASER files (or parts of one) to one store, so most held rel tables append to stored
ones. Both files come from ``tests.support.aser_shape`` (as in ``bench.ingest_bench``, whose
cached files are reused from the same ``--workdir``); the base store, ingested with
``--map-events``, is made once and copied for each mode. Each mode runs in a child process of its
own (peak RSS from ``wait4``):

* ``fresh``              — the second file into an empty store (the baseline);
* ``onto``               — into a copy of the base store, its digests kept (the copy's digests file
  restamped for the copy, which is byte for byte the base: a plain copy would lose them);
* ``onto-no-digests``    — the same without the digests file (an older or copied store);
* ``engine-floor``       — the engine alone on a copy of the base store, after ``onto``: COPY as many
  new events as ``onto`` created, then into each rel table as many random new edges between stored
  events as ``onto`` created there, each table checkpointed from a fresh opening (as the store
  does: auto-checkpoint off), at the buffer pool a bulk session appends with; no eventkg logic. What a second file costs
  the engine itself: appending edges to a stored rel table rewrites the node groups they touch.
* ``*-before``           — the same with ``ladybug.bulk.held_tables.CHECKPOINT_APPENDS`` off (the earlier
  rule: checkpoint only every ``REL_PENDING_EDGES`` edges);
* ``engine-append``      — the engine alone (``--engine-nodes``): N events and six rel tables of
  300K edges, checkpointed, then 1,000 new edges COPYed into each table without a checkpoint;
  prints the RSS each COPY keeps (it grows with N, not with the edges: why each such COPY is
  checkpointed at once); then 25K random events rewritten in one transaction, and two and one
  node groups per checkpointed transaction (``ladybug_upsert.update_by_node_groups``): time
  and peak RSS over the start.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import time
from pathlib import Path

from bench.common import child_result, cpu_seconds, default_workdir, fresh, generated_kg, run_child
from eventkg import ingest_source

UPDATED_EVENTS = 25_000  # about what ASER 330K/1M changes of the 1M/3M graph's events (repeated texts)
MODES = ("fresh", "onto", "onto-before", "onto-no-digests", "onto-no-digests-before", "engine-floor")


def child(mode: str, kg: str, store_path: str) -> None:
    """Runs inside the measured process; prints one JSON line."""
    from eventkg.graphstore import open_store
    from eventkg.graphstore.ladybug.bulk import held_tables
    from eventkg.graphstore.ladybug.database import import_ladybug

    import_ladybug()
    if mode.endswith("-before"):
        held_tables.CHECKPOINT_APPENDS = False
    start, cpu = time.perf_counter(), cpu_seconds()
    with open_store(store_path) as store:
        report = ingest_source(store, "aser", kg, map_events=True)
        counts = store.counts()
    print(json.dumps({"mode": mode, "rows": report.rows, "seconds": time.perf_counter() - start,
                      "cpu": cpu_seconds() - cpu, "counts": counts, "created": report.created,
                      "updated": report.updated}))


def engine_floor(created_json: str, store_path: str) -> None:
    """The engine's own append of ``created`` rows (per table) onto the store: random new events,
    then random new edges between stored events, one COPY and one CHECKPOINT per table."""
    import numpy as np
    import pyarrow as pa

    from eventkg.graphstore.ladybug.database import import_ladybug
    from eventkg.graphstore.ladybug.engine import append_pool_bytes, buffer_pool_bytes
    from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
    from eventkg.graphstore.tables import row_schema

    created = json.loads(created_json)
    ladybug = import_ladybug()
    start, cpu = time.perf_counter(), cpu_seconds()
    db = ladybug.Database(store_path, buffer_pool_size=buffer_pool_bytes())
    conn = ladybug.Connection(db)
    conn.execute("CALL auto_checkpoint=false")
    events = conn.execute("MATCH (n:Event) RETURN count(n)").get_next()[0]
    rng = np.random.default_rng(5)
    n = created.get("Event", 0)
    ids = pa.array([f"floor-{i:012d}" for i in range(n)])
    rows = {"id": ids, "sources": pa.array(["b"] * n), "text": ids}
    for f in row_schema(("id",), NODE_TYPES["Event"].properties):
        rows.setdefault(f.name, pa.nulls(n, f.type))
    eventkg_rows = pa.table(rows).select([f.name for f in row_schema(("id",), NODE_TYPES["Event"].properties)])  # noqa: F841
    conn.execute("COPY Event FROM eventkg_rows")
    conn.execute("CHECKPOINT")
    conn.close()
    db.close()
    pool = max(buffer_pool_bytes(), append_pool_bytes(events + n))
    db = ladybug.Database(store_path, buffer_pool_size=pool)
    conn = ladybug.Connection(db)
    stored = conn.execute("MATCH (n:Event) WHERE offset(id(n)) < 3000000 RETURN n.id").get_as_arrow(0).column(0)
    for rtype, k in created.items():
        if rtype not in REL_TYPES or not k or REL_TYPES[rtype].source != "Event":
            continue
        conn.close()  # each table from a fresh opening, as the store writes them (the engine keeps
        db.close()  # what a COPY built until the database is closed)
        db = ladybug.Database(store_path, buffer_pool_size=pool)
        conn = ladybug.Connection(db)
        conn.execute("CALL auto_checkpoint=false")
        table = {"src": stored.take(pa.array(rng.integers(0, len(stored), k))),
                 "dst": stored.take(pa.array(rng.integers(0, len(stored), k))),
                 "sources": pa.array(["b"] * k)}
        for f in row_schema(("src", "dst"), REL_TYPES[rtype].properties):
            table.setdefault(f.name, pa.array(np.ones(k), f.type) if pa.types.is_floating(f.type) else pa.nulls(k, f.type))
        eventkg_rows = pa.table(table).select([f.name for f in row_schema(("src", "dst"), REL_TYPES[rtype].properties)])  # noqa: F841
        conn.execute(f"COPY {rtype} FROM eventkg_rows")
        conn.execute("CHECKPOINT")
    conn.close()
    db.close()
    print(json.dumps({"mode": "engine-floor", "seconds": time.perf_counter() - start, "cpu": cpu_seconds() - cpu,
                      "pool_mb": pool / 2**20}))


def engine_append(nodes: int) -> None:
    """The RSS that COPYs of 1,000 edges into non-empty rel tables keep until a checkpoint."""
    import numpy as np
    import pyarrow as pa

    from eventkg.graphstore import open_store
    from eventkg.graphstore.ladybug.engine import copy_arrow, release_free_memory
    from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
    from eventkg.graphstore.tables import row_schema

    folder = Path(os.environ["EVENTKG_BENCH_TMP"])
    store = open_store(str(fresh(folder / "engine-append.lbug")))
    ids = pa.array([f"{i:020x}" for i in range(nodes)])
    rows = {"id": ids, "sources": pa.array([["aser"]] * nodes, pa.list_(pa.string())), "text": ids}
    for field in row_schema(("id",), NODE_TYPES["Event"].properties):  # the other properties null, typed
        rows.setdefault(field.name, pa.nulls(nodes, field.type))
    copy_arrow(store.connection, "Event", pa.table(rows))
    rng = np.random.default_rng(7)

    def edges(k: int) -> pa.Table:
        ends = pa.array(rng.integers(0, nodes, 2 * k))
        return pa.table({"src": ids.take(ends[:k]), "dst": ids.take(ends[k:]),
                         "sources": pa.array([["aser"]] * k, pa.list_(pa.string())), "count": pa.array(np.ones(k))})

    tables = [t for t, rel in REL_TYPES.items() if rel.source == rel.target == "Event" and "count" in rel.properties][:6]
    for name in tables:
        copy_arrow(store.connection, name, edges(300_000))
    store._database.checkpoint_and_release()
    kept = []
    for name in tables:
        before = _rss_mb()
        copy_arrow(store.connection, name, edges(1_000))
        release_free_memory()
        kept.append(_rss_mb() - before)
    start = time.perf_counter()
    store._database.checkpoint_and_release()
    out = {"nodes": nodes, "kept_mb": kept, "checkpoint_s": time.perf_counter() - start}
    out["update"] = {groups: engine_update(store, ids, groups) for groups in (0, 2, 1)}
    print(json.dumps(out))
    store.close()


def engine_update(store, ids, groups: int) -> tuple[float, float]:
    """(seconds, peak RSS over the start in MB) of rewriting 25K random stored events: in one
    transaction (``groups`` 0) or ``groups`` node groups per checkpointed transaction."""
    import threading

    import numpy as np
    import pyarrow as pa

    from eventkg.graphstore.ladybug import upsert as lu

    pick = np.random.default_rng(groups).choice(len(ids), min(UPDATED_EVENTS, len(ids)), replace=False)
    cols = ["id", "sources", "text", "frequency"]
    rows = [dict(r, frequency=float(groups + 2)) for r in
            lu.existing_ids(store.connection, "Event", ids.take(pa.array(pick)).to_pylist(), cols, chunk=20_000).to_pylist()]
    peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mb())
            time.sleep(0.01)

    base = _rss_mb()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    if groups:
        lu.update_by_node_groups(lambda: store.connection, "Event", rows, store._database.in_checkpointed_transaction,
                                 groups)
    else:
        store._database.in_transaction(lambda: lu.update_rows(store.connection, "Event", rows))
        store._database.checkpoint_and_release()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    return seconds, peak[0] - base


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def measure(args: list[str]) -> dict:
    code, _, stdout, peak = run_child("bench.second_source_bench", args)
    if code != 0:
        raise SystemExit(f"{args[:2]} failed with exit code {code}")
    return child_result(stdout, peak)


def base_store(work: Path, kg: Path) -> Path:
    """The base file ingested with --map-events, made once (with its digests file)."""
    store = work / f"onto_base_{kg.stem}.lbug"
    if not (work / (store.name + ".done")).exists():
        fresh(store)
        print(f"# ingesting the base store {store.name} ...", flush=True)
        measure(["--child", "fresh", str(kg), str(store)])
        (work / (store.name + ".done")).touch()
    return store


def copy_of(base: Path, to: Path, digests: bool) -> Path:
    """A copy of the base store; with its digests, restamped for the copy (the digests file's
    stamp holds the database file's inode, so a plain copy would drop them on opening)."""
    from eventkg.graphstore.ladybug.digest_file import DigestBook

    fresh(to)
    shutil.copyfile(base, to)
    if digests:
        book = json.loads(Path(f"{base}.digests").read_text())
        if book.get("stamp") != DigestBook(base).stamp():
            raise SystemExit(f"{base}.digests does not match {base}: the base store was written without it")
        book["stamp"] = DigestBook(to).stamp()
        Path(f"{to}.digests").write_text(json.dumps(book))
    return to


def edges_total(counts: dict) -> int:
    return sum(counts["edges"].values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=int, default=1_000_000, help="eventualities of the base file (3x relations)")
    parser.add_argument("--second", type=int, default=330_000, help="eventualities of the second file (3x relations)")
    parser.add_argument("--base-store", help="an existing store of the base file (its digests beside it) instead of --base")
    parser.add_argument("--modes", default=",".join(MODES), help=f"any of {', '.join(MODES)}")
    parser.add_argument("--engine-nodes", default="300000,1000000", help="node counts for engine-append ('' skips it)")
    parser.add_argument("--workdir", default=str(default_workdir("eventkg-bench")), help="files kept and reused here")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--engine-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.engine_child:
        engine_append(args.engine_child)
        return
    if args.floor_child:
        engine_floor(*args.floor_child)
        return
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    os.environ["EVENTKG_BENCH_TMP"] = str(work)
    for nodes in [int(n) for n in args.engine_nodes.split(",") if n]:
        r = measure(["--engine-child", str(nodes)])
        print(f"engine-append {nodes:>10,} events: RSS kept per COPY of 1,000 edges "
              f"{', '.join(f'{k:+.0f}' for k in r['kept_mb'])} MB; checkpoint {r['checkpoint_s']:.2f} s", flush=True)
        print(f"engine-update {nodes:>10,} events, {min(UPDATED_EVENTS, nodes):,} changed: " + "; ".join(
            f"{'one transaction' if g == '0' else f'{g} node group(s) per transaction'} {sec:.2f} s, peak {mb:+.0f} MB"
            for g, (sec, mb) in r["update"].items()), flush=True)
    base = Path(args.base_store) if args.base_store else base_store(work, generated_kg(work, args.base, 3 * args.base, args.seed))
    second = generated_kg(work, args.second, 3 * args.second, args.seed)
    results = {}
    for mode in args.modes.split(","):
        store = work / "onto_run.lbug"
        if mode == "fresh":
            fresh(store)
        else:
            copy_of(base, store, digests="no-digests" not in mode)
        if mode == "engine-floor":
            if "onto" not in results:
                raise SystemExit("engine-floor appends what onto created: run onto before it")
            results[mode] = r = measure(["--floor-child", json.dumps(results["onto"]["created"]), str(store)])
            r["counts"] = results["onto"]["counts"]
        else:
            results[mode] = r = measure(["--child", mode, str(second), str(store)])
        ratio = f"{r['seconds'] / results['fresh']['seconds']:5.2f}x fresh" if "fresh" in results else ""
        print(f"{mode:>24} {r['seconds']:6.1f} s {ratio}  CPU {r['cpu']:6.1f} s  "
              f"RSS {r['peak_rss_mb']:6.0f} MB  edges after {edges_total(r['counts']):,}", flush=True)
        if "updated" in r:  # what the file changed: events created and updated, edges created
            from eventkg.graphstore.model import REL_TYPES
            print(f"{'':>24} events created {r['created'].get('Event', 0):,}, updated {r['updated'].get('Event', 0):,}; "
                  f"edges created {sum(v for k, v in r['created'].items() if k in REL_TYPES):,}", flush=True)
    for mode in [m for m in results if m.startswith("onto")]:
        if "engine-floor" in results:
            print(f"# {mode} over the engine floor: {results[mode]['seconds'] / results['engine-floor']['seconds']:.2f}x")
    onto = {m: json.dumps(r["counts"], sort_keys=True) for m, r in results.items() if m not in ("fresh", "engine-floor")}
    if len(set(onto.values())) > 1:
        raise SystemExit(f"the modes onto the base store end with different graphs: {onto}")


if __name__ == "__main__":
    main()
