
"""ASER ``KG.db`` into Neo4j, two ways, each measured in one call of :func:`child`.

    .venv/bin/python -m bench.neo4j_modes --kg KG.db --mode neo4j-bolt
    .venv/bin/python -m bench.neo4j_modes --kg KG.db --mode neo4j-bulk --workdir DIR

* ``neo4j-bolt``: a Neo4j server with Neo4j's default memory settings (512 MB heap, page
  cache as Neo4j sizes it, default transaction memory limit) from
  ``eventkg.graphstore.neo4j.server.launch``; ``eventkg.ingest_source(store, "aser", ...)`` writes the file through Bolt
  (``Neo4jStore``). ``seconds`` is the ingest alone (the server is up before the clock
  starts); ``rate`` is Relations rows/s, ``edge_rate`` typed edges/s (a row gives 1-3).
  Then, on the same server and in the same run, the baseline: the raw driver writing
  ``RAW_EDGES`` edges between random stored events (any of them, as the ingest's edges are)
  with ``UNWIND $rows MATCH (a:Event {id: ..}) MATCH (b:Event {id: ..}) CREATE`` in
  ``RAW_BATCH``-row transactions (``raw_create_rate``, edges/s, map rows), beside our own
  typed-edge rate; then the same with positional rows (``raw_list_rate``), with two
  sessions writing disjoint node sets side by side (``raw_list_2workers_rate``), and with
  the ends found by internal node id instead of the string-id index
  (``raw_id_rate``: the fastest single-type raw statement found). ``client_cpu`` vs
  ``server_cpu`` says which side the ingest's time went to. The server JVM is warm when the
  baselines run (the ingest paid its JIT warm-up: ~115 µs of server CPU per node on the
  first 96K nodes against ~30 µs warm).
* ``neo4j-bulk``: ``eventkg.ingest_source(store, "aser", ...)`` into a fresh embedded store (``embedded_s``, not part of
  ``seconds``), then the bulk path: ``export neo4j-import`` CSV files (``export_s``),
  ``neo4j-admin database import full`` (``import_s``, as ``neo4j_server.start(import_dir=...)``
  runs it, the initial password written first), the server up (``up_s``), and the
  store's constraints/indexes created on first open (``schema_s``); ``seconds`` is the sum
  of those four: the bulk path end to end.

``rows`` is the file's Relations rows; ``rate`` = rows / seconds. ``cpu`` counts this
process and its children (the importer and the server JVMs). ``server_peak_rss_mb`` is
the server JVM's VmHWM just before it stops.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from bench.common import peak_rss_of
from eventkg import ingest_source

MODES = ("neo4j-bolt", "neo4j-bulk")
RAW_EDGES = 200_000  # edges the raw-driver baseline writes
RAW_BATCH = 10_000  # rows per baseline transaction (one UNWIND statement each)


def _cpu_self_and_children() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _proc_cpu(pid: int) -> float:
    """CPU seconds of a running process (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def relation_rows(kg_path: str) -> int:
    conn = sqlite3.connect(f"file:{kg_path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM Relations").fetchone()[0]
    finally:
        conn.close()


def _counts(store) -> dict[str, int]:
    c = store.counts()
    return {k: v for part in ("nodes", "edges") for k, v in c[part].items() if v}


def _raw_rows(ids: list[str], n_edges: int, as_lists: bool, parts: int) -> list[list]:
    """``parts`` lists of random edges; with ``parts`` > 1 each part's ends lie in its own slice of ``ids``."""
    import random

    rng = random.Random(7)
    width = len(ids) // parts
    out = []
    for k in range(parts):
        own = ids[k * width : (k + 1) * width]
        pairs = [(rng.choice(own), rng.choice(own)) for _ in range(n_edges // parts)]
        out.append([[a, b, 1.0, ["raw"]] if as_lists else {"src": a, "dst": b, "count": 1.0, "sources": ["raw"]}
                    for a, b in pairs])
    return out


def raw_create_rate(server, n_edges: int = RAW_EDGES, batch: int = RAW_BATCH, *, as_lists: bool = False,
                    workers: int = 1, by_id: bool = False) -> float:
    """Edges/s of the raw driver: ``UNWIND $rows MATCH a, b CREATE (a)-[:T {...}]->(b)``.

    The baseline is map rows in one session. ``as_lists`` sends positional rows (as the store
    does); ``workers`` > 1 runs that many sessions in threads, each on its own slice of the
    events, so their transactions lock disjoint nodes (the most parallel Bolt writing can get);
    ``by_id`` (with ``as_lists``) finds the ends by internal node id (NodeByIdSeek).
    """
    from concurrent.futures import ThreadPoolExecutor

    import neo4j

    auth = (server.user, server.password) if server.user else None
    ends = "MATCH (a:Event {id: r[0]}) MATCH (b:Event {id: r[1]}) " if as_lists else \
        "MATCH (a:Event {id: r.src}) MATCH (b:Event {id: r.dst}) "
    if by_id:
        ends = "MATCH (a) WHERE id(a) = r[0] MATCH (b) WHERE id(b) = r[1] "
    props = "{count: r[2], sources: r[3]}" if as_lists else "{count: r.count, sources: r.sources}"
    q = f"UNWIND $rows AS r {ends}CREATE (a)-[:RAW_BASELINE {props}]->(b)"
    with neo4j.GraphDatabase.driver(server.bare_url, auth=auth) as drv:
        with drv.session() as s:
            key = "id(n)" if by_id else "n.id"
            ids = [r["id"] for r in s.run(f"MATCH (n:Event) RETURN {key} AS id")]  # endpoints over the whole graph
        if len(ids) < 2 * workers:
            return float("nan")
        parts = _raw_rows(ids, n_edges, as_lists, workers)

        def write(rows: list) -> None:
            with drv.session() as s:
                for i in range(0, len(rows), batch):
                    s.execute_write(lambda tx, part=rows[i : i + batch]: tx.run(q, rows=part).consume())

        start = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(write, parts))
        return sum(map(len, parts)) / (time.perf_counter() - start)


def _bolt(kg_path: str, workdir: Path, out: dict) -> None:
    from eventkg.graphstore.neo4j.server import launch as neo4j_server
    from eventkg.graphstore.neo4j.store import Neo4jStore

    server = neo4j_server.start(heap=None, pagecache=None, home=None)  # Neo4j's default memory settings
    try:
        store = Neo4jStore(server.url)
        server_cpu0 = _proc_cpu(server.process.pid)
        start, cpu = time.perf_counter(), _cpu_self_and_children()
        report = ingest_source(store, "aser", kg_path)
        out["seconds"] = time.perf_counter() - start
        out["client_cpu"] = _cpu_self_and_children() - cpu
        out["server_cpu"] = _proc_cpu(server.process.pid) - server_cpu0
        out["cpu"] = out["client_cpu"] + out["server_cpu"]
        out["counts"] = _counts(store)
        out["source_rows"] = report.rows
        store.close()
        out["raw_create_rate"] = raw_create_rate(server)
        out["raw_list_rate"] = raw_create_rate(server, as_lists=True)
        out["raw_list_2workers_rate"] = raw_create_rate(server, as_lists=True, workers=2)
        out["raw_id_rate"] = raw_create_rate(server, as_lists=True, by_id=True)
        out["server_peak_rss_mb"] = peak_rss_of(server.process.pid)
    finally:
        server.stop()


def _bulk(kg_path: str, workdir: Path, out: dict) -> None:
    """The bulk path's steps (see the module docstring), each timed into ``out``.

    Measured at 1M/3M (2 cores shared with other engineers' work, 2026-11-23, main's code and
    this branch's alternating, two-lane export + importer on ParallelGC + indexes before
    constraints): at load 4-5, main 46.5 / 33.9 / 52.4 s, this 41.8 / 37.2 / 41.8 s; at load ~3,
    main 42.4 / 34.8 s, this 35.6 / 31.4 s (best: export 3.4 + import 17.0 + up 6.1 + schema
    5.0 = 31.4 s, 95.5K rows/s, 143K edges/s; 26.4 s without the schema step, 170K edges/s).
    The spread is as large as the difference. Alone on a quieter machine: export 4.3 s with two
    lanes (6.7 s with one), importer 14.2 s (~2.2 s JVM start, node stage 4.7 s, relationship
    stage 3.2 s, the rest linking and counts), server up 4.6 s (the same on an empty database:
    JVM and Neo4j start), schema 4.3 s (0.6 s of it on an empty database): ~27 s, ~165K
    edges/s, ~110K rows/s at best. 200K edges/s (22.5 s) is out of reach on 2 cores: the
    importer alone needs ~25-30 s of CPU.
    """
    from eventkg.graphstore import open_store
    from eventkg.graphstore.neo4j.admin_import import export_neo4j_import
    from eventkg.graphstore.neo4j.server import cds as neo4j_cds
    from eventkg.graphstore.neo4j.server import launch as neo4j_server
    from eventkg.graphstore.neo4j.server.jars import cache_dir
    from eventkg.graphstore.neo4j.store import Neo4jStore

    lbug, csv_dir, home = workdir / "bulk.lbug", workdir / "neo4j-import", workdir / "neo4j-home"
    for path in (csv_dir, home):
        shutil.rmtree(path, ignore_errors=True)
    lbug.unlink(missing_ok=True)
    classpath = neo4j_server.prepare()  # the jars, and the JVMs' class-data archives the first time (not timed)
    out["class_data_archives"] = all(  # recorded and handed to the JVMs (not only switched on)
        neo4j_cds.flags(cache_dir(), role, classpath) for role in (neo4j_cds.ADMIN, neo4j_cds.SERVER))
    start = time.perf_counter()
    with open_store(str(lbug)) as emb:
        ingest_source(emb, "aser", kg_path)
    out["embedded_s"] = time.perf_counter() - start

    start, cpu = time.perf_counter(), _cpu_self_and_children()
    with open_store(str(lbug)) as emb:
        export_neo4j_import(emb, csv_dir)
    out["export_s"] = time.perf_counter() - start
    out["csv_mb"] = sum(f.stat().st_size for f in csv_dir.iterdir()) / 1e6
    server = neo4j_server.start(heap=None, pagecache=None, home=home, import_dir=csv_dir)
    try:
        out["import_s"] = server.timings["prepare_s"]  # the importer, the password set beside it
        out["up_s"] = server.timings["up_s"]
        t = time.perf_counter()
        store = Neo4jStore(server.url)  # creates the constraints and indexes, waits for them
        out["schema_s"] = time.perf_counter() - t
        out["seconds"] = time.perf_counter() - start
        out["cpu"] = _cpu_self_and_children() - cpu + _proc_cpu(server.process.pid)
        out["counts"] = _counts(store)
        store.close()
        out["server_peak_rss_mb"] = peak_rss_of(server.process.pid)
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(csv_dir, ignore_errors=True)
        lbug.unlink(missing_ok=True)


def child(mode: str, kg_path: str, workdir: str) -> dict:
    """Run one mode on ``kg_path`` (work files under ``workdir``, removed after); the figures."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    out: dict = {"mode": mode, "rows": relation_rows(kg_path)}
    (_bolt if mode == "neo4j-bolt" else _bulk)(kg_path, work, out)
    out["rate"] = out["rows"] / out["seconds"]
    edges = sum(v for k, v in out["counts"].items() if k.isupper())
    out["edges"] = edges
    out["edge_rate"] = edges / (out.get("ingest_s") or out["seconds"])
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def breakdown(r: dict) -> str:
    """Where a mode's seconds went: the bulk path's four steps, or Bolt's client vs server CPU."""
    if "export_s" in r:
        steps = [(k[:-2], r[k]) for k in ("export_s", "import_s", "up_s", "schema_s")]
        big = max(steps, key=lambda kv: kv[1])[0]
        parts = " + ".join(f"{name} {sec:.1f} s ({sec / r['seconds']:.0%})" for name, sec in steps)
        bare = r["seconds"] - r["schema_s"]
        cds = "on" if r.get("class_data_archives") else "off ($EVENTKG_NEO4J_CDS=0, or not recorded)"
        return (f"bulk: {parts} = {r['seconds']:.1f} s; largest: {big}; CSV {r['csv_mb']:,.0f} MB; JVM archives {cds}; "
                f"with the schema step {r['rows'] / r['seconds']:,.0f} rows/s, {r['edges'] / r['seconds']:,.0f} "
                f"edges/s; without it ({bare:.1f} s) {r['rows'] / bare:,.0f} rows/s, {r['edges'] / bare:,.0f} edges/s")
    return (f"bolt: client CPU {r['client_cpu']:.1f} s (Arrow typing, packing, driver), server CPU "
            f"{r['server_cpu']:.1f} s, in {r['seconds']:.1f} s wall on {os.cpu_count()} cores")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":  # MODE KG WORKDIR, as bench.ingest_bench runs it
        print(json.dumps(child(*sys.argv[2:])), flush=True)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kg", required=True, help="an ASER KG.db (e.g. from tests.support.synthetic.make_aser_kg)")
    ap.add_argument("--mode", choices=MODES, action="append", help="neo4j-bolt and/or neo4j-bulk (default: both)")
    ap.add_argument("--workdir", default=None, help="work folder (default: a temp folder, removed)")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="eventkg-neo4j-bench-"))
    try:
        for mode in args.mode or MODES:
            r = child(mode, args.kg, str(work))
            line = (f"{mode:>10}: {r['rows']:,} relations rows in {r['seconds']:.1f} s = {r['rate']:,.0f} rows/s; "
                    f"{r['edges']:,} edges ({r['edge_rate']:,.0f}/s); CPU {r['cpu']:.1f} s; "
                    f"server peak RSS {r['server_peak_rss_mb']:,.0f} MB")
            print("            " + breakdown(r), flush=True)
            if "raw_create_rate" in r:
                line += f"; raw driver UNWIND CREATE {r['raw_create_rate']:,.0f} edges/s (ours / raw = " \
                        f"{r['edge_rate'] / r['raw_create_rate']:.2f}); positional rows {r['raw_list_rate']:,.0f}/s; " \
                        f"2 sessions on disjoint nodes {r['raw_list_2workers_rate']:,.0f}/s; " \
                        f"ends by node id {r['raw_id_rate']:,.0f}/s"
            print(line, flush=True)
            print(json.dumps(r), flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
