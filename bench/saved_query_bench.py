"""Saved exploration queries at scale: rows and milliseconds of each on the busiest eventuality of an ASER-shaped store.

    .venv/bin/python -m bench.saved_query_bench --kg KG.db       # a LadybugDB store of it in the temp folder
    .venv/bin/python -m bench.saved_query_bench --kg KG.db --store DIR/kg.lbug --repeat 5
    .venv/bin/python -m bench.saved_query_bench --kg KG.db --baseline REV   # also the queries at git revision REV

The store is a ``--map-events`` ingest of a ``tests.support.aser_shape`` file (made once,
then reused: ``--store`` is kept). The busiest eventuality is the one with the most ASER
relations (both directions); it anchors ``aser-neighbourhood``, ``causes-and-effects`` and
``paths-between`` (to the second busiest: the two hubs share the most paths, the worst case).
Each query runs once cold (right after the store is opened) and ``--repeat`` times warm
(median); a query still running after ``--timeout`` seconds is stopped and reported as such.
``--baseline REV`` runs the queries of ``graphstore/saved.cypher`` at that git revision too
(without limits: what Browser and ``eventkg saved`` returned before), in the same run.
``--neo4j`` then loads the same store into a local Neo4j server by the bulk path (``export
neo4j-import`` + ``neo4j-admin database import``, as ``bench.neo4j_modes`` does) and times the
same queries there (the baseline's ``paths-between`` is not run on Neo4j: no query timeout).

What it checks: every saved query within 1 s at 10M/30M on both backends, each returning at most
its default ``limit`` rows and saying when it cut.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, default_workdir
from eventkg.graphstore import open_store
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import ASER_RELATIONS, upper_snake
from eventkg.graphstore.saved_cypher import backend_of, get_saved_query, parse_queries, run_saved_query

ASER_TYPES = "|".join(upper_snake(a) for a in ASER_RELATIONS)


def ensure_store(kg: Path, store: Path) -> float | None:
    """Ingest ``kg`` with --map-events into ``store`` unless it is there; the seconds it took."""
    if store.exists():
        return None
    t0 = time.perf_counter()
    subprocess.run([str(Path(sys.executable).with_name("eventkg")), "--store", str(store), "ingest", "aser", str(kg), "--map-events"],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def busiest(store: GraphStore, n: int = 2) -> list[dict[str, Any]]:
    """The ``n`` eventualities with the most ASER relations, busiest first."""
    return store.query(
        f"MATCH (e:Event)-[:{ASER_TYPES}]-() RETURN e.text AS text, count(*) AS degree ORDER BY degree DESC LIMIT {n}"
    )


def timed(store: GraphStore, run: Any, repeat: int, timeout_s: float) -> dict[str, Any]:
    """Cold and warm (median of ``repeat``) milliseconds of ``run()``, with its rows and cut."""
    conn = getattr(store, "connection", None)  # LadybugDB: stop a runaway query (the bench's own use)
    if conn is not None:
        conn.set_query_timeout(int(timeout_s * 1000))
    out: dict[str, Any] = {}
    times = []
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        try:
            result = run()
        except Exception as exc:  # noqa: BLE001 - a timeout or an engine error is a figure here
            out.update(error=str(exc).splitlines()[0][:80], cold_ms=(time.perf_counter() - t0) * 1000)
            return out
        times.append((time.perf_counter() - t0) * 1000)
        if i == 0:
            out["cold_ms"] = times[0]
    rows, cut = result if isinstance(result, tuple) else (result, None)
    out.update(rows=len(rows), cut=cut, warm_ms=statistics.median(times[1:]) if repeat else times[0])
    return out


def cases(store: GraphStore) -> dict[str, dict[str, Any]]:
    """Each saved query's parameters on the busiest eventualities (the sample defaults otherwise)."""
    hubs = busiest(store)
    head, tail = hubs[0]["text"], hubs[1]["text"]
    print(f"busiest eventuality: {head!r} ({hubs[0]['degree']:,} ASER relations); next {tail!r} ({hubs[1]['degree']:,})")
    return {
        "causes-and-effects": {"event": head},
        "aser-neighbourhood": {"event": head},
        "paths-between": {"head": head, "tail": tail},
        "abstractions": {"event": head},
        "ev2-question-schema": {},
        "clomo-argument": {},
    }


