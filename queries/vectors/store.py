"""One file of vectors per (store, model): each event is embedded once, whatever level asks.

In the store's index folder (:func:`eventkg.queries.vectors.files.index_dir`), for a model whose
name hashes to ``H`` (:func:`vectors_stem`):

- ``vectors-H.npy``: float32 ``(n, dim)``, row ``i`` the unit vector of ``ids[i]``; read
  memory-mapped, so opening it costs no RAM and a big file is paged in
  only where it is read;
- ``vectors-H.ids.npy``: the event ids of the rows, sorted, as bytes (12 B per event);
- ``vectors-H.json``: the manifest (model, dim, count, hash of the ids), written last;
- ``vectors-H.build/``: the chunks of an encoding in progress (:mod:`eventkg.queries.vectors.encode`)
  and the ids they are of; a build asked for other events first merges the whole chunks an
  interrupted one left (:func:`salvage_chunks`), so no text is encoded twice.

:func:`ensure_vectors` is asked for a set of events (a level's, or all): rows the file already
has are kept, only the missing events are encoded (in saved chunks, resumable, with the ETA
notice), and one streaming pass writes the merged file in blocks of :data:`MERGE_BLOCK` rows
(memory bounded by the block, not the store). An event id is a hash of its text and level, so
a row stays valid as long as its id exists. The file grows to the union of what was asked;
asked for all events, it also drops rows of events no longer in the store.

Vectors of a format-1 folder (per-level indexes, each holding its own copy of the vectors)
are taken from those indexes instead of being encoded again (:func:`harvest_old`): exact for
the ``flat``, ``ivf`` and ``hnsw`` kinds, float16-rounded (|error| < 1e-3) for ``ivfpq``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eventkg.progress import Notice, Progress
from eventkg.queries.vectors.encode import (
    ChunkRows,
    encode_chunk_files,
    fingerprint_ids,
    prepare_work,
    saved_chunks,
)
from eventkg.queries.vectors.files import atomic_write, new_temp_file, save_npy

VECTORS_FORMAT = 1
MERGE_BLOCK = 65_536  # rows per block of the merge pass (its memory: docs/performance.md)

RowReader = Callable[[int, int], np.ndarray]


@dataclass
class SharedVectors:
    """The memory-mapped vectors of one model: ``ids`` (sorted bytes) and ``vecs`` (float32)."""

    ids: np.ndarray
    vecs: np.ndarray
    manifest: dict[str, Any]

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """The row of each id (bytes), -1 where the file has none."""
        if len(ids) == len(self.ids) and np.array_equal(ids, self.ids):  # the file is this level's
            return np.arange(len(ids), dtype=np.int64)
        return rows_in(self.ids, ids)


def rows_in(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Positions of ``ids`` in ``sorted_ids``, -1 for those absent."""
    if len(sorted_ids) == 0 or len(ids) == 0:
        return np.full(len(ids), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == ids, pos, -1).astype(np.int64)


def as_id_bytes(ids: Any) -> np.ndarray:
    """Event ids (a list, pyarrow or numpy array of str) as a numpy bytes array.

    A pyarrow column of ids of one length (every stable id: 12 characters) is read straight
    from its data buffer, without a Python string per id (10M ids: 200 MB, not ~1.5 GB)."""
    if hasattr(ids, "combine_chunks") or hasattr(ids, "buffers"):
        fixed = _fixed_width(ids.combine_chunks() if hasattr(ids, "combine_chunks") else ids)
        if fixed is not None:
            return fixed
        ids = ids.to_numpy(zero_copy_only=False)
    arr = np.asarray(ids)
    if arr.dtype.kind == "S":
        return arr
    return np.char.encode(arr.astype(str), "utf-8") if len(arr) else np.zeros(0, dtype="S20")


def _fixed_width(arr: Any) -> np.ndarray | None:
    import pyarrow as pa

    if len(arr) == 0 or arr.null_count or arr.type not in (pa.string(), pa.large_string()):
        return None
    off_type = np.int64 if arr.type == pa.large_string() else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=off_type)[arr.offset : arr.offset + len(arr) + 1]
    width = int(offsets[1] - offsets[0])
    if width == 0 or not (np.diff(offsets) == width).all():
        return None
    data = arr.buffers()[2]
    return np.frombuffer(data, dtype=f"S{width}", count=len(arr), offset=int(offsets[0])).copy()


def vectors_stem(embed_model: str) -> str:
    """``vectors-<hash of the model name>``: one set of files per model."""
    return "vectors-" + hashlib.blake2b(embed_model.encode(), digest_size=6).hexdigest()


