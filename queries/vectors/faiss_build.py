"""Building a FAISS index over unit vectors, and calibrating its search parameter against exact search.

The kinds: ``flat`` (exact ``IndexFlatIP``); ``ivf`` (``IndexIVFFlat``, ``nlist = 4·sqrt(n)``, ``nprobe``
calibrated to recall@10 :data:`TARGET_RECALL` on sampled queries); ``ivfpq`` (4-bit fast-scan PQ codes,
the best ``k_factor``·k re-ranked from float16 vectors, ``k_factor`` doubled from :data:`REFINE_FACTOR`
while short); ``hnsw`` (M :data:`HNSW_M`, ``efSearch`` calibrated); ``auto``: ``flat`` below
:data:`IVF_THRESHOLD` vectors, else ``ivfpq``, else ``flat`` where calibration stays under the target.
:func:`resolve_index_kind` says which kind the argument or ``$EVENTKG_INDEX`` asks for;
:func:`set_search_params` sets again on a loaded index what its manifest recorded (FAISS does not save
it). faiss is imported inside the functions so that commands that never search do not load it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from eventkg import settings
from eventkg.queries.errors import VectorIndexError

if TYPE_CHECKING:
    import faiss

IVF_THRESHOLD = 50_000  # auto: flat below this many vectors, else ivfpq
TARGET_RECALL = 0.95  # reached at half the nprobe we keep (see calibrate_nprobe)
ENV_INDEX = settings.INDEX.name
INDEX_KINDS = settings.INDEX.choices  # auto, flat, ivf, ivfpq, hnsw
HNSW_M = 32
REFINE_FACTOR = 16  # ivfpq: candidates re-ranked per result wanted (doubled while short)


def resolve_index_kind(kind: str | None = None) -> str:
    """The index kind setting: the argument, else ``$EVENTKG_INDEX``, else ``auto``."""
    kind = (kind or settings.index_kind() or "auto").lower()
    if kind not in INDEX_KINDS:
        raise VectorIndexError(f"unknown index kind {kind!r} (${ENV_INDEX} or the index_kind argument); expected one of {', '.join(INDEX_KINDS)}")
    return kind


def build_faiss(
    vectors: np.ndarray, target_recall: float = TARGET_RECALL, seed: int = 0, kind: str | None = None
) -> tuple[faiss.Index, dict]:
    """An inner-product index over unit vectors of the given kind (see the module docstring).

    ``auto`` never serves a recall it did not reach: where the calibrated ``ivfpq`` stays
    under ``target_recall`` (vectors with no structure, e.g. uniformly random ones, where
    it reached 0.24 on 1M), the exact index is built instead and the params say why."""
    n, d = vectors.shape
    kind = resolve_index_kind(kind)
    if kind == "auto":
        if n < IVF_THRESHOLD:
            return _build_flat(vectors)
        index, params = build_faiss(vectors, target_recall, seed, "ivfpq")
        if params["calibrated_recall@10"] >= target_recall:
            return index, params
        del index
        flat, flat_params = _build_flat(vectors)
        return flat, {**flat_params, "instead_of": "ivfpq", "ivfpq_recall@10": params["calibrated_recall@10"]}
    if kind == "flat" or n == 0:
        return _build_flat(vectors)
    rng = np.random.default_rng(seed)
    if kind == "hnsw":
        return _build_hnsw(vectors, target_recall, rng)
    nlist = int(min(65536, max(64, 4 * math.sqrt(n))))
    nlist = min(nlist, max(1, n // 8))
    train = vectors[rng.choice(n, size=min(n, nlist * 64), replace=False)] if n > nlist * 64 else vectors
    if kind == "ivfpq":
        return _build_ivfpq(vectors, train, nlist, target_recall, seed, rng)
    return _build_ivf(vectors, train, nlist, target_recall, seed, rng)


def _build_flat(vectors: np.ndarray) -> tuple[faiss.Index, dict]:
    """The exact ``IndexFlatIP``."""
    import faiss

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index, {"kind": "flat"}


def _build_hnsw(vectors: np.ndarray, target_recall: float, rng: np.random.Generator) -> tuple[faiss.Index, dict]:
    """``IndexHNSWFlat`` (M :data:`HNSW_M`) with ``efSearch`` calibrated to ``target_recall``."""
    import faiss

    n, d = vectors.shape
    hnsw = faiss.IndexHNSWFlat(d, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 80
    hnsw.add(vectors)

    def set_ef(v: int) -> None:
        hnsw.hnsw.efSearch = v

    ef, recall = calibrate(hnsw, set_ef, 16, max(16, n), vectors, target_recall, rng)
    return hnsw, {"kind": "hnsw", "M": HNSW_M, "efConstruction": 80, "efSearch": ef,
                  "calibrated_recall@10": round(recall, 4)}


def _build_ivfpq(
    vectors: np.ndarray, train: np.ndarray, nlist: int, target_recall: float, seed: int, rng: np.random.Generator
) -> tuple[faiss.Index, dict]:
    """4-bit PQ codes over pairs of dimensions, scanned with SIMD ("fast scan"), then the best
    ``k_factor``·k candidates re-ranked with the vectors kept in float16 (also for reconstruct)."""
    import faiss

    d = vectors.shape[1]
    m = d // 2 if d % 2 == 0 else d
    train = train[: nlist * 32]  # k-means cost is samples x nlist: 32 per list halves the build
    index = faiss.index_factory(d, f"IVF{nlist},PQ{m}x4fs,Refine(SQfp16)", faiss.METRIC_INNER_PRODUCT)
    ivf = faiss.extract_index_ivf(index)
    ivf.cp.seed = seed
    ivf.cp.min_points_per_centroid = 5
    index.train(train)
    index.add(vectors)

    def set_probe(v: int) -> None:
        ivf.nprobe = v

    k_factor = REFINE_FACTOR
    while True:  # PQ error caps the recall any nprobe reaches: re-rank more when it is short
        index.k_factor = k_factor
        # queries: indexed vectors left out of their own result (see calibrate); margin: 1%
        # more recall asked, no doubling (nprobe costs speed linearly)
        nprobe, recall = calibrate(index, set_probe, 1, min(nlist, 256), vectors, target_recall + 0.01, rng,
                                   margin=1, held_out=True)
        if recall >= target_recall + 0.01 or k_factor >= 64:
            break
        k_factor *= 2
    return index, {"kind": "ivfpq", "nlist": nlist, "pq": f"PQ{m}x4fs", "refine": "SQfp16", "k_factor": k_factor,
                   "nprobe": nprobe, "calibrated_recall@10": round(recall, 4)}


def _build_ivf(
    vectors: np.ndarray, train: np.ndarray, nlist: int, target_recall: float, seed: int, rng: np.random.Generator
) -> tuple[faiss.Index, dict]:
    """``IndexIVFFlat`` with ``nprobe`` calibrated to ``target_recall`` (see :func:`calibrate`)."""
    import faiss

    d = vectors.shape[1]
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    index.cp.min_points_per_centroid = 5  # small sets train on what they have, without a warning
    index.train(train)
    index.add(vectors)
    nprobe, recall = calibrate_nprobe(index, vectors, target_recall, rng)
    return index, {"kind": "ivf", "nlist": nlist, "nprobe": nprobe, "calibrated_recall@10": round(recall, 4)}


def calibrate_nprobe(
    index: faiss.IndexIVF, vectors: np.ndarray, target: float, rng: np.random.Generator, queries: int = 256, k: int = 10
) -> tuple[int, float]:
    """:func:`calibrate` for an IVF index's ``nprobe``."""

    def set_nprobe(v: int) -> None:
        index.nprobe = v

    return calibrate(index, set_nprobe, 1, index.nlist, vectors, target, rng, queries, k)


