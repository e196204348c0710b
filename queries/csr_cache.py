"""The event graph's arrays kept on disk beside an embedded store, memory-mapped on later reads.

Reading a big graph's events, texts and event relations out of the engine grows with the graph
(figures: ``docs/performance.md``), every time questions are asked. The arrays of
:class:`~eventkg.queries.csr.EventCSR` (ids, levels, the CSR, the types) and every text (one
UTF-8 file, placed by node offset: no lookup by id) are written once to
``<index folder>/event_graph/`` (beside the vector index and the retrieval adjacency,
:func:`eventkg.queries.vectors.files.index_dir`), ~31 bytes an event and 5 an adjacency entry,
and memory-mapped by later reads: opening costs nothing, and only the pages a run touches
are read (into the page cache, shared, dropped by the kernel under pressure). The arrays just
built are swapped for their mapped copies too, so a first run holds no second copy. A
read-only store is read through read-only openings of its own (:func:`reader`), closed once
read: the pages the engine kept in its buffer pool go with them, before the arrays are built
and before the questions are asked.

They are read again when the store's Event count, its edge count of any event relation or of
``HAS_TYPE``, or the database file's (or its write-ahead log's) size or modification time
differ from what they were built from. Only embedded stores get them: a server's data has no
file to stamp. A folder that cannot be written (read-only media) leaves the arrays in memory.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def build_and_keep(folder: Path, built_from: dict[str, Any], store: Any, read: Callable[[Any], Any],
                   build: Callable[[Any], tuple[dict[str, np.ndarray], np.ndarray]]) -> tuple[dict[str, np.ndarray], bool]:
    """``read(reader)`` the columns, ``build(columns)`` the arrays (and the position of each engine
    node offset), write them and the store's texts under ``folder`` (a new folder moved into
    place, the stamp last) and give them back memory-mapped: ``(arrays, True)``; where the folder
    cannot be written, ``(the arrays built, False)``. The reads go through :func:`reader`."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".event_graph-", dir=folder.parent))
    except OSError:
        return build(read(store))[0], False
    with reader(store) as r:
        cols = read(r)
    arrays, rank = build(cols)
    del cols
    try:
        for a in ARRAYS:
            np.save(tmp / f"{a}.npy", arrays[a], allow_pickle=False)
        n = len(arrays["ids"])
        del arrays  # the mapped copies are read from here on
        _write_texts(tmp, store, rank, n)
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


def _write_texts(folder: Path, store: Any, rank: np.ndarray, n: int) -> None:
    """The texts read in node-offset pages, each placed at its position (``rank[offset]``)."""
    from eventkg.queries.columnar import event_text_pages
    from eventkg.queries.event_texts import write_text_file

    with reader(store) as r:
        pages = ((rank[k], t) for k, t in event_text_pages(r))
        start, length = write_text_file(folder / TEXTS, pages, n)
    np.save(folder / "text_start.npy", start, allow_pickle=False)
    np.save(folder / "text_length.npy", length, allow_pickle=False)


@contextmanager
def reader(store: Any) -> Iterator[Any]:
    """The store a whole-graph read goes through: for a read-only store, a second read-only opening,
    closed (and the heap trimmed) when the read is done, so the pages the engine kept in its
    buffer pool (up to half the memory budget) are handed back before the arrays are built and
    the questions asked; a store open for writing is read itself (its write-ahead log is its own)."""
    if not getattr(store, "read_only", False):
        yield store
        return
    from eventkg.graphstore import open_store
    from eventkg.graphstore.ladybug.engine import release_free_memory

    other = open_store(str(store.url), read_only=True)
    try:
        yield other
    finally:
        other.close()
        release_free_memory()


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
