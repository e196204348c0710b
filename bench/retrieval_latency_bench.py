"""Benchmark: ``retrieve(store, text)`` latency with its defaults, beside an older ``retrieve.py``.

Run (on a copy of the store: the vector index is built into its index folder when missing)::

    .venv/bin/python -m bench.retrieval_latency_bench --store COPY.lbug --baseline OLD_RETRIEVE_PY \\
        [--encoder real|stand-in] [--runs 200] [--json out.json]

The query texts are ones the store has never seen: each joins the first half of the words of one
stored text to the second half of another's (pairs drawn with a fixed seed), kept only when no
stored text equals it. Both versions answer every text in the same run, alternating which goes
first, after a warm-up (model, vector index, adjacency and type layer loaded); the figure is the
wall time of ``retrieve(store, text)`` with the defaults, the query's embedding included.
``OLD_RETRIEVE_PY`` is loaded from its file (e.g. ``git show REV:queries/retrieval/retrieve.py``),
over this checkout's other modules, so the two differ only by that file.

``--encoder stand-in`` is for a store whose events were never embedded with the real model
(1M ASER events take hours on 2 CPU cores): the index is built from :class:`StandIn` vectors
(a random vector per word, summed: texts sharing words are near, as with a sentence encoder),
and every query still runs the real model on its text once, so each call pays the real
encoder's cost. The floor printed beside: the real model's encode of the same texts alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import load_baseline

D = 384


def pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, math.ceil(q * len(v)) - 1)]


def _unit(key: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(D, dtype=np.float32)


def stand_in_class() -> type:
    from eventkg.queries.vectors.embeddings import Embedder

    class StandIn(Embedder):
        """Word-vector sums for the index; a query (a few texts) also runs the real model once."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(device="cpu")
            self.name = "bench-stand-in-words-384"
            self.real = Embedder(device="cpu")
            self._words: dict[str, np.ndarray] = {}

        @property
        def dim(self) -> int:
            return D

        def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
            import faiss

            if len(texts) <= 8:
                self.real.encode(list(texts))  # the real encoder's cost, paid by every query
            out = np.empty((len(texts), D), np.float32)
            for i, t in enumerate(texts):
                vs = [self._words.setdefault(w, _unit(w)) for w in t.split()]
                out[i] = (sum(vs) if vs else 0) + 0.5 * _unit(t)
            faiss.normalize_L2(out)
            self.encoded += len(texts)
            return out

    return StandIn


def unseen_texts(texts: list[str], n: int, seed: int = 3) -> list[str]:
    """``n`` texts no stored text equals: half the words of one stored text, half of another's."""
    have = set(texts)
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        a, b = rng.choice(texts).split(), rng.choice(texts).split()
        if len(a) < 2 or len(b) < 2:
            continue
        t = " ".join(a[: len(a) // 2] + b[len(b) // 2 :])
        if t not in have:
            out.append(t)
            have.add(t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="a LadybugDB store (a copy: its index folder is written)")
    ap.add_argument("--baseline", required=True, help="an older retrieve.py")
    ap.add_argument("--encoder", choices=("real", "stand-in"), default="real")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()

    from eventkg import open_store
    from eventkg.queries.graph import columnar
    from eventkg.queries.retrieval.retrieve import retrieve
    from eventkg.queries.vectors import index as vx
    from eventkg.queries.vectors.embeddings import Embedder

    old = load_baseline(Path(a.baseline))
    if a.encoder == "stand-in":
        shared = stand_in_class()()
        vx.Embedder = lambda *args, **kwargs: shared  # type: ignore[assignment,misc]  # what open_index makes
    out: dict[str, Any] = {"store": a.store, "encoder": a.encoder, "loadavg_start": open("/proc/loadavg").read().split()[:3]}
    with open_store(a.store) as store:
        t0 = time.perf_counter()
        vi = vx.open_index(store)
        out["open_index_s"] = round(time.perf_counter() - t0, 1)
        out["index"] = {"events": len(vi), "kind": vi.manifest["params"]["kind"], "built": vi.built}
        stored = columnar.event_texts(store).column("text").to_pylist()
        queries = unseen_texts(stored, a.runs)
        del stored
        t0 = time.perf_counter()
        retrieve(store, "warm up the caches")
        out["first_retrieve_s"] = round(time.perf_counter() - t0, 1)
        old(store, "warm up the caches")
        times: dict[str, list[float]] = {"current": [], "baseline": []}
        fns = {"current": retrieve, "baseline": old}
        for i, q in enumerate(queries):
            for name in (("current", "baseline") if i % 2 == 0 else ("baseline", "current")):
                t = time.perf_counter()
                fns[name](store, q)
                times[name].append((time.perf_counter() - t) * 1e3)
        real = Embedder(device="cpu")
        real.encode(["warm up"])
        enc = []
        for q in queries:
            t = time.perf_counter()
            real.encode([q])
            enc.append((time.perf_counter() - t) * 1e3)
    for name, ts in times.items():
        out[name] = {"p50_ms": round(statistics.median(ts), 1), "p95_ms": round(pct(ts, 0.95), 1)}
    out["floor_real_encode_alone"] = {"p50_ms": round(statistics.median(enc), 1), "p95_ms": round(pct(enc, 0.95), 1)}
    out["ratio_current_over_baseline"] = {k: round(out["current"][k] / out["baseline"][k], 2) for k in ("p50_ms", "p95_ms")}
    out["runs"] = len(queries)
    out["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
