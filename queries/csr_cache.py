"""The event graph's arrays kept on disk beside an embedded store, memory-mapped on later reads.

Reading ASER 10M/30M's events and event relations out of the engine takes tens of seconds
(~1 µs an edge, the engine's result and its Arrow copy), every time questions are asked. The
arrays of :class:`~eventkg.queries.csr.EventCSR` (ids, levels, the CSR, the types) are written
once to ``<index folder>/event_graph/`` (beside the vector index and the retrieval adjacency,
:func:`eventkg.queries.vectors.files.index_dir`), ~31 bytes an event and 5 an adjacency entry,
and memory-mapped by later reads: opening costs nothing, and only the pages a run touches
are read (into the page cache, shared, dropped by the kernel under pressure). The arrays just
built are swapped for their mapped copies too, so a first run holds no second copy.

They are read again when the store's Event count, its edge count of any event relation or of
``HAS_TYPE``, or the database file's (or its write-ahead log's) size or modification time
differ from what they were built from. Only embedded stores get them: a server's data has no
file to stamp. A folder that cannot be written (read-only media) leaves the arrays in memory.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 1
ARRAYS = ("ids", "level", "indptr", "nbr", "code", "type_of", "inst_indptr", "inst")
TEXTS = "texts.utf8"


def folder_of(store: Any) -> Path | None:
    """Where an embedded store's event graph is kept, or None (a server, an in-memory store)."""
    from eventkg.queries.vectors.files import index_dir

    url = str(getattr(store, "url", ""))
    if "://" in url and not url.startswith("ladybug://"):
        return None
    if not Path(url.removeprefix("ladybug://")).is_file():
        return None
    return index_dir(store) / "event_graph"


def _file_stamp(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def stamp(store: Any, types: list[str]) -> dict[str, Any]:
    """What the arrays are built from: counts, and the database files' sizes and times."""
    from eventkg.queries.columnar import edge_counts

    db = Path(str(store.url).removeprefix("ladybug://"))
    events = int(store.query("MATCH (e:Event) RETURN count(*) AS n")[0]["n"])
    return {"format": FORMAT, "events": events, "counts": edge_counts(store, types), "file": _file_stamp(db),
            "wal": _file_stamp(db.with_name(db.name + ".wal"))}


def load(folder: Path, want: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The kept arrays, memory-mapped, when they were built from ``want``; else None."""
    try:
        if json.loads((folder / "stamp.json").read_text()) != want:
            return None
        # seen as plain arrays: indexing an np.memmap object is ~10x slower
        return {a: np.asarray(np.load(folder / f"{a}.npy", mmap_mode="r", allow_pickle=False)) for a in ARRAYS}
    except (OSError, ValueError):
        return None


def build_and_keep(folder: Path, built_from: dict[str, Any], build: Callable[[], dict[str, np.ndarray]],
                   store: Any) -> tuple[dict[str, np.ndarray], bool]:
    """``build()`` the arrays, write them and the store's texts under ``folder`` (a new folder
    moved into place, the stamp last) and give them back memory-mapped: ``(arrays, True)``;
    where the folder cannot be written, ``(the arrays built, False)``."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".event_graph-", dir=folder.parent))
    except OSError:
        return build(), False
    arrays = build()
    try:
        for a in ARRAYS:
            np.save(tmp / f"{a}.npy", arrays[a], allow_pickle=False)
        del arrays  # the mapped copies are read from here on
        _write_texts(tmp, store)
        (tmp / "stamp.json").write_text(json.dumps(built_from))
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    except OSError:
        arrays = {a: np.load(tmp / f"{a}.npy", allow_pickle=False) for a in ARRAYS}
        shutil.rmtree(tmp, ignore_errors=True)
        return arrays, False
    kept = load(folder, built_from)
    if kept is None:
        raise OSError(f"the event graph just written to {folder} cannot be read back")
    return kept, True


def _write_texts(folder: Path, store: Any) -> None:
    from eventkg.queries.columnar import event_text_pages
    from eventkg.queries.event_ids import EventIds, as_bytes
    from eventkg.queries.event_texts import write_text_file

    ids = EventIds(np.load(folder / "ids.npy", mmap_mode="r", allow_pickle=False))
    pages = ((ids.positions_of(as_bytes(i)), t) for i, t in event_text_pages(store))
    start, length = write_text_file(folder / TEXTS, pages, len(ids))
    np.save(folder / "text_start.npy", start, allow_pickle=False)
    np.save(folder / "text_length.npy", length, allow_pickle=False)


def texts_of(folder: Path) -> Any:
    """The kept texts (:class:`~eventkg.queries.event_texts.FileTexts`)."""
    from eventkg.queries.event_texts import FileTexts

    start = np.load(folder / "text_start.npy", mmap_mode="r", allow_pickle=False)
    length = np.load(folder / "text_length.npy", mmap_mode="r", allow_pickle=False)
    return FileTexts(folder / TEXTS, np.asarray(start), np.asarray(length))


def clear(store: Any) -> None:
    """Drop the kept arrays of a store (the next read builds them again)."""
    folder = folder_of(store)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
