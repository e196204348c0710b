"""A FAISS index of Event texts, persisted beside the store and reused until the graph changes.

Where it lives (one folder per store, named, bounded, removable):

- LadybugDB store at path ``X``: the folder ``X.faiss/``;
- Neo4j (or any non-file store): the ``indexes/`` folder of the cache root
  (``$EVENTKG_CACHE``, default ``~/.cache/eventkg``; see :mod:`eventkg.settings`)
  ``/<url without credentials>-<hash>/``; at most :data:`MAX_CACHED_STORES` such
  folders are kept (least recently used ones are removed).

Inside, one index per event level (``schema``, ``instance`` or ``all``): ``<level>.faiss``,
``<level>.ids.npy`` and ``<level>.json`` (the manifest: model, dim, index kind and
parameters, and the fingerprint of the Event nodes it covers). Building with another
model replaces the level's index, so a folder never holds more than three.

Fingerprint: the count of the level's Event nodes and a BLAKE2 hash of their sorted ids.
An Event id is a hash of its normalised text and level, so the ids determine the texts:
equal fingerprints mean equal indexed texts. Computing it reads only the ids (one query).
Inside one process an index already loaded is reused while the store's total Event
count is unchanged (one ``count(*)`` query per call, so retrieval stays fast); a
different count triggers the full fingerprint check. ``clear_index`` (or
``eventkg negatives --rebuild``) drops everything.

Index kind (a setting: ``index_kind``, else ``$EVENTKG_INDEX``, else ``auto``):

- ``flat``: exact ``IndexFlatIP``;
- ``ivf``: ``IndexIVFFlat`` (inner product) with ``nlist = 4·sqrt(n)`` whose ``nprobe``
  is calibrated at build time against exact search on sampled queries: twice the
  smallest power of two reaching recall@10 :data:`TARGET_RECALL`;
- ``ivfpq``: ``IVF<4√n>,PQ<d/2>x4fs,Refine(SQfp16)``: 4-bit product-quantised codes scanned
  with SIMD ("fast scan"), the best ``k_factor``·k re-ranked with the vectors kept in float16
  (which ``vector()`` also reads; half the bytes of float32, and the re-ranking reads them
  at random, so it runs 2x faster: 20K vs 9.6K queries/s at recall@10 0.99 on 300K vectors,
  2 cores, k_factor 8); ``nprobe`` calibrated to recall 0.96 on indexed
  vectors searched leave-one-out (no doubling), ``k_factor`` doubled from
  :data:`REFINE_FACTOR` while that is not reached;
- ``hnsw``: ``IndexHNSWFlat`` (M 32) whose ``efSearch`` is calibrated the same way (slow
  to build on few cores: minutes per 100K vectors);
- ``auto``: ``flat`` below :data:`IVF_THRESHOLD` vectors, else ``ivfpq``, the fastest at
  recall@10 >= 0.95 in bench/query_bench_retrieval.py (1M vectors, 2 cores).

The parameters go in the manifest and are set again on load. Vectors are unit length,
so inner product = cosine similarity.

Building (the slow part is the encoder: ~500 texts/s on 2 CPU cores, so a million events
take about half an hour): texts are read in columns (:mod:`eventkg.queries.columnar`), ordered by
id, and encoded in chunks of :data:`ENCODE_CHUNK`; each chunk's vectors are saved as
they finish in ``<level>.build/`` with a plan naming model, fingerprint and chunk size.
A build that is interrupted (Ctrl-C, a crash, a killed job) resumes from the saved
chunks when the same index is asked for again, and gives the same index: chunk
boundaries and contents depend only on the sorted ids. ``notice`` hears, before the
first text is encoded, how many events will be embedded and an ETA measured on a probe
batch (builds of at least :data:`NOTICE_MIN` texts); ``progress`` hears ``(done, total)`` after every chunk (first with what a resumed
build already had).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eventkg import settings
from eventkg.errors import EventKGError
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.open import NEO4J_SCHEMES
from eventkg.queries import columnar
from eventkg.queries.embeddings import Embedder

if TYPE_CHECKING:  # faiss is imported where it is used: `eventkg stats` must not load it (measured: ~70 ms, +15 MB RSS)
    import faiss

FORMAT = 1
IVF_THRESHOLD = 50_000
TARGET_RECALL = 0.95  # reached at half the nprobe we keep (see calibrate_nprobe)
MAX_CACHED_STORES = 8
LEVELS = ("schema", "instance")
ENCODE_CHUNK = 16_384  # texts per saved chunk: ~30 s of CPU work lost at most on an interrupt
PROBE = 256  # texts encoded to estimate the rate before a build
NOTICE_MIN = 2_000  # builds of fewer texts (seconds of work) start without the ETA notice
SMALL_QUERY = 8
ENV_INDEX = settings.INDEX.name
INDEX_KINDS = settings.INDEX.choices  # auto, flat, ivf, ivfpq, hnsw
HNSW_M = 32
REFINE_FACTOR = 16  # ivfpq: candidates re-ranked per result wanted (doubled while short)

Progress = Callable[[int, int], None]
Notice = Callable[[str], None]


class IndexError_(EventKGError):
    """The vector index cannot be built or read."""


# -- where ------------------------------------------------------------------------------------


def _strip_credentials(url: str) -> str:
    return re.sub(r"//[^/@]*@", "//", url)


def index_dir(store: GraphStore) -> Path:
    """The folder holding the store's vector indexes (see the module docstring)."""
    url = str(store.url)
    if url.startswith(NEO4J_SCHEMES) or url in ("", ":memory:"):
        clean = _strip_credentials(url)
        slug = re.sub(r"[^A-Za-z0-9]+", "_", clean).strip("_")[:60] or "memory"
        return settings.cache_dir("indexes") / f"{slug}-{hashlib.blake2b(clean.encode(), digest_size=4).hexdigest()}"
    return Path(url.removeprefix("ladybug://") + ".faiss")


