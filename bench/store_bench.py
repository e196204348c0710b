"""Upsert throughput of eventkg's stores beside the raw engines, on the same rows, in one run.

    .venv/bin/python -m bench.store_bench                 # 1,000,000 CAUSES edges, both backends
    .venv/bin/python -m bench.store_bench --edges 100000 --backends ladybug

Raw baselines:
* LadybugDB: one ``COPY CAUSES FROM <arrow table>`` of the rows into a fresh database with
  the engine's default settings, then ``CHECKPOINT`` (the engine's fastest path; no
  idempotency, a second run would duplicate every edge). Ours is timed to its checkpoint too.
* Neo4j: ``UNWIND $rows MATCH (a:Event {id}) MATCH (b:Event {id}) CREATE (a)-[:CAUSES]->(b)``
  in 10,000-row transactions into a fresh database with the same constraint.
Ours: ``store.upsert_edges`` in batches (idempotent: merge with what exists, union sources).
Both sides write the same nodes first (not timed). Targets: embedded >= 0.5 x raw COPY;
Neo4j >= 50,000 edges/s. A second upsert of the same edges must leave the count unchanged.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import ladybug
import pyarrow as pa

from eventkg.graphstore import Batch, open_store
from eventkg.graphstore.model import event_id


def make_rows(n_edges: int, seed: int = 7) -> tuple[list[dict], list[dict]]:
    """~n_edges/5 events and n_edges distinct random (src, dst) CAUSES edges."""
    n_nodes = max(10, n_edges // 5)
    ids = [event_id(f"synthetic event {i}") for i in range(n_nodes)]
    nodes = [{"id": ids[i], "text": f"synthetic event {i}", "level": "schema", "sources": ["bench"]} for i in range(n_nodes)]
    rng = random.Random(seed)
    seen: set[tuple[int, int]] = set()
    while len(seen) < n_edges:
        s, d = rng.randrange(n_nodes), rng.randrange(n_nodes)
        if s != d:
            seen.add((s, d))
    edges = [{"src": ids[s], "dst": ids[d], "sources": ["bench"], "weight": 1.0} for s, d in seen]
    return nodes, edges


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def in_batches(store, rows: list[dict], batch: int) -> None:
    for i in range(0, len(rows), batch):
        store.upsert_edges("CAUSES", rows[i : i + batch])


def bench_ladybug(nodes: list[dict], edges: list[dict], batch: int, workdir: Path) -> dict:
    # raw: the engine's own COPY of the same rows
    # raw: a plain ladybug database with the engine's default settings and our table DDL
    raw_store = open_store(str(workdir / "raw.lbug"))
    raw_store.upsert_nodes("Event", nodes)
    raw_store.close()
    db = ladybug.Database(str(workdir / "raw.lbug"))
    conn = ladybug.Connection(db)
    arrow = pa.table(  # noqa: F841 - read by name from this frame by ladybug's COPY
        {
            "src": pa.array([e["src"] for e in edges]),
            "dst": pa.array([e["dst"] for e in edges]),
            "sources": pa.array([e["sources"] for e in edges], type=pa.list_(pa.string())),
            "weight": pa.array([e["weight"] for e in edges], type=pa.float64()),
        }
    )
    # both sides are timed until the rows are folded into the database file (CHECKPOINT)
    raw_s = timed(lambda: (conn.execute("COPY CAUSES FROM arrow"), conn.execute("CHECKPOINT")))
    raw_count = conn.execute("MATCH ()-[e:CAUSES]->() RETURN count(*)").get_next()[0]
    conn.close()
    db.close()

    results = {"raw_s": raw_s}

    def write_table() -> None:  # the same Arrow table the raw COPY read, through our upsert
        b = Batch()
        b.add_edge_table("CAUSES", arrow)
        store.write_batch(b)

    variants = {
        "table": write_table,
        "bulk": lambda: in_batches(store, edges, len(edges)),
        "batched": lambda: in_batches(store, edges, batch),
    }
    for name, write in variants.items():
        store = open_store(str(workdir / f"ours-{name}.lbug"))
        store.upsert_nodes("Event", nodes)
        store.checkpoint()
        # the timed part includes folding the WAL into the file, as the raw COPY's auto-commit does
        results[f"{name}_s"] = timed(lambda: (write(), store.checkpoint()))  # noqa: B023
        results[f"{name}_again_s"] = timed(lambda: (write(), store.checkpoint()))  # noqa: B023
        results[f"{name}_count"] = store.counts()["edges"]["CAUSES"]
        store.close()
    assert raw_count == len(edges), raw_count
    return results


def bench_neo4j(nodes: list[dict], edges: list[dict], batch: int) -> dict:
    from eventkg.graphstore.neo4j.server.launch import start

    server = start(heap="2g", pagecache="1g")
    try:
        store = open_store(server.url)
        store.upsert_nodes("Event", nodes)
        driver = store._driver  # the raw baseline uses the same connection

        def raw() -> None:
            with driver.session() as session:
                for i in range(0, len(edges), 10_000):
                    session.execute_write(
                        lambda tx, rows: tx.run(
                            "UNWIND $rows AS r MATCH (a:Event {id: r.src}) MATCH (b:Event {id: r.dst}) "
                            "CREATE (a)-[:CAUSES {sources: r.sources, weight: r.weight}]->(b)",
                            rows=rows,
                        ).consume(),
                        edges[i : i + 10_000],
                    )

        raw_s = timed(raw)
        raw_count = store.counts()["edges"]["CAUSES"]
        store.clear()
        store.upsert_nodes("Event", nodes)
        ours_s = timed(lambda: in_batches(store, edges, batch))
        again_s = timed(lambda: in_batches(store, edges, batch))
        count = store.counts()["edges"]["CAUSES"]
        store.close()
    finally:
        server.stop()
    assert raw_count == len(edges), raw_count
    return {"raw_s": raw_s, "ours_s": ours_s, "ours_again_s": again_s, "ours_count": count}


def report(name: str, n: int, r: dict, variants: dict[str, str]) -> dict[str, float]:
    """Print one line per variant; return each variant's ratio to the raw engine."""
    raw_rate = n / r["raw_s"]
    print(f"{name}: raw engine {raw_rate:,.0f} edges/s ({r['raw_s']:.2f} s)")
    ratios = {}
    for key, label in variants.items():
        rate = n / r[f"{key}_s"]
        ratios[key] = rate / raw_rate
        print(f"  eventkg upsert, {label}: {rate:,.0f} edges/s ({r[f'{key}_s']:.2f} s), ratio {ratios[key]:.2f}; "
              f"re-upsert of the same edges {r[f'{key}_again_s']:.2f} s, edges after: {r[f'{key}_count']:,} (expected {n:,})")
    return ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=250_000, help="rows per upsert call (one transaction each)")
    ap.add_argument("--backends", default="ladybug,neo4j")
    args = ap.parse_args()
    nodes, edges = make_rows(args.edges)
    print(f"{len(nodes):,} events, {len(edges):,} CAUSES edges, batches of {args.batch:,}")
    backends = args.backends.split(",")
    with tempfile.TemporaryDirectory(prefix="eventkg-bench-") as tmp:
        if "ladybug" in backends:
            r = bench_ladybug(nodes, edges, args.batch, Path(tmp))
            ratios = report(
                "LadybugDB",
                len(edges),
                r,
                {
                    "table": "one Arrow table (the raw COPY's input)",
                    "bulk": "one call of row dicts",
                    "batched": f"row dicts in batches of {args.batch:,}",
                },
            )
            best = max(ratios.values())
            print(f"  target: ratio >= 0.5 -> {'MET' if best >= 0.5 else 'MISSED'} (best {best:.2f})")
    if "neo4j" in backends:
        r = bench_neo4j(nodes, edges, min(args.batch, 50_000))
        report("Neo4j", len(edges), r, {"ours": f"batches of {min(args.batch, 50_000):,}"})
        print(f"  target: >= 50,000 edges/s -> {'MET' if len(edges) / r['ours_s'] >= 50_000 else 'MISSED'}")


if __name__ == "__main__":
    main()
