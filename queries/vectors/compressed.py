"""The compressed index kind for big levels: IVF + 4-bit PQ codes in memory, re-ranked from the
memory-mapped vectors file.

At or above :data:`LARGE_INDEX` vectors, ``auto`` (and ``ivfpq``) build this kind instead of the
in-memory ``IVF,PQ,Refine(SQfp16)`` of :mod:`eventkg.queries.vectors.faiss_build`, whose float16 copy
of every vector grows with the store. Here the index holds only ``IVF<4√n>,PQ<d/4>x4fs`` codes:
``d/8`` bytes per vector plus 8 B of list id. A search asks the IVF for ``k_factor``·k candidates and re-ranks
them by exact inner product with their float32 rows read from the shared vectors file
(:mod:`eventkg.queries.vectors.store`), which stays on disk and in the page cache.

Building is bounded too: k-means trains on at most :data:`TRAIN_MAX` sampled rows, the codes
are added :data:`ADD_BLOCK` rows at a time, and the calibration's exact ground truth is computed
block by block over the memory-mapped rows. The calibration queries are
:data:`CALIBRATION_QUERIES` of the level's own vectors held out of the index until it is done
(added last), so they are searched as an unseen text is (leave-one-out queries, which sit in
the index, read a little higher).
``nprobe`` is calibrated to recall@10 ``target + 0.01``; ``k_factor`` doubles from
``REFINE_FACTOR`` while that is short, up to 128. Where even that stays short, the index is
kept (an exact index of this size would not fit the memory budget) and the params record
the recall reached.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eventkg.queries.vectors.faiss_build import REFINE_FACTOR, TARGET_RECALL, recall_at_k

#: levels of at least this many vectors get the compressed kind (the in-memory float16 refine
#: copy stays under ~190 MB at dim 384 below it)
LARGE_INDEX = 250_000
TRAIN_MAX = 131_072  # k-means sample rows (its memory: docs/performance.md)
ADD_BLOCK = 65_536  # rows added to the index (and scanned for the ground truth) per block
CALIBRATION_QUERIES = 256
MAX_K_FACTOR = 128


class MmapRefined:
    """An IVF-PQ index over a level's rows whose results are re-ranked from the float32 rows.

    ``rows[i]`` is the row in ``vecs`` (the memory-mapped vectors file) of the index's vector i.
    Duck-types the part of ``faiss.Index`` the callers use: ``search``, ``reconstruct``, ``ntotal``.
    """

    def __init__(self, ivf: Any, vecs: np.ndarray, rows: np.ndarray, k_factor: int = REFINE_FACTOR) -> None:
        self.ivf, self.vecs, self.rows, self.k_factor = ivf, vecs, rows, k_factor

    @property
    def ntotal(self) -> int:
        return int(self.ivf.ntotal)

    def reconstruct(self, i: int) -> np.ndarray:
        return np.array(self.vecs[self.rows[int(i)]], dtype=np.float32)

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        q = np.ascontiguousarray(np.atleast_2d(q), dtype=np.float32)
        want = int(min(self.ntotal, max(k, k * self.k_factor)))
        _, cand = self.ivf.search(q, want)
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        labels = np.full((len(q), k), -1, dtype=np.int64)
        for j, row in enumerate(cand):
            row = np.unique(row[row >= 0])  # sorted: the file is read in order
            if len(row) == 0:
                continue
            sims = np.asarray(self.vecs[self.rows[row]]) @ q[j]
            top = np.argsort(-sims, kind="stable")[:k]
            scores[j, : len(top)] = sims[top]
            labels[j, : len(top)] = row[top]
        return scores, labels


def nlist_for(n: int) -> int:
    return min(int(min(65536, max(64, 4 * math.sqrt(n)))), max(1, n // 8))


def pq_m(d: int) -> int:
    """Sub-quantisers: d/4 (two 4-bit codes per byte: d/8 bytes) where d allows, else d/2, else d."""
    return d // 4 if d % 8 == 0 else d // 2 if d % 2 == 0 else d


def build_large(vecs: np.ndarray, rows: np.ndarray, target_recall: float = TARGET_RECALL, seed: int = 0) -> tuple[MmapRefined, dict]:
    """The compressed index over ``vecs[rows]`` (see the module docstring)."""
    import faiss

    n, d = len(rows), vecs.shape[1]
    rng = np.random.default_rng(seed)
    nlist = nlist_for(n)
    sample = np.sort(rng.choice(n, size=min(n, nlist * 32, TRAIN_MAX), replace=False))
    m = pq_m(d)
    ivf = faiss.index_factory(d, f"IVF{nlist},PQ{m}x4fs", faiss.METRIC_INNER_PRODUCT)
    inner = faiss.extract_index_ivf(ivf)
    inner.cp.seed = seed
    inner.cp.min_points_per_centroid = 5
    ivf.train(np.ascontiguousarray(vecs[rows[sample]]))
    held = np.zeros(n, dtype=bool)  # calibration queries: added only after the calibration
    held[rng.choice(n, size=min(CALIBRATION_QUERIES, n // 2), replace=False)] = True
    for a in range(0, n, ADD_BLOCK):
        pos = np.flatnonzero(~held[a : a + ADD_BLOCK]) + a
        ivf.add_with_ids(np.ascontiguousarray(vecs[rows[pos]]), pos.astype(np.int64))
    picked = np.flatnonzero(held)
    queries = np.ascontiguousarray(vecs[rows[picked]])
    truth = exact_top(vecs, rows, queries, held, 10)
    index = MmapRefined(ivf, vecs, rows)
    nprobe, recall = _calibrate(index, inner, queries, truth, target_recall + 0.01, min(nlist, 256))
    ivf.add_with_ids(queries, picked.astype(np.int64))
    return index, {"kind": "ivfpq", "nlist": nlist, "pq": f"PQ{m}x4fs", "refine": "mmap", "k_factor": index.k_factor,
                   "nprobe": nprobe, "calibrated_recall@10": round(recall, 4)}


def _calibrate(index: MmapRefined, inner: Any, queries: np.ndarray, truth: np.ndarray, target: float, most: int) -> tuple[int, float]:
    """The smallest power-of-two ``nprobe`` reaching ``target`` recall@10 on the held-out
    queries; ``k_factor`` doubled (up to :data:`MAX_K_FACTOR`) while ``most`` does not."""
    while True:
        value = 1
        while True:
            inner.nprobe = value
            recall = recall_at_k(index.search(queries, 10)[1], truth)
            if recall >= target or value >= most:
                break
            value = min(most, value * 2)
        if recall >= target or index.k_factor >= MAX_K_FACTOR:
            return value, recall
        index.k_factor *= 2


def exact_top(vecs: np.ndarray, rows: np.ndarray, queries: np.ndarray, skip: np.ndarray, k: int) -> np.ndarray:
    """Exact top-``k`` level positions by inner product for ``queries``, over the level's rows
    but those where ``skip`` is set, scanned in blocks of :data:`ADD_BLOCK`."""
    import faiss

    heap = faiss.ResultHeap(len(queries), k, keep_max=True)
    for a in range(0, len(rows), ADD_BLOCK):
        pos = np.flatnonzero(~skip[a : a + ADD_BLOCK]) + a
        if len(pos) == 0:
            continue
        block = np.ascontiguousarray(vecs[rows[pos]])
        sims, got = faiss.knn(queries, block, min(k, len(block)), metric=faiss.METRIC_INNER_PRODUCT)
        heap.add_result(np.ascontiguousarray(sims), np.ascontiguousarray(np.where(got >= 0, pos[got], -1)))
    heap.finalize()
    return heap.I


def open_large(ivf: Any, vecs: np.ndarray, rows: np.ndarray, params: dict[str, Any]) -> MmapRefined:
    """A loaded compressed index with the search parameters its manifest recorded."""
    import faiss

    faiss.extract_index_ivf(ivf).nprobe = params["nprobe"]
    return MmapRefined(ivf, vecs, rows, params["k_factor"])