def _bound_cache(keep: Path) -> None:
    """Keep at most MAX_CACHED_STORES store folders in the shared cache (LRU by mtime)."""
    root = keep.parent
    if root != settings.cache_dir("indexes") or not root.is_dir():
        return
    folders = sorted((p for p in root.iterdir() if p.is_dir() and p != keep), key=lambda p: p.stat().st_mtime)
    for old in folders[: max(0, len(folders) - (MAX_CACHED_STORES - 1))]:
        shutil.rmtree(old, ignore_errors=True)


# -- fingerprint ----------------------------------------------------------------------------


def _level_filter(level: str | None) -> tuple[str, dict[str, Any]]:
    if level is None:
        return "", {}
    if level not in LEVELS:
        raise IndexError_(f"unknown event level {level!r}; expected one of {', '.join(LEVELS)}")
    return " WHERE e.level = $level", {"level": level}


def event_count(store: GraphStore) -> int:
    """All Event nodes (the cheap in-process staleness check)."""
    return int(store.query("MATCH (e:Event) RETURN count(*) AS n")[0]["n"])


def fingerprint(store: GraphStore, level: str | None = None) -> dict[str, Any]:
    """Count + hash of the sorted ids of the level's Event nodes that have a text."""
    _level_filter(level)
    return _fingerprint_of(_sorted_texts(store, level).column("id"))


def _sorted_texts(store: GraphStore, level: str | None) -> Any:
    """``(id, text)`` of the level's events with a text, ordered by id (a pyarrow Table)."""
    import pyarrow.compute as pc

    table = columnar.event_texts(store, level)
    return table.take(pc.sort_indices(table, [("id", "ascending")]))


def _fingerprint_of(ids: Any) -> dict[str, Any]:
    h = hashlib.blake2b(digest_size=16)
    values = ids.to_pylist()
    if values:
        h.update(("\n".join(values) + "\n").encode())
    return {"count": len(values), "hash": h.hexdigest()}


# -- building -------------------------------------------------------------------------------


def index_kind(kind: str | None = None) -> str:
    """The index kind setting: the argument, else ``$EVENTKG_INDEX``, else ``auto``."""
    kind = (kind or settings.index_kind() or "auto").lower()
    if kind not in INDEX_KINDS:
        raise IndexError_(f"unknown index kind {kind!r} (${ENV_INDEX} or index_kind); expected one of {', '.join(INDEX_KINDS)}")
    return kind


