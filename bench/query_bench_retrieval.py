"""Benchmark: embeddings, FAISS vs exact search, negatives index reuse, retrieve latency.

Run:  .venv/bin/python bench/query_bench_retrieval.py [--scale 0.05] [--json out.json]

Every figure is a ratio against a baseline measured in the same run:

1. embedding throughput of :class:`queries.embeddings.Embedder` vs sentence-transformers'
   raw ``encode`` of the same texts (target ratio >= 0.9); ~5k short texts at scale 1;
2. FAISS index as built by :func:`queries.vector_index.build_faiss` vs exact brute force
   (``IndexFlatIP``) on 200k *synthetic clustered* unit vectors of dim 384 (encoding 200k
   texts with MiniLM on a 2-core CPU would take minutes): recall@10 (target >= 0.95) and
   speed-up (target >= 10x), batched and one query at a time;
3. on a generated embedded store of 1,000,000 edges over 200,000 events (texts embedded
   with the real model): the first ``NegativeSampler.sample`` (builds the index) vs the
   second in a fresh state (reads the index from disk; target < 10% of the first);
4. ``retrieve(k=5, hops=2)`` p50/p95 over 200 generated query texts after the index is
   built (target p95 < 50 ms).

``--scale`` multiplies every size (0.05 for a quick run). The store is generated once into
``$EVENTKG_CACHE/bench`` (``--workdir``) and reused; ``--fresh`` regenerates it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import time
from pathlib import Path

import faiss
import numpy as np

from graphstore import open_store
from graphstore.base import Batch, GraphStore
from graphstore.model import event_id
from queries import vector_index as vx
from queries.embeddings import Embedder
from queries.negatives import NegativeSampler
from queries.retrieve import retrieve

VERBS = """accept acquire adjust admire adopt analyse announce answer arrange attend bake borrow build buy
calculate call carry celebrate change check choose clean climb collect compare cook count cover
create cut decorate deliver design discuss draw drink drive eat examine explain fix fold follow
grow hide hire improve inspect install invent join judge kick lend lift listen load lose measure
memorize mend move open order organize paint pack plant play polish prepare print protect pull
push read recycle rent repair replace report rescue review ride sell send sew share sign sing
sort study teach test throw touch translate wash watch wrap write""".split()
NOUNS = """apple bicycle book bottle bread bridge budget cake camera car carpet chair cheese computer
contract cookie costume curtain desk diary dinner document door dress engine envelope essay fence
fish flower fridge garden gift guitar hammer hat house invoice jacket kettle key kitchen ladder
lamp laptop letter map medicine menu mirror motorcycle necklace newspaper novel onion orchestra
oven painting passport pasta phone piano pillow plane poem pot printer puzzle radio recipe report
ring robot roof rope salad sandwich scarf sculpture shelf shirt shoe sofa song soup speech stamp
statue suitcase table tent ticket tomato tool toy tractor train tree umbrella vase violin wallet
watch window""".split()
MODIFIERS = [
    "", "at home", "in the morning", "with friends", "for the party", "at work", "in the garden",
    "before dinner", "after school", "for a neighbour", "on the weekend", "in a hurry", "carefully",
    "for the first time", "again", "with a colleague", "at night", "in the city", "for charity",
    "during the holiday", "with the family", "at the market", "in the rain", "for an exam",
    "alone", "before the trip", "after the meeting", "for the children", "in the office", "slowly",
]
STORED = ("CAUSES", "BEFORE", "HAS_SUBEVENT")


def event_text(i: int) -> str:
    """Event i: events with nearby numbers share their object and modifier (one scenario)."""
    v, rest = i % len(VERBS), i // len(VERBS)
    n, m = rest % len(NOUNS), (rest // len(NOUNS)) % len(MODIFIERS)
    rep = rest // (len(NOUNS) * len(MODIFIERS))
    text = f"{VERBS[v]} the {NOUNS[n]} {MODIFIERS[m]}".strip()
    return text if rep == 0 else f"{text} ({rep + 1})"


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


# -- 1. embedding throughput ---------------------------------------------------------------------


def bench_embeddings(n: int) -> dict:
    rng = random.Random(1)
    texts = [event_text(rng.randrange(10**6)) for _ in range(n)]
    emb = Embedder()
    raw = emb.st  # the same loaded SentenceTransformer
    emb.encode(texts[:64])  # warm-up (threads, allocator)
    raw_times, ours_times = [], []
    for _ in range(2):  # interleaved, best of two, so drift on a shared machine cancels
        _, t = timed(raw.encode, texts, batch_size=emb.batch_size, normalize_embeddings=True, convert_to_numpy=True)
        raw_times.append(t)
        _, t = timed(emb.encode, texts)
        ours_times.append(t)
    raw_rate, ours_rate = n / min(raw_times), n / min(ours_times)
    return {"texts": n, "raw_texts_per_s": round(raw_rate), "ours_texts_per_s": round(ours_rate),
            "ratio": round(ours_rate / raw_rate, 3)}


# -- 2. FAISS vs exact ---------------------------------------------------------------------------


def clustered(n: int, d: int, centres: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, d)).astype(np.float32)
    x = c[rng.integers(0, centres, n)] + rng.normal(scale=1.0, size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def bench_faiss(n: int, queries: int = 1000, d: int = 384) -> dict:
    data = clustered(n + queries, d, centres=max(20, n // 50))
    x, q = data[:n], data[n:]
    index, build_s = timed(vx.build_faiss, x)
    index, params = index
    exact = faiss.IndexFlatIP(d)
    exact.add(x)
    (_, truth), exact_s = timed(exact.search, q, 10)
    (_, got), ann_s = timed(index.search, q, 10)
    one = q[:100]
    t = time.perf_counter()
    for row in one:
        exact.search(row[None, :], 10)
    exact_1 = (time.perf_counter() - t) / len(one)
    t = time.perf_counter()
    for row in one:
        index.search(row[None, :], 10)
    ann_1 = (time.perf_counter() - t) / len(one)
    return {"vectors": n, "dim": d, "data": "synthetic clustered unit vectors", "index": params,
            "build_s": round(build_s, 2), "recall@10": round(vx.recall_at_k(got, truth), 4),
            "batch_speedup": round(exact_s / ann_s, 1), "single_query_ms_exact": round(exact_1 * 1e3, 3),
            "single_query_ms_index": round(ann_1 * 1e3, 3), "single_query_speedup": round(exact_1 / ann_1, 1)}


# -- 3/4. the generated store --------------------------------------------------------------------


def generate_store(path: Path, events: int, edges: int, block: int = 25, seed: int = 7) -> dict:
    """``events`` schema events in scenario blocks; ``edges`` typed edges, 95% inside a block."""
    rng = random.Random(seed)
    ids = [event_id(event_text(i)) for i in range(events)]
    t0 = time.perf_counter()
    with open_store(str(path)) as store:
        nodes = [{"id": ids[i], "text": event_text(i), "level": "schema", "sources": ["bench"]} for i in range(events)]
        for i in range(0, events, 100_000):
            store.write_batch(Batch(nodes={"Event": nodes[i : i + 100_000]}))
        seen: set[tuple[int, int, int]] = set()
        rows: dict[str, list[dict]] = {t: [] for t in STORED}
        while len(seen) < edges:
            a = rng.randrange(events)
            if rng.random() < 0.95:
                base = a - a % block
                b = base + rng.randrange(min(block, events - base))
            else:
                b = rng.randrange(events)
            t = rng.randrange(3)
            lo, hi = min(a, b), max(a, b)  # edges point forward: each block is a DAG
            if lo == hi or (lo, hi, t) in seen:
                continue
            seen.add((lo, hi, t))
            rows[STORED[t]].append({"src": ids[lo], "dst": ids[hi], "sources": ["bench"]})
        for t, r in rows.items():
            for i in range(0, len(r), 200_000):
                store.write_batch(Batch(edges={t: r[i : i + 200_000]}))
        counts = store.counts()
    return {"events": counts["nodes"]["Event"], "edges": sum(counts["edges"][t] for t in STORED),
            "write_s": round(time.perf_counter() - t0, 1)}


def bench_negatives(store: GraphStore, events: int) -> dict:
    vx.clear_index(store)
    rng = random.Random(3)
    q = rng.randrange(events - 30)
    qid, aid = event_id(event_text(q)), event_id(event_text(q + 1))
    sampler = NegativeSampler(store, level="schema")
    first, first_s = timed(sampler.sample, qid, "Causes", aid, k=3)
    vi = sampler.index_for(aid)
    vx.forget_loaded()  # a second run starts with nothing in memory, as a new process would
    second_sampler = NegativeSampler(store, level="schema")
    second, second_s = timed(second_sampler.sample, qid, "Causes", aid, k=3)
    assert second == first and not second_sampler.index_for(aid).built
    return {"indexed": len(vi), "index": vi.manifest["params"], "encode_s": vi.manifest["encode_seconds"],
            "first_s": round(first_s, 2), "second_s": round(second_s, 3), "second_over_first": round(second_s / first_s, 4),
            "example": {"query": event_text(q), "answer": event_text(q + 1),
                        "negatives": [store.get_nodes("Event", [n])[n]["text"] for n in first]}}


def bench_retrieve(store: GraphStore, runs: int) -> dict:
    rng = random.Random(5)
    texts = [f"someone needs to {rng.choice(VERBS)} a {rng.choice(NOUNS)} {rng.choice(MODIFIERS)}".strip() for _ in range(runs + 10)]
    for t in texts[:10]:  # warm-up: model, index and engine caches
        retrieve(store, t, k=5, hops=2, level="schema")
    times, sizes = [], []
    for t in texts[10:]:
        sub, s = timed(retrieve, store, t, k=5, hops=2, level="schema")
        times.append(s * 1e3)
        sizes.append((sub.graph.number_of_nodes(), sub.graph.number_of_edges()))
    times.sort()
    p95 = times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)]
    return {"runs": runs, "p50_ms": round(statistics.median(times), 1), "p95_ms": round(p95, 1),
            "mean_nodes": round(statistics.mean(n for n, _ in sizes), 1),
            "mean_edges": round(statistics.mean(e for _, e in sizes), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size (0.05 for a quick run)")
    ap.add_argument("--workdir", type=Path, default=vx.cache_root() / "bench", help="where the generated store lives")
    ap.add_argument("--fresh", action="store_true", help="regenerate the store")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: embed,faiss,negatives,retrieve")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    s = args.scale
    out: dict = {"scale": s}
    if "embed" not in skip:
        out["embeddings"] = bench_embeddings(max(500, int(5000 * s)))
        print("embeddings:", json.dumps(out["embeddings"]), flush=True)
    if "faiss" not in skip:
        out["faiss"] = bench_faiss(max(60_000, int(200_000 * s)))  # >= 60k so the IVF path is measured
        print("faiss:", json.dumps(out["faiss"]), flush=True)
    if not {"negatives", "retrieve"} <= skip:
        events, edges = max(2_000, int(200_000 * s)), max(10_000, int(1_000_000 * s))
        path = args.workdir / f"retrieval-{events}-{edges}.lbug"
        if args.fresh and path.exists():
            path.unlink()
            shutil.rmtree(str(path) + ".faiss", ignore_errors=True)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            out["store"] = generate_store(path, events, edges)
            print("store:", json.dumps(out["store"]), flush=True)
        with open_store(str(path), read_only=True) as store:
            if "negatives" not in skip:
                out["negatives"] = bench_negatives(store, events)
                print("negatives:", json.dumps(out["negatives"]), flush=True)
            if "retrieve" not in skip:
                out["retrieve"] = bench_retrieve(store, runs=200)
                print("retrieve:", json.dumps(out["retrieve"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