def baseline_queries(rev: str) -> dict[str, Any]:
    text = subprocess.run(["git", "show", f"{rev}:graphstore/saved.cypher"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    return parse_queries(text, f"{rev}:graphstore/saved.cypher")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kg", type=Path, required=True,
                    help="an ASER-shaped KG.db (bench.ingest_bench --workdir DIR writes KG_aser_shape_*.db there)")
    ap.add_argument("--store", type=Path, default=None, help="LadybugDB store (default: <temp folder>/eventkg-saved-bench/<kg>.lbug)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a query is stopped")
    ap.add_argument("--baseline", default=None, help="git revision whose saved.cypher to run beside")
    ap.add_argument("--neo4j", action="store_true", help="also on Neo4j, bulk-imported from the same store")
    args = ap.parse_args(argv)
    store_path = args.store or default_workdir("eventkg-saved-bench") / f"{args.kg.stem}.lbug"
    store_path.parent.mkdir(parents=True, exist_ok=True)
    took = ensure_store(args.kg, store_path)
    print(f"store {store_path} ({'reused' if took is None else f'ingested in {took:.1f} s'})")
    old = baseline_queries(args.baseline) if args.baseline else {}
    with open_store(str(store_path)) as store:
        params = cases(store)
        print("LadybugDB")
        run_all(store, params, old, args)
    if args.neo4j:
        on_neo4j(store_path, params, {k: v for k, v in old.items() if k != "paths-between"}, args)


def run_all(store: GraphStore, params: dict[str, dict[str, Any]], old: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"{'query':<22} {'version':<10} {'rows':>7} {'cut':<5} {'cold ms':>9} {'warm ms':>9}")
    for name, p in params.items():
        query = get_saved_query(name, backend=store)
        run = lambda q=query, p=p: (lambda r: (r.rows, bool(r.cut)))(run_saved_query(store, q.name, p))  # noqa: E731
        report(name, "limit", timed(store, run, args.repeat, args.timeout))
        if name in old:
            report(name, args.baseline, timed(store, baseline_run(store, old[name], p), args.repeat, args.timeout))


def on_neo4j(store_path: Path, params: dict[str, dict[str, Any]], old: dict[str, Any], args: argparse.Namespace) -> None:
    """The same queries on a Neo4j server bulk-imported from ``store_path`` (its own temporary home)."""
    import shutil
    import tempfile

    from eventkg.graphstore.neo4j.admin_import import export_neo4j_import
    from eventkg.graphstore.neo4j.server import launch as neo4j_server
    from eventkg.graphstore.neo4j.store import Neo4jStore

    work = Path(tempfile.mkdtemp(prefix="saved-bench-neo4j-"))
    try:
        t0 = time.perf_counter()
        with open_store(str(store_path)) as emb:
            export_neo4j_import(emb, work / "csv")
        server = neo4j_server.start(heap=None, pagecache=None, home=work / "home", import_dir=work / "csv")
        try:
            store = Neo4jStore(server.url)  # constraints and indexes, waited for
            print(f"Neo4j (bulk-imported in {time.perf_counter() - t0:.1f} s, default memory settings)")
            run_all(store, params, old, args)
            store.close()
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def baseline_run(store: GraphStore, query: Any, params: dict[str, Any]) -> Any:
    q = query.for_backend(backend_of(store))
    values = {**q.params, **params}
    return lambda: store.query(q.cypher, values)


def report(name: str, version: str, r: dict[str, Any]) -> None:
    if "error" in r:
        print(f"{name:<22} {version:<10} {'-':>7} {'-':<5} {r['cold_ms']:>9.0f} {'':>9}  stopped: {r['error']}")
        return
    cut = "-" if r["cut"] is None else ("yes" if r["cut"] else "no")
    print(f"{name:<22} {version:<10} {r['rows']:>7,} {cut:<5} {r['cold_ms']:>9.1f} {r['warm_ms']:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