def build_faiss(
    vectors: np.ndarray, target_recall: float = TARGET_RECALL, seed: int = 0, kind: str | None = None
) -> tuple[faiss.Index, dict]:
    """An inner-product index over unit vectors of the given kind (see the module docstring)."""
    import faiss

    n, d = vectors.shape
    kind = index_kind(kind)
    if kind == "auto":
        kind = "flat" if n < IVF_THRESHOLD else "ivfpq"
    if kind == "flat" or n == 0:
        index = faiss.IndexFlatIP(d)
        index.add(vectors)
        return index, {"kind": "flat"}
    rng = np.random.default_rng(seed)
    if kind == "hnsw":
        return _build_hnsw(vectors, target_recall, rng)
    nlist = int(min(65536, max(64, 4 * math.sqrt(n))))
    nlist = min(nlist, max(1, n // 8))
    train = vectors[rng.choice(n, size=min(n, nlist * 64), replace=False)] if n > nlist * 64 else vectors
    if kind == "ivfpq":
        return _build_ivfpq(vectors, train, nlist, target_recall, seed, rng)
    return _build_ivf(vectors, train, nlist, target_recall, seed, rng)


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
    index: faiss.Index,
    set_param: Callable[[int], None],
    start: int,
    most: int,
    vectors: np.ndarray,
    picked: np.ndarray,
    target: float,
    k: int,
    margin: int,
) -> tuple[int, float]:
    import faiss

    base = vectors[picked]
    _, truth = faiss.knn(base, vectors, k + 1, metric=faiss.METRIC_INNER_PRODUCT)

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


# -- the index object -----------------------------------------------------------------------


@dataclass
class VectorIndex:
    """Event ids with their vectors in a FAISS index; ``built`` says whether this open encoded."""

    index: faiss.Index
    ids: np.ndarray
    manifest: dict[str, Any]
    embedder: Embedder
    built: bool = False
    _pos: dict[str, int] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {str(i): p for p, i in enumerate(self.ids)}
        return self._pos

    def __contains__(self, event_id: object) -> bool:
        return event_id in self.positions

    def vector(self, event_id: str) -> np.ndarray:
        """The stored vector of an indexed event."""
        pos = self.positions.get(event_id)
        if pos is None:
            raise IndexError_(f"event {event_id} is not in the vector index ({self.manifest.get('level') or 'all'})")
        return self.index.reconstruct(pos)

    def vectors(self, event_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of those ids that are indexed."""
        return {i: self.index.reconstruct(self.positions[i]) for i in event_ids if i in self.positions}

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """For each query vector, up to ``k`` (event id, cosine similarity), best first."""
        import faiss

        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, len(self.ids))
        if k <= 0:
            return [[] for _ in range(len(q))]
        if len(q) <= SMALL_QUERY:  # one thread: OpenMP's spinning threads cost more than they save
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            try:
                scores, pos = self.index.search(q, k)
            finally:
                faiss.omp_set_num_threads(threads)
        else:
            scores, pos = self.index.search(q, k)
        return [
            [(str(self.ids[p]), float(s)) for s, p in zip(srow, prow, strict=True) if p >= 0]
            for srow, prow in zip(scores, pos, strict=True)
        ]

    def search_text(self, text: str, k: int) -> list[tuple[str, float]]:
        return self.search(self.embedder.encode([text]), k)[0]


_LOADED: dict[tuple[str, str], tuple[VectorIndex, int]] = {}


def forget_loaded() -> None:
    """Drop the in-process copies (the next open reads the folder again)."""
    from eventkg.queries import adjacency

    _LOADED.clear()
    adjacency._LOADED.clear()


def open_index(
    store: GraphStore,
    model_name: str | None = None,
    level: str | None = None,
    *,
    rebuild: bool = False,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    notice: Notice | None = None,
    index_kind: str | None = None,
    device: str | None = None,
) -> VectorIndex:
    """The store's index for ``level`` (None: all events), built only when missing or stale.

    ``index_kind`` (else ``$EVENTKG_INDEX``) and ``device`` only matter when a build
    happens; see the module docstring for ``notice`` and ``progress``.
    """
    _level_filter(level)
    embedder = embedder or Embedder(model_name, device=device)
    folder = index_dir(store)
    stem = level or "all"
    key = (str(folder), stem)
    count = event_count(store)
    if not rebuild and key in _LOADED:
        vi, seen = _LOADED[key]
        if seen == count and vi.manifest["model"] == embedder.name:
            return vi
    table = _sorted_texts(store, level)
    fp = _fingerprint_of(table.column("id"))
    vi = None if rebuild else _load(folder, stem, embedder, fp)
    if vi is None:
        vi = _build(table, folder, stem, level, embedder, fp, progress, notice, index_kind, rebuild)
    _LOADED[key] = (replace(vi, built=False), count)  # later opens report a reuse
    return vi


def _manifest_path(folder: Path, stem: str) -> Path:
    return folder / f"{stem}.json"


def _load(folder: Path, stem: str, embedder: Embedder, fp: dict[str, Any]) -> VectorIndex | None:
    """The persisted index when its manifest matches the model and fingerprint, else None."""
    import faiss

    try:
        manifest = json.loads(_manifest_path(folder, stem).read_text())
    except (OSError, ValueError):
        return None
    if (
        manifest.get("format") != FORMAT
        or manifest.get("model") != embedder.name
        or manifest.get("fingerprint") != fp
    ):
        return None
    try:
        index = faiss.read_index(str(folder / f"{stem}.faiss"))
        ids = np.load(folder / f"{stem}.ids.npy", allow_pickle=False)
    except (OSError, RuntimeError, ValueError):
        return None
    if index.ntotal != len(ids):
        return None
    _prepare(index, manifest)
    os.utime(folder)  # marks recent use for the shared cache's LRU bound
    return VectorIndex(index, ids, manifest, embedder, built=False)


def _prepare(index: faiss.Index, manifest: dict[str, Any]) -> None:
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


def _fmt_seconds(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def _reset_unless_same_plan(work: Path, plan: dict[str, Any]) -> None:
    """Empty ``work`` and write ``plan`` there unless it holds chunks of this very plan."""
    plan_file = work / "plan.json"
    try:
        same = json.loads(plan_file.read_text()) == plan
    except (OSError, ValueError):
        same = False
    if not same:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        plan_file.write_text(json.dumps(plan, indent=2))


def _saved_chunks(files: list[Path], starts: list[int], n: int, plan: dict[str, Any]) -> dict[int, np.ndarray]:
    """The chunks already saved whole (right shape and dtype), by chunk number."""
    have: dict[int, np.ndarray] = {}
    for i, (start, f) in enumerate(zip(starts, files, strict=True)):
        try:
            got = np.load(f, allow_pickle=False)
        except (OSError, ValueError):
            continue
        if got.shape == (min(plan["chunk"], n - start), plan["dim"]) and got.dtype == np.float32:
            have[i] = got
    return have


def _announce(texts: list[str], done: int, work: Path, chunk: int, embedder: Embedder, what: str, notice: Notice) -> None:
    """Tell ``notice`` what a resumed build has, and the ETA of the rest measured on a probe batch."""
    n = len(texts)
    todo = n - done
    if done:
        notice(f"resuming the vector index of {what}: {done:,} of {n:,} already embedded in {work}")
    if todo < NOTICE_MIN:
        return
    sample = texts[:: max(1, n // PROBE)][:PROBE]
    embedder.encode(sample[:8])  # loads the model and warms up: not part of the rate
    t0 = time.perf_counter()
    embedder.encode(sample)
    rate = len(sample) / max(1e-9, time.perf_counter() - t0)
    notice(
        f"embedding {todo:,} texts of {what} with {embedder.name} on {embedder.device} "
        f"(batch {embedder.batch_size}): about {_fmt_seconds(todo / rate)} at ~{rate:,.0f} texts/s; "
        f"chunks of {chunk:,} are saved as they finish, so an interrupted build resumes"
    )


def _encode_chunks(
    texts: list[str],
    work: Path,
    plan: dict[str, Any],
    embedder: Embedder,
    what: str,
    progress: Progress | None,
    notice: Notice | None,
) -> np.ndarray:
    """Vectors of ``texts`` in order, encoded chunk by chunk; chunks already in ``work`` are reused."""
    n, chunk = len(texts), plan["chunk"]
    _reset_unless_same_plan(work, plan)
    starts = list(range(0, n, chunk))
    files = [work / f"chunk-{i:06d}.npy" for i in range(len(starts))]
    have = _saved_chunks(files, starts, n, plan)
    done = sum(len(v) for v in have.values())
    if notice:
        _announce(texts, done, work, chunk, embedder, what, notice)
    vectors = np.empty((n, plan["dim"]), dtype=np.float32)
    if progress:
        progress(done, n)
    for i, (start, f) in enumerate(zip(starts, files, strict=True)):
        stop = min(n, start + chunk)
        if i in have:
            vectors[start:stop] = have.pop(i)
            continue
        vecs = embedder.encode(texts[start:stop])
        _atomic(work, f, lambda tmp, v=vecs: _save_npy(tmp, v))
        vectors[start:stop] = vecs
        done += stop - start
        if progress:
            progress(done, n)
    return vectors


def _build(
    table: Any,
    folder: Path,
    stem: str,
    level: str | None,
    embedder: Embedder,
    fp: dict[str, Any],
    progress: Progress | None,
    notice: Notice | None,
    kind: str | None,
    rebuild: bool,
) -> VectorIndex:
    kind = index_kind(kind)
    ids = table.column("id").to_numpy(zero_copy_only=False).astype(str) if table.num_rows else np.zeros(0, dtype="<U20")
    texts = table.column("text").to_pylist()
    dim = embedder.dim
    work = folder / f"{stem}.build"
    if rebuild:
        shutil.rmtree(work, ignore_errors=True)
    plan = {"format": FORMAT, "model": embedder.name, "dim": int(dim), "fingerprint": fp, "chunk": ENCODE_CHUNK}
    what = f"{len(texts):,} {level or 'all'} events"
    t0 = time.perf_counter()
    if texts:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexError_(f"cannot create index folder {folder}: {exc.strerror}") from exc
        vectors = _encode_chunks(texts, work, plan, embedder, what, progress, notice)
    else:
        vectors = np.zeros((0, dim), dtype=np.float32)
    encode_s = time.perf_counter() - t0
    if notice and len(texts) >= IVF_THRESHOLD:
        notice(f"building the {kind} FAISS index over {what}")
    index, params = build_faiss(vectors, kind=kind)
    manifest = {
        "format": FORMAT,
        "model": embedder.name,
        "dim": int(dim),
        "level": level,
        "fingerprint": fp,
        "params": params,
        "size": len(ids),
        "encode_seconds": round(encode_s, 3),
        "device": embedder.device,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    _persist(folder, stem, index, ids, manifest)
    shutil.rmtree(work, ignore_errors=True)
    _prepare(index, manifest)
    return VectorIndex(index, ids, manifest, embedder, built=True)


def _save_npy(tmp: str, arr: np.ndarray) -> None:
    with open(tmp, "wb") as fh:
        np.save(fh, arr, allow_pickle=False)


def _new_temp_file(folder: Path) -> str:
    """A new empty ``.tmp-*`` file in ``folder`` with the mode ``open()`` gives (0666 less the umask).

    Why not ``tempfile.mkstemp``: its files are 0600, so an index shared through a group
    folder became unreadable to the others; reading the umask to chmod them meant changing
    it (``os.umask``), process-wide, at import. ``os.open`` applies the umask itself.
    """
    while True:
        tmp = folder / f".tmp-{secrets.token_hex(8)}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return str(tmp)


def _atomic(folder: Path, target: Path, write: Callable[[str], None]) -> None:
    """Write ``target`` through a temp file in ``folder`` and a rename (never half-written)."""
    tmp = _new_temp_file(folder)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _persist(folder: Path, stem: str, index: faiss.Index, ids: np.ndarray, manifest: dict[str, Any]) -> None:
    """Write atomically (temp file + rename in the same folder); the manifest goes last."""
    import faiss

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexError_(f"cannot create index folder {folder}: {exc.strerror}") from exc
    _bound_cache(folder)
    _manifest_path(folder, stem).unlink(missing_ok=True)  # a half-replaced set is never read as valid
    for leftover in folder.glob(".tmp-*"):
        leftover.unlink(missing_ok=True)
    try:
        _atomic(folder, folder / f"{stem}.faiss", lambda tmp: faiss.write_index(index, tmp))
        _atomic(folder, folder / f"{stem}.ids.npy", lambda tmp: _save_npy(tmp, ids))
        _atomic(folder, _manifest_path(folder, stem), lambda tmp: Path(tmp).write_text(json.dumps(manifest, indent=2)))
    except OSError as exc:
        raise IndexError_(f"cannot write vector index in {folder}: {exc.strerror}") from exc


def clear_index(store: GraphStore) -> Path | None:
    """Delete the store's index folder (and in-process copies); returns the folder removed."""
    from eventkg.queries import adjacency

    folder = index_dir(store)
    adjacency.clear(folder)
    for key in [k for k in _LOADED if k[0] == str(folder)]:
        del _LOADED[key]
    if folder.is_dir():
        shutil.rmtree(folder)
        return folder
    return None
