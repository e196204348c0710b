"""Benchmark: index build rate, ANN search vs exact, retrieve latency on a 1M/3M ASER-shaped store.

Run (heavy: ~2 GB, minutes; on a shared machine under the bench lock)::

    .venv/bin/python -m bench.query_bench_retrieval [--workdir DIR] [--json out.json]

Every figure sits beside a baseline measured in the same run:

1. **build**: reading the texts of all events of the store (columnar Arrow read vs the
   previous ``iter_nodes`` loop), and embedding a sample of ``--sample`` texts (10K) with
   the resumable chunked build (:func:`eventkg.queries.vectors.encode.encode_chunks`, chunks saved)
   vs the previous loop (``Embedder.encode`` on chunks of 4,096, batch 256, default torch
   threads), interleaved, best of two rounds each (other jobs on a shared machine make single
   timings drift). The hours for all the store's events are **extrapolated** from the sample rate.
2. **ann**: 1M unit vectors of dim 384, 2,000 held-out queries, top 10: exact search
   (``IndexFlatIP``, batched) vs the index :func:`eventkg.queries.vectors.faiss_build.build_faiss` builds
   (kind ``--index-kind``, parameters calibrated at build time), QPS and recall@10. Data:
   ``lowdim`` = a mixture of 2,000 clusters in a 64-dimensional subspace plus isotropic
   noise (sentence embeddings have a low intrinsic dimension), and ``uniform`` = uniformly
   random unit vectors, the worst case for any ANN index (no structure to exploit).
3. **retrieve**: ``retrieve(k=5, hops=2)`` p50/p95 on the store ``tests/support/synthetic.py``
   generates (1M eventualities, 3M relations) ingested with ``ingest_source(store, "aser", path, map_events=True)``,
   plus ``--hubs`` hub events with ``--hub-degree`` (12K) CAUSES/BEFORE neighbours each,
   written by this script (the synthetic generator has no hubs). Half the queries are
   texts of hubs or hub neighbours, so the seeds sit on hubs. The store's vector index is
   built through the real build path (``open_index``, kind ``auto``) but with a stand-in
   encoder (:class:`WordsEmbedder`: random word vectors summed), because embedding 1M
   texts with MiniLM on 2 CPU cores takes ~35 minutes (figure 1). The real model's single-query encode latency is measured separately and added
   for the end-to-end p95. Baseline: the previous neighbourhood read (``store.neighbourhood``
   with the per-hop limit 50, uncapped per node) on the same queries.

The generated files live in ``--workdir`` (default: ``eventkg-query-scale`` in the temporary folder) and are
reused; ``--fresh`` regenerates them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

from bench.common import default_workdir
from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.base import Batch, GraphStore
from eventkg.queries.graph import adjacency, columnar
from eventkg.queries.retrieval.retrieve import retrieve
from eventkg.queries.vectors import files as vector_files
from eventkg.queries.vectors import index as vx
from eventkg.queries.vectors.embeddings import Embedder
from eventkg.queries.vectors.encode import encode_chunks
from eventkg.queries.vectors.faiss_build import build_faiss, recall_at_k, set_search_params

D = 384


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, math.ceil(q * len(v)) - 1)]


# -- 1. build ---------------------------------------------------------------------------------


def bench_build(store: GraphStore, sample: int, rounds: int = 2) -> dict:
    table, new_read = timed(columnar.event_texts, store, "schema")

    def old_read():
        ids, texts = [], []
        for row in store.iter_nodes("Event"):
            if row.get("level") == "schema" and row.get("text"):
                ids.append(row["id"])
                texts.append(row["text"])
        return texts

    old_texts, old_read_s = timed(old_read)
    assert len(old_texts) == table.num_rows
    rng = random.Random(1)
    texts = [table.column("text")[i].as_py() for i in sorted(rng.sample(range(table.num_rows), sample))]
    old = Embedder(encode_batch=256, device="cpu")
    new = Embedder(device="auto")
    new.encode(texts[:256])  # load the model once, warm both paths' allocator
    old.encode(texts[:256])

    def old_build():
        return np.concatenate([old.encode(texts[i : i + 4096]) for i in range(0, len(texts), 4096)])

    def new_build():
        with tempfile.TemporaryDirectory() as work:
            plan = {"format": vector_files.FORMAT, "model": new.name, "dim": new.dim, "fingerprint": {}, "chunk": vx.ENCODE_CHUNK}
            return encode_chunks(texts, Path(work) / "b", plan, new, "sample", None, None)

    old_times, new_times = [], []
    for _ in range(rounds):  # interleaved, best of each: load from others on a shared machine drifts
        a, t = timed(old_build)
        old_times.append(t)
        b, t = timed(new_build)
        new_times.append(t)
    old_s, new_s = min(old_times), min(new_times)
    n = table.num_rows
    return {
        "events": n, "sample": sample, "device": new.device, "batch_size": new.encode_batch,
        "read_all_texts_s": {"columnar": round(new_read, 2), "previous_iter_nodes": round(old_read_s, 2)},
        "rounds": rounds, "texts_per_s": {"chunked_resumable": round(sample / new_s), "previous": round(sample / old_s)},
        "all_rounds_s": {"chunked_resumable": [round(t, 1) for t in new_times], "previous": [round(t, 1) for t in old_times]},
        "extrapolated_hours_all_events": {"chunked_resumable": round(n / (sample / new_s) / 3600, 2),
                                          "previous": round(n / (sample / old_s) / 3600, 2)},
        "min_cosine_new_vs_previous": round(float(np.min(np.sum(a * b, axis=1))), 5),
    }


# -- 2. ANN -----------------------------------------------------------------------------------


def lowdim(m: int, rng: np.random.Generator, latent: int = 64, centres: int = 2000, noise: float = 0.15) -> np.ndarray:
    basis, _ = np.linalg.qr(rng.normal(size=(D, latent)).astype(np.float32))
    c = rng.normal(size=(centres, latent)).astype(np.float32)
    spread = rng.uniform(0.3, 1.0, centres).astype(np.float32)
    x = np.empty((m, D), np.float32)
    lab = rng.integers(0, centres, m)
    for i in range(0, m, 100_000):
        j = slice(i, min(m, i + 100_000))
        k = j.stop - j.start
        z = c[lab[j]] + spread[lab[j], None] * rng.normal(size=(k, latent)).astype(np.float32)
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        x[j] = z @ basis.T + noise / math.sqrt(D) * rng.normal(size=(k, D)).astype(np.float32)
    faiss.normalize_L2(x)
    return x


def bench_ann(n: int, data: str, kind: str | None, queries: int = 2000) -> dict:
    rng = np.random.default_rng(0)
    if data == "uniform":
        allv = rng.normal(size=(n + queries, D)).astype(np.float32)
        faiss.normalize_L2(allv)
    else:
        allv = lowdim(n + queries, rng)
    x, q = allv[:n], allv[n:]
    exact = faiss.IndexFlatIP(D)
    exact.add(x)
    (_, truth), exact_s = timed(exact.search, q, 10)
    del exact
    (index, params), build_s = timed(build_faiss, x, kind=kind)
    set_search_params(index, {"params": params})
    (_, got), ann_s = timed(index.search, q, 10)
    return {"vectors": n, "data": data, "index": params, "build_s": round(build_s, 1),
            "exact_qps": round(queries / exact_s), "index_qps": round(queries / ann_s),
            "recall@10": round(recall_at_k(got, truth), 4), "speedup": round(exact_s / ann_s, 1)}


# -- 3. retrieve on the 1M/3M store --------------------------------------------------------------


def _unit(key: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(D, dtype=np.float32)


class WordsEmbedder(Embedder):
    """A stand-in encoder with the structure of a real one, ~100x faster than MiniLM on CPU.

    A text's vector is the normalised sum of a random vector per word (seeded by the word)
    and a smaller one for the whole text: texts that share words are near each other, as
    with a sentence encoder (the synthetic texts share their ``verbN`` and ``objectM``).
    """

    def __init__(self) -> None:
        super().__init__(device="cpu")
        self.name = "bench-words-384"
        self._words: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return D

    def _word(self, w: str) -> np.ndarray:
        v = self._words.get(w)
        if v is None:
            v = self._words[w] = _unit(w)
        return v

    def encode(self, texts, show_progress: bool = False) -> np.ndarray:
        out = np.empty((len(texts), D), np.float32)
        for i, t in enumerate(texts):
            words = t.split()
            shared = [self._word(w) for w in words if not (w[0] == "w" and w[1:].isdigit())]  # w<i> is unique
            out[i] = (sum(shared) if shared else 0) + 0.7 * _unit(t)
        faiss.normalize_L2(out)
        self.encoded += len(texts)
        return out


def make_store(workdir: Path, events: int, relations: int, hubs: int, hub_degree: int, fresh: bool) -> tuple[Path, dict]:
    from tests.support.synthetic import make_aser_kg

    kg = workdir / f"kg-{events}-{relations}.db"
    path = workdir / f"aser-{events}-{relations}-hubs{hubs}x{hub_degree}.lbug"
    info: dict = {"path": str(path)}
    if fresh:
        path.unlink(missing_ok=True)
        kg.unlink(missing_ok=True)
    if path.exists():
        return path, info
    workdir.mkdir(parents=True, exist_ok=True)
    if not kg.exists():
        _, info["generate_s"] = timed(make_aser_kg, kg, events, relations)
    t = time.perf_counter()
    with open_store(str(path)) as store:
        ingest_source(store, "aser", kg, map_events=True)
        ids = columnar.event_texts(store).column("id").to_pylist()
        rng = random.Random(5)
        hub_ids = rng.sample(ids, hubs)
        for h in hub_ids:
            others = rng.sample(ids, hub_degree)
            half = hub_degree // 2
            store.write_batch(Batch(edges={
                "CAUSES": [{"src": h, "dst": o, "weight": float(rng.randint(1, 50)), "sources": ["bench"]} for o in others[:half]],
                "BEFORE": [{"src": o, "dst": h, "weight": float(rng.randint(1, 50)), "sources": ["bench"]} for o in others[half:]],
            }))
    info["ingest_and_hubs_s"] = round(time.perf_counter() - t, 1)
    return path, info


def bench_retrieve(path: Path, runs: int, hubs: int) -> dict:
    with open_store(str(path), read_only=True) as store:
        counts = store.counts()
        emb = WordsEmbedder()
        (vi), index_s = timed(vx.open_index, store, level="schema", embedder=emb)
        folder = vector_files.index_dir(store)
        (_), adj_s = timed(adjacency.open_adjacency, store, folder, vx.event_count(store), ["CAUSES"])
        adj = adjacency._LOADED[str(folder)][0]
        deg = np.diff(adj.indptr)
        hub_pos = np.argsort(-deg)[:hubs]
        rng = random.Random(9)
        table = columnar.event_texts(store, "schema")
        texts_col = table.column("text")
        id_to_text = dict(zip(table.column("id").to_pylist(), texts_col.to_pylist(), strict=True))
        queries = []
        for i in range(runs):
            if i % 2 == 0:  # a hub, or a neighbour of one
                h = int(hub_pos[rng.randrange(len(hub_pos))])
                p = h if rng.random() < 0.5 else int(adj.nbr[adj.indptr[h] + rng.randrange(deg[h])])
                queries.append(id_to_text[adj.id_of(p)])
            else:
                queries.append(texts_col[rng.randrange(len(texts_col))].as_py())
        for t in queries[:5]:
            retrieve(store, t, k=5, hops=2, level="schema", index=vi)
        times, sizes, cut = [], [], 0
        for t in queries:
            sub, s = timed(retrieve, store, t, k=5, hops=2, level="schema", index=vi)
            times.append(s * 1e3)
            sizes.append(sub.graph.number_of_nodes())
            cut += bool(sub.truncated)
        base_times = []
        for t in queries[: max(10, runs // 4)]:  # the previous read: uncapped per node, limit 50 per hop
            def old(text=t):
                seeds = [i for i, _ in vi.search_text(text, 5)]
                return store.neighbourhood(seeds, hops=2, rel_types=["CAUSES", "BEFORE", "HAS_SUBEVENT", "HAS_TYPE"],
                                           direction="both", limit=50, induced=False)
            _, s = timed(old)
            base_times.append(s * 1e3)
    real = Embedder()
    real.encode(["warm up"])
    enc = [timed(real.encode, [t])[1] * 1e3 for t in queries[:100]]
    return {
        "store": {"events": counts["nodes"]["Event"], "edges": sum(counts["edges"].values()),
                  "max_degree_event_relations": int(deg.max())},
        "index_build_s_stand_in_encoder": round(index_s, 1), "index": vi.manifest["params"],
        "adjacency_build_s": round(adj_s, 1), "adjacency_mb": round(adjacency.file_size(folder) / 2**20),
        "runs": runs, "queries_on_hubs": runs // 2, "results_truncated": cut,
        "p50_ms": round(statistics.median(times), 1), "p95_ms": round(pct(times, 0.95), 1),
        "mean_nodes": round(statistics.mean(sizes), 1),
        "model_query_encode_p95_ms": round(pct(enc, 0.95), 1),
        "end_to_end_p95_ms_upper_bound": round(pct(times, 0.95) + pct(enc, 0.95), 1),
        "previous_neighbourhood_read": {"runs": len(base_times), "p50_ms": round(statistics.median(base_times), 1),
                                        "p95_ms": round(pct(base_times, 0.95), 1)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=default_workdir("eventkg-query-scale"))
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--relations", type=int, default=3_000_000)
    ap.add_argument("--hubs", type=int, default=20)
    ap.add_argument("--hub-degree", type=int, default=12_000)
    ap.add_argument("--sample", type=int, default=10_000, help="texts embedded per round to measure the build rate")
    ap.add_argument("--vectors", type=int, default=1_000_000, help="vectors for the ANN part")
    ap.add_argument("--ann-data", default="lowdim,uniform")
    ap.add_argument("--index-kind", default=None, help="flat, ivf, hnsw (default: $EVENTKG_INDEX or auto)")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--fresh", action="store_true", help="regenerate the store")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: build,ann,retrieve")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    out: dict = {}
    path = None
    if not {"build", "retrieve"} <= skip:
        path, out["store"] = make_store(args.workdir, args.events, args.relations, args.hubs, args.hub_degree, args.fresh)
        print("store:", json.dumps(out["store"]), flush=True)
    if "build" not in skip:
        with open_store(str(path), read_only=True) as store:
            out["build"] = bench_build(store, args.sample)
        print("build:", json.dumps(out["build"]), flush=True)
    if "ann" not in skip:
        out["ann"] = [bench_ann(args.vectors, d, args.index_kind) for d in args.ann_data.split(",")]
        for row in out["ann"]:
            print("ann:", json.dumps(row), flush=True)
    if "retrieve" not in skip:
        out["retrieve"] = bench_retrieve(path, args.runs, args.hubs)
        print("retrieve:", json.dumps(out["retrieve"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