def open_vectors(folder: Path, embed_model: str) -> SharedVectors | None:
    """The model's vectors file, memory-mapped, when its manifest is whole and matches."""
    stem = vectors_stem(embed_model)
    try:
        manifest = json.loads((folder / f"{stem}.json").read_text())
        if manifest.get("format") != VECTORS_FORMAT or manifest.get("model") != embed_model:
            return None
        ids = np.load(folder / f"{stem}.ids.npy", mmap_mode="r", allow_pickle=False)
        vecs = np.load(folder / f"{stem}.npy", mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    if vecs.shape != (manifest["count"], manifest["dim"]) or len(ids) != manifest["count"] or vecs.dtype != np.float32:
        return None
    return SharedVectors(ids, vecs, manifest)


def ensure_vectors(
    folder: Path,
    embedder: Any,
    ids: np.ndarray,
    texts: Any,
    *,
    complete: bool,
    what: str,
    chunk: int,
    progress: Progress | None = None,
    notice: Notice | None = None,
) -> tuple[SharedVectors, int]:
    """The model's vectors file holding every id of ``ids`` (sorted bytes; ``texts`` aligned).

    Returns it and how many texts were encoded into it by this call (not counting the ETA probe). ``complete``: ``ids`` are all the
    store's events with a text, so rows of other ids are dropped. ``chunk``: texts per saved chunk.
    """
    embed_model = embedder.name
    have = open_vectors(folder, embed_model)
    dim = int(have.manifest["dim"]) if have is not None else int(embedder.dim)  # no model load to reuse a file
    have = harvest_old(folder, embed_model, dim, ids, have)
    work = folder / f"{vectors_stem(embed_model)}.build"
    missing, keep, plan = _plan(have, ids, complete, embed_model, dim, chunk)
    if _other_plan(work, plan):
        salvaged = salvage_chunks(folder, work, embed_model, dim, have)
        if salvaged is not have:
            have = salvaged
            missing, keep, plan = _plan(have, ids, complete, embed_model, dim, chunk)
    if len(missing) == 0 and keep is None and have is not None:
        return have, 0
    todo = ids[missing]
    chunks: ChunkRows | None = None
    if len(todo):
        if prepare_work(work, plan):
            save_npy(str(work / "ids.npy"), todo)  # what the chunks are of, should another plan salvage them
        take = texts.take(missing) if hasattr(texts, "take") else [texts[i] for i in missing]
        chunks = encode_chunk_files(take, work, plan, embedder, what, progress, notice)
    merged = merge_vectors(folder, embed_model, dim, have, keep, todo, chunks.rows if chunks else _no_rows(dim))
    shutil.rmtree(work, ignore_errors=True)
    return merged, (len(todo) - chunks.resumed) if chunks else 0


def _plan(
    have: SharedVectors | None, ids: np.ndarray, complete: bool, embed_model: str, dim: int, chunk: int
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """Positions of ``ids`` to encode, the mask of ``have``'s rows to keep (None: all), the plan."""
    old_ids = have.ids if have is not None else np.zeros(0, dtype=ids.dtype)
    missing = np.flatnonzero(rows_in(old_ids, ids) < 0)
    keep = None
    if complete and have is not None:
        keep = rows_in(ids, old_ids) >= 0
        keep = None if keep.all() else keep
    plan = {"format": VECTORS_FORMAT, "model": embed_model, "dim": dim, "fingerprint": fingerprint_ids(ids[missing]),
            "chunk": chunk}
    return missing, keep, plan


def _other_plan(work: Path, plan: dict[str, Any]) -> bool:
    try:
        return json.loads((work / "plan.json").read_text()) != plan
    except (OSError, ValueError):
        return False


def salvage_chunks(folder: Path, work: Path, embed_model: str, dim: int, have: SharedVectors | None) -> SharedVectors | None:
    """``have`` with the whole chunks an interrupted encoding left in ``work`` merged in, so a
    build asked for other events (another level, a grown graph) does not encode them again."""
    try:
        plan = json.loads((work / "plan.json").read_text())
        todo = np.load(work / "ids.npy", allow_pickle=False)
    except (OSError, ValueError):
        return have
    if plan.get("model") != embed_model or plan.get("dim") != dim or len(todo) != plan["fingerprint"]["count"]:
        return have
    chunk, n = plan["chunk"], len(todo)
    starts = list(range(0, n, chunk))
    files = [work / f"chunk-{i:06d}.npy" for i in range(len(starts))]
    whole = saved_chunks(files, starts, n, plan)
    if not whole:
        return have
    reader = ChunkRows(files, chunk, n, dim)
    take = np.concatenate([np.arange(starts[i], min(n, starts[i] + chunk)) for i in sorted(whole)])
    have_ids = have.ids if have is not None else np.zeros(0, dtype=todo.dtype)
    take = take[rows_in(have_ids, todo[take]) < 0]
    if len(take) == 0:
        return have

    def read(a: int, b: int) -> np.ndarray:
        lo = int(take[a])
        return reader.rows(lo, int(take[b - 1]) + 1)[take[a:b] - lo]

    return merge_vectors(folder, embed_model, dim, have, None, todo[take], read)


def _no_rows(dim: int) -> RowReader:
    return lambda a, b: np.zeros((b - a, dim), dtype=np.float32)


def merge_vectors(
    folder: Path,
    embed_model: str,
    dim: int,
    old: SharedVectors | None,
    keep: np.ndarray | None,
    add_ids: np.ndarray,
    read_add: RowReader,
) -> SharedVectors:
    """Write the model's vectors file: ``old``'s kept rows and ``add_ids`` (sorted, rows from
    ``read_add(a, b)``), in id order, one block of :data:`MERGE_BLOCK` rows at a time."""
    old_ids = old.ids if old is not None else np.zeros(0, dtype=add_ids.dtype)
    keep_rows = np.arange(len(old_ids)) if keep is None else np.flatnonzero(keep)
    all_ids = np.concatenate([np.asarray(old_ids)[keep_rows], add_ids])
    order = np.argsort(all_ids, kind="stable")
    out_ids, n, split = all_ids[order], len(all_ids), len(keep_rows)
    del all_ids
    stem = vectors_stem(embed_model)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").unlink(missing_ok=True)  # a half-replaced set is never read as valid
    tmp = new_temp_file(folder)
    try:
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, dim))
        for a in range(0, n, MERGE_BLOCK):
            src = order[a : a + MERGE_BLOCK]
            new = src >= split
            block = np.empty((len(src), dim), dtype=np.float32)
            if (~new).any():
                block[~new] = old.vecs[keep_rows[src[~new]]]  # type: ignore[union-attr]
            if new.any():
                lo, hi = int(src[new][0]) - split, int(src[new][-1]) - split + 1  # a contiguous run
                block[new] = read_add(lo, hi)
            out[a : a + len(src)] = block
        out.flush()
        del out
        Path(tmp).replace(folder / f"{stem}.npy")
    finally:
        Path(tmp).unlink(missing_ok=True)
    atomic_write(folder, folder / f"{stem}.ids.npy", lambda t: save_npy(t, out_ids))
    manifest = {"format": VECTORS_FORMAT, "model": embed_model, "dim": dim, "count": n, **fingerprint_ids(out_ids)}
    atomic_write(folder, folder / f"{stem}.json", lambda t: Path(t).write_text(json.dumps(manifest, indent=2)))
    got = open_vectors(folder, embed_model)
    assert got is not None
    return got