def calibrate(
    index: faiss.Index,
    set_param: Callable[[int], None],
    start: int,
    most: int,
    vectors: np.ndarray,
    target: float,
    rng: np.random.Generator,
    queries: int = 256,
    k: int = 10,
    margin: int = 2,
    held_out: bool = False,
) -> tuple[int, float]:
    """``margin`` times the smallest power-of-two search parameter whose recall@k reaches ``target``.

    The parameter is IVF's ``nprobe`` or HNSW's ``efSearch``. Queries are indexed vectors
    moved by random noise as long as their distance to their nearest other vector, so they
    sit between points as unseen texts do; the doubling is a margin for queries further
    from the data than these. With ``held_out`` the queries are indexed vectors searched
    leave-one-out instead (each one's own hit removed from the result and the truth): a
    query from the data's own distribution, as the next text of the same corpus is.
    """
    import faiss

    n, d = vectors.shape
    picked = rng.choice(n, size=min(queries, n), replace=False)
    base = vectors[picked]
    if held_out:
        return _calibrate_held_out(index, set_param, start, most, vectors, picked, target, k, margin)
    sims, _ = faiss.knn(base, vectors, 2, metric=faiss.METRIC_INNER_PRODUCT)  # exact, without a copy
    gap = np.sqrt(np.clip(2.0 - 2.0 * sims[:, 1:2], 1e-6, 4.0))
    noise = rng.normal(size=base.shape).astype(np.float32)
    noise *= gap / np.linalg.norm(noise, axis=1, keepdims=True)
    noisy = base + noise
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    _, truth = faiss.knn(noisy, vectors, k, metric=faiss.METRIC_INNER_PRODUCT)
    value = start
    while True:
        set_param(value)
        _, got = index.search(noisy, k)
        if recall_at_k(got, truth) >= target or value >= most:
            break
        value = min(most, value * 2)
    value = min(most, value * margin)
    set_param(value)
    _, got = index.search(noisy, k)
    return value, recall_at_k(got, truth)


