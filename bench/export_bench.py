
"""Export speed and peak memory: streamed RDF and GraphML beside their baselines, in one run.

    .venv/bin/python -m bench.export_bench                # 20,000 events
    .venv/bin/python -m bench.export_bench --events 100000 --relations 200000

A synthetic ASER ``KG.db`` (``tests/support/synthetic.py``) is ingested into a fresh embedded store;
each mode then runs in its own process, so its peak RSS (``ru_maxrss``) is its own:

* ``read``: every node and edge typed through ``export_rows`` and dropped: the floor any
  exporter pays to read the store.
* ``rdf-whole-nt``: the unstreamed baseline: one rdflib Graph of the whole store, then one
  ``serialize`` (what ``export_rdf`` avoids).
* ``nt`` / ``ttl``: ``export_rdf`` (batches of ``PAGE_ROWS`` rows).
* ``graphml``: ``export_graphml`` (networkx holds the whole graph).

Printed: seconds, triples (or rows) per second, peak RSS in MB and the ratios to the
baselines. The streamed exports should keep peak RSS near ``read`` whatever the store's size,
where the whole-graph baseline grows with it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT
from eventkg import ingest_source

MODES = ("read", "rdf-whole-nt", "nt", "ttl", "graphml")


def run_mode(mode: str, store_url: str, out_dir: Path) -> dict:
    """One mode in this process; returns seconds, items written and peak RSS (MB)."""
    from eventkg.graphstore import open_store
    from eventkg.queries.export.graphml import export_graphml
    from eventkg.queries.export.rdf import _add_edge, _add_node, _graph, export_rdf
    from eventkg.queries.export.rows import edge_rows, node_rows

    with open_store(store_url, read_only=True) as store:
        t0 = time.perf_counter()
        if mode == "read":
            items = sum(1 for _ in node_rows(store)) + sum(1 for _ in edge_rows(store))
        elif mode == "rdf-whole-nt":
            graph = _graph()
            for label, row in node_rows(store):
                _add_node(graph, label, row)
            for rtype, row in edge_rows(store):
                _add_edge(graph, rtype, row)
            graph.serialize(out_dir / "whole.nt", format="nt", encoding="utf-8")
            items = len(graph)
        elif mode in ("nt", "ttl"):
            items = export_rdf(store, out_dir / f"streamed.{mode}")["triples"]
        else:
            counts = export_graphml(store, out_dir / "graph.graphml")
            items = sum(counts["nodes"].values()) + sum(counts["edges"].values())
        seconds = time.perf_counter() - t0
    return {"mode": mode, "seconds": seconds, "items": items,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def build_store(workdir: Path, events: int, relations: int) -> tuple[str, dict]:
    from eventkg.graphstore import open_store
    from tests.support.synthetic import make_aser_kg

    kg = make_aser_kg(workdir / "KG.db", events, relations)
    url = str(workdir / "bench.lbug")
    with open_store(url) as store:
        ingest_source(store, "aser", kg)
        counts = store.counts()
    return url, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--relations", type=int, default=40_000)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.store, Path(args.out))))
        return
    with tempfile.TemporaryDirectory(prefix="eventkg-export-bench-") as tmp:
        url, counts = build_store(Path(tmp), args.events, args.relations)
        nodes, edges = sum(counts["nodes"].values()), sum(counts["edges"].values())
        print(f"store: {nodes:,} nodes, {edges:,} edges (synthetic ASER, {args.events:,} eventualities)")
        results = {}
        for mode in MODES:
            proc = subprocess.run([sys.executable, "-m", "bench.export_bench", "--mode", mode, "--store", url,
                                   "--out", tmp], capture_output=True, text=True, check=True, cwd=ROOT)
            results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    read, whole = results["read"], results["rdf-whole-nt"]
    print(f"{'mode':<14}{'seconds':>9}{'items/s':>12}{'peak MB':>9}{'x read time':>13}{'x whole-graph MB':>18}")
    for mode, r in results.items():
        print(f"{mode:<14}{r['seconds']:>9.2f}{r['items'] / r['seconds']:>12,.0f}{r['peak_mb']:>9.0f}"
              f"{r['seconds'] / read['seconds']:>13.1f}{r['peak_mb'] / whole['peak_mb']:>18.2f}")
    print("items: triples for the RDF modes, nodes + edges for read and graphml")


if __name__ == "__main__":
    main()