def harvest_old(folder: Path, embed_model: str, dim: int, wanted: np.ndarray, have: SharedVectors | None) -> SharedVectors | None:
    """``have`` with the rows of ``wanted`` ids it lacks that format-1 per-level indexes of
    ``embed_model`` in ``folder`` hold, taken from them (nothing is encoded)."""
    olds = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if manifest.get("format") == 1 and manifest.get("model") == embed_model and manifest.get("dim") == dim:
            olds.append((int(manifest.get("size") or 0), path.stem, manifest))
    if not olds:
        return have
    import faiss

    for _, stem, manifest in sorted(olds, reverse=True):  # the biggest first: usually all the others' rows
        try:
            index = faiss.read_index(str(folder / f"{stem}.faiss"))
            old_ids = as_id_bytes(np.load(folder / f"{stem}.ids.npy", allow_pickle=False))
        except (OSError, RuntimeError, ValueError):
            continue
        if manifest["params"]["kind"] == "ivf":
            faiss.extract_index_ivf(index).make_direct_map()
        order = np.argsort(old_ids, kind="stable")
        sorted_old = old_ids[order]
        have_ids = have.ids if have is not None else np.zeros(0, dtype=sorted_old.dtype)
        pick = np.flatnonzero((rows_in(wanted, sorted_old) >= 0) & (rows_in(have_ids, sorted_old) < 0))
        if len(pick) == 0:
            continue
        positions = order[pick]

        def read(a: int, b: int, positions: np.ndarray = positions, index: Any = index) -> np.ndarray:
            return np.asarray(index.reconstruct_batch(positions[a:b].astype(np.int64)), dtype=np.float32)

        have = merge_vectors(folder, embed_model, dim, have, None, sorted_old[pick], read)
    return have