def _calibrate_held_out(
    index: Any,
    set_param: Callable[[int], None],
    start: int,
    most: int,
    vectors: np.ndarray,
    picked: np.ndarray,
    target: float,
    k: int,
    margin: int,
    truth: np.ndarray | None = None,
) -> tuple[int, float]:
    """Held-out calibration; ``truth`` (the exact top k+1 of each picked row, itself included)
    is computed from ``vectors`` when not given."""
    import faiss

    base = vectors[picked] if truth is None else None
    if truth is None:
        _, truth = faiss.knn(base, vectors, k + 1, metric=faiss.METRIC_INNER_PRODUCT)
    base = base if base is not None else np.ascontiguousarray(vectors[picked])

    def drop_self(rows: np.ndarray) -> np.ndarray:
        return np.stack([np.array([p for p in row if p != me][:k] + [-1] * k)[:k] for row, me in zip(rows, picked, strict=True)])

    truth = drop_self(truth)

    def recall_at(value: int) -> float:
        set_param(value)
        _, got = index.search(base, k + 1)
        return recall_at_k(drop_self(got), truth)

    value = start
    while recall_at(value) < target and value < most:
        value = min(most, value * 2)
    value = min(most, value * margin)
    return value, recall_at(value)


def recall_at_k(got: np.ndarray, truth: np.ndarray) -> float:
    """Mean share of the true top-k found in the returned top-k."""
    hits = sum(len(set(g[g >= 0]) & set(t)) for g, t in zip(got, truth, strict=True))
    return hits / truth.size


def set_search_params(index: faiss.Index, manifest: dict[str, Any]) -> None:
    """Set the search parameters the manifest recorded (they are not saved in the index file)."""
    import faiss

    params = manifest["params"]
    if params["kind"] == "ivf":
        ivf = faiss.extract_index_ivf(index)
        ivf.nprobe = params["nprobe"]
        ivf.make_direct_map()  # reconstruct() by position, for negatives
    elif params["kind"] == "ivfpq":
        faiss.extract_index_ivf(index).nprobe = params["nprobe"]
        refine = faiss.downcast_index(index)
        refine.k_factor = params["k_factor"]
    elif params["kind"] == "hnsw":
        faiss.downcast_index(index).hnsw.efSearch = params["efSearch"]

