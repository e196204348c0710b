"""A store's vector index: :class:`VectorIndex`, :func:`open_index` and :func:`clear_index`.

Owns the fingerprint and the in-process reuse. One folder per store (:func:`~eventkg.queries.vectors.files.index_dir`:
``X.faiss/`` beside a LadybugDB file ``X``, else a bounded cache folder) holds the model's one vectors
file (:mod:`~eventkg.queries.vectors.store`) and, per level (``schema``, ``instance`` or ``all``), a
manifest naming a FAISS index built from a selection of its rows (kinds: :mod:`~eventkg.queries.vectors.faiss_build`,
:mod:`~eventkg.queries.vectors.compressed`; encoding: :mod:`~eventkg.queries.vectors.encode`).
Invariant: an index is reused only while its level's fingerprint (the count of its Event nodes and a
hash of their sorted ids; an id hashes its text and level) is unchanged, so a reused index always
indexes the store's current texts; in one process a loaded index is reused while the Event count is.
Vectors are unit length: inner product is cosine similarity. Measured figures: ``docs/performance.md``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import EVENT_LEVELS, check_event_level
from eventkg.progress import Notice, Progress
from eventkg.queries.errors import VectorIndexError
from eventkg.queries.graph import columnar
from eventkg.queries.vectors import compressed as vector_large
from eventkg.queries.vectors import faiss_build as vector_faiss
from eventkg.queries.vectors.compressed import build_large, open_large
from eventkg.queries.vectors.embeddings import Embedder
from eventkg.queries.vectors.faiss_build import IVF_THRESHOLD, build_faiss, resolve_index_kind, set_search_params
from eventkg.queries.vectors.files import (
    FORMAT,
    index_dir,
    level_manifests,
    read_level_index,
    read_manifest,
    write_level,
)
from eventkg.queries.vectors.store import (
    SharedVectors,
    as_id_bytes,
    ensure_vectors,
    open_vectors,
    rows_in,
    vectors_stem,
)

LEVELS = EVENT_LEVELS  # the data model's event levels
ENCODE_CHUNK = 16_384  # texts per saved chunk: what an interrupt can lose (docs/performance.md)
SMALL_QUERY = 8  # searches of at most this many queries run on one thread (see VectorIndex.search)


# -- fingerprint ----------------------------------------------------------------------------


def _level_filter(level: str | None) -> tuple[str, dict[str, Any]]:
    if level is None:
        return "", {}
    check_event_level(level, VectorIndexError)
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


# -- the index object -----------------------------------------------------------------------


@dataclass
class VectorIndex:
    """A level's event ids (sorted, bytes) and a FAISS index over their rows of the model's
    shared vectors file; ``built`` says whether this open built the level index."""

    index: Any
    ids: np.ndarray
    manifest: dict[str, Any]
    embedder: Embedder
    built: bool = False
    shared: SharedVectors | None = field(default=None, repr=False)
    rows: np.ndarray | None = field(default=None, repr=False)
    encoded: int = 0  # texts this open encoded into the shared vectors file

    def __len__(self) -> int:
        return len(self.ids)

    def position(self, event_id: str) -> int:
        """The event's position in the level (-1 when not indexed)."""
        return int(rows_in(self.ids, np.array([event_id.encode()]))[0]) if len(self.ids) else -1

    def __contains__(self, event_id: object) -> bool:
        return isinstance(event_id, str) and self.position(event_id) >= 0

    def row_vectors(self, positions: np.ndarray) -> np.ndarray:
        """The vectors of level positions, read from the shared vectors file."""
        if self.shared is None or self.rows is None:
            return np.stack([self.index.reconstruct(int(p)) for p in positions]) if len(positions) else np.zeros((0, 0))
        return np.array(self.shared.vecs[self.rows[np.asarray(positions, dtype=np.int64)]], dtype=np.float32)

    def vector(self, event_id: str) -> np.ndarray:
        """The stored vector of an indexed event."""
        pos = self.position(event_id)
        if pos < 0:
            raise VectorIndexError(f"event {event_id} is not in the vector index ({self.manifest.get('level') or 'all'})")
        return self.row_vectors(np.array([pos]))[0]

    def vectors(self, event_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of those ids that are indexed."""
        if not event_ids or not len(self.ids):
            return {}
        pos = rows_in(self.ids, np.array([i.encode() for i in event_ids]))
        found = [(i, p) for i, p in zip(event_ids, pos, strict=True) if p >= 0]
        vecs = self.row_vectors(np.array([p for _, p in found], dtype=np.int64))
        return {i: v for (i, _), v in zip(found, vecs, strict=True)}

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
            [(self.ids[p].decode(), float(s)) for s, p in zip(srow, prow, strict=True) if p >= 0]
            for srow, prow in zip(scores, pos, strict=True)
        ]

    def search_text(self, text: str, k: int) -> list[tuple[str, float]]:
        return self.search(self.embedder.encode([text]), k)[0]


_LOADED: dict[tuple[str, str], tuple[VectorIndex, int]] = {}


def forget_loaded() -> None:
    """Drop the in-process copies (the next open reads the folder again)."""
    from eventkg.queries.graph import adjacency

    _LOADED.clear()
    adjacency._LOADED.clear()


def open_index(
    store: GraphStore,
    embed_model: str | None = None,
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
    embedder = embedder or Embedder(embed_model, device=device)
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
    ids = as_id_bytes(table.column("id"))
    vi = None if rebuild else _load(folder, stem, embedder, fp, ids)
    if vi is None:
        vi = _build(table, ids, folder, stem, level, embedder, fp, progress, notice, index_kind, rebuild)
    _LOADED[key] = (replace(vi, built=False, encoded=0), count)  # later opens report a reuse
    return vi


def _load(folder: Path, stem: str, embedder: Embedder, fp: dict[str, Any], ids: np.ndarray) -> VectorIndex | None:
    """The persisted level index when its manifest matches the model and fingerprint and the
    shared vectors file holds every event of it, else None."""
    manifest = read_manifest(folder, stem)
    if not manifest or manifest.get("format") != FORMAT or manifest.get("model") != embedder.name:
        return None
    if manifest.get("fingerprint") != fp:
        return None
    shared = open_vectors(folder, embedder.name)
    if shared is None:
        return None
    rows = shared.rows_of(ids)
    if (rows < 0).any():
        return None
    index = _level_faiss(folder, manifest, shared, rows)
    if index is None:
        return None
    os.utime(folder)  # marks recent use for the shared cache's LRU bound
    return VectorIndex(index, ids, manifest, embedder, built=False, shared=shared, rows=rows)


def _level_faiss(folder: Path, manifest: dict[str, Any], shared: SharedVectors, rows: np.ndarray) -> Any:
    """The level's FAISS index: the flat one made from the vectors file, others read from theirs."""
    import faiss

    params = manifest["params"]
    if params["kind"] == "flat":
        flat = faiss.IndexFlatIP(int(manifest["dim"]))
        for a in range(0, len(rows), 65_536):
            flat.add(np.ascontiguousarray(shared.vecs[rows[a : a + 65_536]]))
        return flat
    index = read_level_index(folder, manifest)
    if index is None or index.ntotal != len(rows):
        return None
    if params.get("refine") == "mmap":
        return open_large(index, shared.vecs, rows, params)
    set_search_params(index, manifest)
    return index


def _build(
    table: Any,
    ids: np.ndarray,
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
    """Long: ensure the shared vectors, then the level's FAISS index from them (or another level's)."""
    kind = resolve_index_kind(kind)
    what = f"{len(ids):,} {level or 'all'} events"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VectorIndexError(f"cannot create index folder {folder}: {exc.strerror}") from exc
    if rebuild:
        drop_vectors(folder, embedder.name)
    t0 = time.perf_counter()
    shared, encoded = ensure_vectors(folder, embedder, ids, table.column("text"), complete=level is None, what=what,
                                     chunk=ENCODE_CHUNK, progress=progress, notice=notice)
    encode_s = time.perf_counter() - t0
    rows = shared.rows_of(ids)
    manifest = _same_events(folder, stem, embedder.name, fp, kind)
    index = None if manifest is None else _level_faiss(folder, manifest, shared, rows)
    if index is None:
        if notice and len(ids) >= IVF_THRESHOLD:
            notice(f"building the {kind} FAISS index over {what} (from the stored vectors: nothing re-encoded)")
        index, params = build_level_index(shared.vecs, rows, kind)
        file = None if params["kind"] == "flat" else f"index-{params['kind']}-{fp['hash'][:16]}.faiss"
        manifest = {"format": FORMAT, "model": embedder.name, "dim": int(shared.vecs.shape[1]), "fingerprint": fp,
                    "params": params, "size": len(ids), "file": file, "vectors": vectors_stem(embedder.name)}
        to_write = None if file is None else getattr(index, "ivf", index)
    else:
        to_write = None  # the file is there already
    manifest = {**manifest, "level": level, "encode_seconds": round(encode_s, 3), "encoded": encoded,
                "device": embedder.device if encoded else manifest.get("device", "cpu"),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    write_level(folder, stem, to_write, manifest)
    if manifest["params"]["kind"] == "flat":
        index = _level_faiss(folder, manifest, shared, rows)
    return VectorIndex(index, ids, manifest, embedder, built=True, shared=shared, rows=rows, encoded=encoded)


def _same_events(folder: Path, stem: str, embed_model: str, fp: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """Another level's manifest over the very same events (same model, kind asked): its file is shared."""
    for other, manifest in level_manifests(folder).items():
        if other == stem or manifest.get("format") != FORMAT or manifest.get("model") != embed_model:
            continue
        if manifest.get("fingerprint") == fp and kind in ("auto", manifest["params"]["kind"]):
            return manifest
    return None


def build_level_index(vecs: np.ndarray, rows: np.ndarray, kind: str) -> tuple[Any, dict]:
    """The FAISS index of ``kind`` over ``vecs[rows]``: flat below :data:`IVF_THRESHOLD` under
    ``auto``, the compressed :mod:`~eventkg.queries.vectors.compressed` kind from :data:`~eventkg.queries.vectors.compressed.LARGE_INDEX`
    vectors (``auto`` or ``ivfpq``), else :func:`~eventkg.queries.vectors.faiss_build.build_faiss`."""
    n = len(rows)
    if kind == "flat" or (kind == "auto" and n < vector_faiss.IVF_THRESHOLD) or n == 0:
        return None, {"kind": "flat"}
    if kind in ("auto", "ivfpq") and n >= vector_large.LARGE_INDEX:
        return build_large(vecs, rows)
    index, params = build_faiss(np.ascontiguousarray(vecs[rows]), kind=kind)
    return (None if params["kind"] == "flat" else index), params


def drop_vectors(folder: Path, embed_model: str) -> None:
    """Remove the model's vectors file and any encoding in progress (a ``rebuild``)."""
    stem = vectors_stem(embed_model)
    for suffix in (".json", ".npy", ".ids.npy"):
        (folder / f"{stem}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(folder / f"{stem}.build", ignore_errors=True)


def clear_index(store: GraphStore) -> Path | None:
    """Delete the store's index folder (and in-process copies); returns the folder removed."""
    from eventkg.queries.graph import adjacency

    folder = index_dir(store)
    adjacency.clear(folder)
    for key in [k for k in _LOADED if k[0] == str(folder)]:
        del _LOADED[key]
    if folder.is_dir():
        shutil.rmtree(folder)
        return folder
    return None
