"""Benchmark: each event embedded once per model, whatever level asks, and the compressed kind.

Each step runs in its own process (peak RSS is that process's ``ru_maxrss``):

1. ``samples``: the bundled samples (``ingest/samples``, what ``eventkg demo`` ingests) in a fresh
   store; the ``schema`` index opened (as ``negatives`` does), then ``all`` (as the first
   ``retrieve`` does), then ``instance``: texts encoded by each open, seconds, texts/s, RSS;
2. ``aser``: an ASER-shaped ``KG.db`` of ``--aser`` eventualities (3x relations,
   :func:`tests.support.aser_shape.make_aser_shape_kg`) ingested with ``--map-events``; the same
   opens, then ``retrieve(k=5, hops=2)`` p50/p95 over 200 calls with the index loaded;
3. ``large``: ``--large`` synthetic clustered unit vectors (dim 384) written as a vectors file,
   the compressed index (:func:`eventkg.queries.vectors.compressed.build_large`) built over them:
   seconds, peak RSS beside the file's size, recall@10 against exact search on held-out
   queries, single-query latency. No encoder: it measures the index, not the model.

Run:  .venv/bin/python -m bench.vector_store_bench --aser 30000 --large 1000000 --json out.json
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

import numpy as np

from bench.common import ROOT


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class AnonPeak:
    """Peak anonymous RSS (``RssAnon``: the heap, not the page cache of mapped files, which
    ``ru_maxrss`` counts too), sampled every 50 ms in a thread; ``reset()`` starts a new peak."""

    def __init__(self) -> None:
        import threading

        self.peak = 0.0
        threading.Thread(target=self._run, daemon=True).start()

    @staticmethod
    def now() -> float:
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, self.now())
            time.sleep(0.05)

    def reset(self) -> None:
        self.peak = self.now()


ANON: AnonPeak | None = None


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def opens(store, levels) -> list[dict]:
    from eventkg.queries.vectors import index as vx
    from eventkg.queries.vectors.embeddings import Embedder

    Embedder().encode(["warm up"])  # the model loaded once, outside the timings
    out = [{"model_loaded_rss_mb": round(peak_rss_mb()), "model_loaded_anon_mb": round(AnonPeak.now())}]
    for level in levels:
        ANON.reset()
        anon0 = ANON.peak
        emb = Embedder()
        t, c = time.perf_counter(), cpu_s()
        vi = vx.open_index(store, level=level, embedder=emb)
        secs, cpu = time.perf_counter() - t, cpu_s() - c
        out.append({"level": level or "all", "events": len(vi), "encoded": emb.encoded, "seconds": round(secs, 2),
                    "cpu_s": round(cpu, 2), "texts_per_s": round(emb.encoded / secs, 1) if emb.encoded else None,
                    "texts_per_cpu_s": round(emb.encoded / cpu, 1) if emb.encoded else None,
                    "kind": vi.manifest["params"]["kind"], "rss_mb": round(peak_rss_mb()),
                    "anon_before_mb": round(anon0), "peak_anon_mb": round(ANON.peak)})
    return out


def step_samples(work: Path) -> dict:
    from eventkg import open_store
    from eventkg.demo import ingest_samples

    store = open_store(str(work / "samples.lbug"))
    ingest_samples(store)
    return {"opens": opens(store, ["schema", None, "instance"]), "folder_files": _files(work / "samples.lbug.faiss")}


def step_aser(work: Path, n: int) -> dict:
    from eventkg import open_store
    from eventkg.ingest.registry import ingest_source
    from eventkg.queries.retrieval.retrieve import retrieve
    from tests.support.aser_shape import make_aser_shape_kg

    db = make_aser_shape_kg(work / "KG.db", n, 3 * n, seed=11)
    store = open_store(str(work / "aser.lbug"))
    ingest_source(store, "aser", db, map_events=True)
    result = {"opens": opens(store, ["schema", None])}
    from eventkg.queries.vectors import index as vx

    vi = vx.open_index(store)
    texts = [r["text"] for r in store.query("MATCH (e:Event) RETURN e.text AS text LIMIT 200")]
    retrieve(store, texts[0], k=5, hops=2, index=vi)  # loads the adjacency
    lat = []
    for t in texts:
        t0 = time.perf_counter()
        retrieve(store, t + " today", k=5, hops=2, index=vi)
        lat.append((time.perf_counter() - t0) * 1000)
    result["retrieve_ms"] = {"p50": round(float(np.percentile(lat, 50)), 1), "p95": round(float(np.percentile(lat, 95)), 1),
                             "calls": len(lat)}
    result["folder_files"] = _files(work / "aser.lbug.faiss")
    result["rss_mb"] = round(peak_rss_mb())
    return result


def _files(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}


def step_large(work: Path, n: int, d: int = 384) -> dict:
    import faiss

    from eventkg.queries.vectors import compressed as vector_large

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(2000, d)).astype(np.float32)
    path = work / "v.npy"
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n + 200, d))
    for a in range(0, n + 200, 65_536):
        b = min(n + 200, a + 65_536)
        x = centres[rng.integers(0, len(centres), b - a)] + rng.normal(scale=0.6, size=(b - a, d)).astype(np.float32)
        out[a:b] = x / np.linalg.norm(x, axis=1, keepdims=True)
    out.flush()
    del out
    vecs = np.load(path, mmap_mode="r")
    rows, queries = np.arange(n), np.ascontiguousarray(vecs[n:])
    rss0 = peak_rss_mb()
    ANON.reset()
    anon0 = ANON.peak
    t = time.perf_counter()
    index, params = vector_large.build_large(vecs, rows)
    build_s = time.perf_counter() - t
    build_cpu = cpu_s()
    anon_build = ANON.peak
    heap = faiss.ResultHeap(len(queries), 10, keep_max=True)
    for a in range(0, n, 65_536):
        block = np.ascontiguousarray(vecs[a : min(n, a + 65_536)])  # the indexed rows only, not the queries
        sims, pos = faiss.knn(queries, block, 10, metric=faiss.METRIC_INNER_PRODUCT)
        heap.add_result(sims, pos + a)
    heap.finalize()
    truth = heap.I
    _, got = index.search(queries, 10)
    from eventkg.queries.vectors.faiss_build import recall_at_k

    lat = []
    faiss.omp_set_num_threads(1)
    for q in queries:
        t0 = time.perf_counter()
        index.search(q[None], 5)
        lat.append((time.perf_counter() - t0) * 1000)
    return {"vectors": n, "dim": d, "file_mb": round(path.stat().st_size / 2**20), "build_s": round(build_s, 1), "process_cpu_s": round(build_cpu, 1),
            "params": params, "recall@10_heldout": round(recall_at_k(got, truth), 4),
            "index_mb": round(faiss.serialize_index(index.ivf).nbytes / 2**20),
            "search_ms": {"p50": round(float(np.percentile(lat, 50)), 2), "p95": round(float(np.percentile(lat, 95)), 2)},
            "rss_before_build_mb": round(rss0), "rss_mb": round(peak_rss_mb()),
            "anon_before_build_mb": round(anon0), "peak_anon_build_mb": round(anon_build)}


def child(step: str, arg: int) -> dict:
    global ANON
    ANON = AnonPeak()
    with tempfile.TemporaryDirectory(dir=ROOT / ".bench-tmp" if (ROOT / ".bench-tmp").is_dir() else None) as tmp:
        work = Path(tmp)
        if step == "samples":
            return step_samples(work)
        if step == "aser":
            return step_aser(work, arg)
        return step_large(work, arg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aser", type=int, default=30_000, help="ASER-shaped eventualities (0: skip)")
    ap.add_argument("--large", type=int, default=1_000_000, help="synthetic vectors for the compressed kind (0: skip)")
    ap.add_argument("--steps", default="samples,aser,large")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], int(a.child[1]))))
        return
    results: dict = {"loadavg_start": open("/proc/loadavg").read().split()[:3]}
    for step in a.steps.split(","):
        arg = {"samples": 0, "aser": a.aser, "large": a.large}[step]
        if step != "samples" and not arg:
            continue
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "bench.vector_store_bench", "--child", step, str(arg)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            print(proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"step {step} failed")
        results[step] = {**json.loads(proc.stdout.strip().splitlines()[-1]), "wall_s": round(time.perf_counter() - t, 1)}
        print(step, json.dumps(results[step], indent=1), flush=True)
    if a.json:
        a.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
