"""Benchmark: a store's first vector-index build (what the first ``retrieve`` waits for), beside its floor.

Run::

    .venv/bin/python -m bench.index_build_bench --ev2-store EV2.lbug [--aser 30000] [--json out.json]

Two stores ten times apart in size, each in a process of its own (peak RSS is that step's):
``ev2``: a copy of a store with the EV² release ingested (its index folder left out, so the
index is built from nothing); ``aser``: an ASER-shaped ``KG.db`` of ``--aser`` eventualities
(3x relations, :func:`tests.support.aser_shape.make_aser_shape_kg`) ingested. For each:

- ``build``: :func:`~eventkg.queries.vectors.index.open_index` over all events, from nothing:
  seconds, events/s, process CPU seconds, and how many texts each torch thread count encoded;
- ``floor``: the encoder alone on the same texts (seconds and process CPU seconds), ``SentenceTransformer.encode(texts,
  batch_size=...)`` as a user would call it: once with torch's threads as they are (the
  cores) and once with one thread, in the same process right before the build; the
  faster is the floor. ``faiss_add_s``: adding the built vectors to a flat index alone;
- ``bm25_s``: the full-text index (:func:`~eventkg.queries.vectors.fulltext.open_fulltext`);
- ``max_abs_diff``: the largest difference between a built vector and the floor's vector
  of the same text, and whether the top 10 of 50 queries are the same in both.

The machine's load average is printed at the start and the end of each step.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ROOT


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load() -> list[str]:
    return open("/proc/loadavg").read().split()[:3]


def measure(store: Any, what: str) -> dict[str, Any]:
    import faiss
    import torch

    from eventkg.queries.vectors import encode as vector_encode
    from eventkg.queries.vectors import index as vx
    from eventkg.queries.vectors.embeddings import Embedder
    from eventkg.queries.vectors.fulltext import open_fulltext

    out: dict[str, Any] = {"store": what, "loadavg_start": load()}
    t = time.perf_counter()
    table = vx._sorted_texts(store, None)
    texts = table.column("text").to_pylist()
    out["read_texts_s"] = round(time.perf_counter() - t, 2)
    out["events"] = len(texts)
    out["mean_chars"] = round(float(np.mean([len(x) for x in texts])), 1)
    emb = Embedder()
    st = emb.st
    st.encode(texts[:64], batch_size=emb.encode_batch)  # the model loaded and warm, outside every timing
    floors, floor_cpu = {}, {}
    cores = torch.get_num_threads()
    for name, threads in (("cores", cores), ("one_thread", 1)):
        torch.set_num_threads(threads)
        t, c = time.perf_counter(), cpu_s()
        ref = st.encode(texts, batch_size=emb.encode_batch, normalize_embeddings=True, convert_to_numpy=True)
        floors[name], floor_cpu[name] = time.perf_counter() - t, cpu_s() - c
    torch.set_num_threads(cores)
    floor_s = min(floors.values())
    used: dict[str, int] = {}
    original = vector_encode.ThreadChoice.run

    def spy(self: Any, part: list[str], threads: int | None, timed: bool = False) -> np.ndarray:
        used[str(threads)] = used.get(str(threads), 0) + len(part)
        return original(self, part, threads, timed)

    vector_encode.ThreadChoice.run = spy  # type: ignore[method-assign]
    t, c = time.perf_counter(), cpu_s()
    vi = vx.open_index(store, embedder=emb, rebuild=True)
    build_s, build_cpu = time.perf_counter() - t, cpu_s() - c
    vector_encode.ThreadChoice.run = original  # type: ignore[method-assign]
    built = vi.row_vectors(np.arange(len(vi)))
    flat = faiss.IndexFlatIP(built.shape[1])
    t = time.perf_counter()
    flat.add(np.ascontiguousarray(ref))
    faiss_s = time.perf_counter() - t
    t = time.perf_counter()
    open_fulltext(store, vi)
    bm25_s = time.perf_counter() - t
    rng = np.random.default_rng(0)
    q = ref[rng.choice(len(ref), min(50, len(ref)), replace=False)]
    built_flat = faiss.IndexFlatIP(built.shape[1])
    built_flat.add(np.ascontiguousarray(built))
    same_top = bool((flat.search(q, 10)[1] == built_flat.search(q, 10)[1]).all())
    out.update({
        "build": {"seconds": round(build_s, 1), "events_per_s": round(len(texts) / build_s, 1),
                  "seconds_per_1000": round(1000 * build_s / len(texts), 1), "cpu_s": round(build_cpu, 1),
                  "texts_by_threads": used},
        "floor": {"seconds": round(floor_s, 1), "events_per_s": round(len(texts) / floor_s, 1),
                  "cores_threads_s": round(floors["cores"], 1), "one_thread_s": round(floors["one_thread"], 1),
                  "cores_threads_cpu_s": round(floor_cpu["cores"], 1), "one_thread_cpu_s": round(floor_cpu["one_thread"], 1),
                  "torch_threads": cores},
        "build_over_floor": round(build_s / floor_s, 2),
        "faiss_add_s": round(faiss_s, 3), "bm25_s": round(bm25_s, 2),
        "max_abs_diff": float(np.abs(built - ref).max()), "same_top10_of_50_queries": same_top,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "loadavg_end": load(),
    })
    return out


def child(step: str, arg: str) -> dict[str, Any]:
    from eventkg import open_store

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if step == "ev2":
            shutil.copy2(arg, work / "s.lbug")  # the file alone: the index is built from nothing
            path = work / "s.lbug"
        else:
            from eventkg.ingest.registry import ingest_source
            from tests.support.aser_shape import make_aser_shape_kg

            n = int(arg)
            db = make_aser_shape_kg(work / "KG.db", n, 3 * n, seed=11)
            path = work / "aser.lbug"
            with open_store(str(path)) as s:
                ingest_source(s, "aser", db, map_events=True)
        with open_store(str(path)) as store:
            return measure(store, step if step == "ev2" else f"aser {arg}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ev2-store", help="a LadybugDB store with EV² ingested (copied, never written)")
    ap.add_argument("--aser", type=int, default=30_000, help="ASER-shaped eventualities (0: skip)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(*a.child)))
        return
    steps = ([("ev2", a.ev2_store)] if a.ev2_store else []) + ([("aser", str(a.aser))] if a.aser else [])
    results = []
    for step, arg in steps:
        proc = subprocess.run([sys.executable, "-m", "bench.index_build_bench", "--child", step, arg],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            print(proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"step {step} failed")
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        r = results[-1]
        print(f"{r['store']}: {r['events']:,} events, build {r['build']['seconds']} s "
              f"({r['build']['events_per_s']} events/s, {r['build']['seconds_per_1000']} s per 1,000) "
              f"beside the encoder alone {r['floor']['seconds']} s ({r['floor']['events_per_s']} events/s); "
              f"peak RSS {r['peak_rss_mb']} MB", flush=True)
        print(json.dumps(r, indent=1), flush=True)
    if a.json:
        a.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
