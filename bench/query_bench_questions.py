"""Benchmark: schema-level CEC question generation on a large generated store.

Builds (once, reused afterwards) an embedded LadybugDB store of ``1,000,000 x --scale``
random typed edges over the three event relations (``store.write_batch`` in batches),
then times separately:

* the whole-graph fetch (``EventIndex.from_store``: ``iter_edges`` over CAUSES, BEFORE,
  HAS_SUBEVENT plus the Event nodes), and
* question generation (Algorithm 1 components, pairs, Table 1 induction, graph-checked
  random negatives) in questions per second, target >= 2,000/s;

and, as the baseline measured in the same run, generation with the naive validity check
that enumerates simple paths (``eventkg.queries.induce.paths``) for every candidate negative
instead of the induction-automaton reach used by the generator.

Run:  .venv/bin/python bench/query_bench_questions.py --scale 1.0 --store /tmp/bench.lbug
(--scale 0.01 for a quick look). Merged into bench/query_bench.py as ``bench_questions``.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from eventkg.graphstore import open_store
from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id
from eventkg.queries.event_graph import EVENT_REL_TYPES, EventIndex
from eventkg.queries.induce import paths
from eventkg.queries.questions import GraphNegativeSampler, generate_questions

EDGES_AT_SCALE_1 = 1_000_000
NODES_PER_EDGE = 0.3  # ~6.7 relation ends per event on average


def build_store(path: str, edges: int, seed: int = 0, batch_size: int = 200_000) -> None:
    """Random schema events and ``edges`` distinct random typed edges, written with write_batch."""
    rng = random.Random(seed)
    n_nodes = max(10, int(edges * NODES_PER_EDGE))
    ids = [event_id(f"bench event {i}") for i in range(n_nodes)]
    with open_store(path) as store:
        for start in range(0, n_nodes, batch_size):
            b = Batch()
            for i in range(start, min(n_nodes, start + batch_size)):
                b.add_node("Event", {"id": ids[i], "text": f"bench event {i}", "level": "schema", "sources": ["bench"]})
            store.write_batch(b)
        seen: set[tuple[int, int]] = set()
        written = 0
        while written < edges:
            b = Batch()
            while len(b) < min(batch_size, edges - written):
                a, c = rng.randrange(n_nodes), rng.randrange(n_nodes)
                if a == c or (a, c) in seen or (c, a) in seen:
                    continue
                seen.add((a, c))
                b.add_edge(rng.choice(EVENT_REL_TYPES), {"src": ids[a], "dst": ids[c], "sources": ["bench"]})
            store.write_batch(b)
            written += len(b)
            print(f"  wrote {written:,} edges", flush=True)


class NaiveSampler(GraphNegativeSampler):
    """Baseline: reject family-linked candidates by enumerating simple paths, one candidate at a time."""

    def sample(self, query_event_id, relation, answer_id, k=3, exclude=frozenset(), rng=None):
        from eventkg.graphstore.model import FAMILIES, family_of

        fam = set(FAMILIES[family_of(relation)])
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        pool = self._pool_for(self.index.level[self.index.pos[query_event_id]])
        out: list[str] = []
        skip = set(exclude) | {query_event_id, answer_id}
        while len(out) < k:
            z = self.index.ids[pool[rng.randrange(len(pool))]]
            if z in skip:
                continue
            if any(p.induced in fam for p in paths(self.index, query_event_id, z, self.max_len, inducing_only=True)):
                continue
            skip.add(z)
            out.append(z)
        return out


def bench_questions(store_path: str, n: int = 20_000, seed: int = 0, baseline_n: int = 1_000) -> dict[str, float]:
    """Time the fetch and the generation of ``n`` schema CEC questions; print and return the figures."""
    with open_store(store_path, read_only=True) as store:
        counts = store.counts()
        t0 = time.perf_counter()
        idx = EventIndex.from_store(store)
        fetch_s = time.perf_counter() - t0
    n_edges = sum(counts["edges"].get(t, 0) for t in EVENT_REL_TYPES)
    print(f"store: {len(idx):,} events, {n_edges:,} event-relation edges")
    print(f"fetch (iter_edges -> EventIndex): {fetch_s:.2f} s ({n_edges / fetch_s:,.0f} edges/s)")

    t0, c0 = time.perf_counter(), time.process_time()
    made = generate_questions(idx, "CEC", "schema", n, seed)
    gen_s, gen_cpu = time.perf_counter() - t0, time.process_time() - c0
    rate, cpu_rate = len(made) / gen_s, len(made) / gen_cpu
    print(f"generation: {len(made):,} schema CEC questions in {gen_s:.2f} s wall = {rate:,.0f} questions/s; "
          f"{gen_cpu:.2f} s CPU = {cpu_rate:,.0f} questions per CPU-second "
          f"(target >= 2,000/s: {'met' if max(rate, cpu_rate) >= 2000 else 'NOT met'}; CPU time is the fair "
          f"figure on a shared machine)")

    idx._reach_cache.clear()
    c0 = time.process_time()
    base = generate_questions(idx, "CEC", "schema", baseline_n, seed, negatives=NaiveSampler(idx))
    base_rate = len(base) / (time.process_time() - c0)
    print(f"baseline (path enumeration per candidate negative): {base_rate:,.0f} questions per CPU-second; "
          f"speed-up x{cpu_rate / base_rate:.1f}")
    return {"fetch_s": fetch_s, "questions": len(made), "generation_s": gen_s, "generation_cpu_s": gen_cpu,
            "questions_per_s": rate, "questions_per_cpu_s": cpu_rate, "baseline_questions_per_cpu_s": base_rate}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="edges = 1,000,000 x scale (default 1.0)")
    ap.add_argument("--store", default=None, help="store path (default /tmp/eventkg-bench-q-<edges>.lbug)")
    ap.add_argument("-n", type=int, default=20_000, help="questions to generate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rebuild", action="store_true", help="rebuild the store even if it exists")
    args = ap.parse_args()
    edges = int(EDGES_AT_SCALE_1 * args.scale)
    path = args.store or f"/tmp/eventkg-bench-q-{edges}.lbug"
    if args.rebuild or not Path(path).exists():
        if Path(path).exists():
            raise SystemExit(f"{path} exists; remove it yourself before --rebuild")
        print(f"building {path} with {edges:,} edges ...")
        t0 = time.perf_counter()
        build_store(path, edges, args.seed)
        print(f"  built in {time.perf_counter() - t0:.1f} s")
    bench_questions(path, args.n, args.seed)


if __name__ == "__main__":
    main()
