"""The event graph's arrays kept on disk beside an embedded store, memory-mapped on later reads.

Reading a big graph's events, texts and event relations out of the engine grows with the graph
(figures: ``docs/performance.md``), every time questions are asked. The arrays of
:class:`~eventkg.queries.graph.csr.EventCSR` (ids, levels, the CSR, the types) and every text (one
UTF-8 file, placed by node offset: no lookup by id) are written once to
``<index folder>/event_graph/`` (beside the vector index and the retrieval adjacency,
:func:`eventkg.queries.vectors.files.index_dir`), ~31 bytes an event and 5 an adjacency entry,
and memory-mapped by later reads: opening costs nothing, and only the pages a run touches
are read (into the page cache, shared, dropped by the kernel under pressure). The arrays just
built are swapped for their mapped copies too, so a first run holds no second copy. The
engine writes the columns to CSV files in the new folder (:class:`~eventkg.queries.graph.columnar.Export`),
read back once the opening that wrote them is closed. A read-only store is read through
read-only openings of its own (:func:`reader`), closed once read, so the pages the engine kept
in its buffer pool go with them: the nodes in this thread while a second thread reads the edges,
then, once the arrays are built, the texts in that thread while the caller asks its questions
(:class:`~eventkg.queries.graph.event_texts.PendingTexts`).

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
from concurrent.futures import ThreadPoolExecutor
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
    from eventkg.queries.graph.columnar import edge_counts

    db = Path(str(store.url).removeprefix("ladybug://"))
    events = int(store.query("MATCH (e:Event) RETURN count(*) AS n")[0]["n"])
    return {"format": FORMAT, "events": events, "counts": edge_counts(store, types), "file": _file_stamp(db),
            "wal": _file_stamp(db.with_name(db.name + ".wal"))}


def load(folder: Path, want: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The kept arrays, memory-mapped, when they were built from ``want``; else None."""
    try:
        if json.loads((folder / "stamp.json").read_text()) != want:
            return None
        return _mapped(folder)
    except (OSError, ValueError):
        return None


def build_and_keep(folder: Path, built_from: dict[str, Any], store: Any, types: list[str],
                   build: Callable[[Any], tuple[dict[str, np.ndarray], np.ndarray]]) -> tuple[dict[str, np.ndarray], Any]:
    """Read the Event nodes and the edges of ``types`` (:mod:`eventkg.queries.graph.columnar`),
    ``build(columns)`` the arrays (and the position of each engine node offset), write them and
    the store's texts under ``folder`` (a new folder moved into place, the stamp last) and give
    them back memory-mapped, with the texts (``(arrays, texts)``); where the folder cannot be
    written, ``(the arrays built, None)`` (texts read from the store by id). The reads go through :func:`reader`.

    A read-only store is read through three openings (:func:`_side_reads`): the edges in a
    second thread while this one reads the nodes, then, once the arrays are built, the texts in
    that thread while the caller goes on: ``texts`` is then a
    :class:`~eventkg.queries.graph.event_texts.PendingTexts` (the first text asked for waits; the
    folder is moved into place once the texts are written)."""
    from eventkg.queries.graph import columnar
    from eventkg.queries.graph.csr import _each

    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".event_graph-", dir=folder.parent))
    except OSError:
        return build(columnar.event_graph_arrays(store, types))[0], None
    side = ThreadPoolExecutor(1, thread_name_prefix="event-graph-read") if _side_reads(store) else None
    try:
        cols, top = _read_columns(store, types, built_from.get("counts"), tmp, side)
        arrays, rank = build(cols)
        del cols
        try:  # two files at a time (writing is outside the GIL)
            _each(_save, [(tmp / f"{a}.npy", arrays[a]) for a in ARRAYS], 2)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            return arrays, None
        del arrays  # the mapped copies are read from here on
        kept = _mapped(tmp)
        if side is None:
            return kept, _finish(tmp, folder, built_from, store, rank, top, kept["ids"])
        from eventkg.queries.graph.event_texts import PendingTexts

        return kept, PendingTexts(side.submit(_finish, tmp, folder, built_from, store, rank, top, kept["ids"]))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if side is not None:
            side.shutdown(wait=False)  # its last job (the texts) runs on; the interpreter waits for it at exit


def _read_columns(store: Any, types: list[str], counts: dict[str, int] | None, tmp: Path,
                  side: ThreadPoolExecutor | None) -> tuple[Any, int | None]:
    """The Event nodes and edges of ``types`` as :class:`~eventkg.queries.graph.columnar.GraphColumns`
    (the edges pending in ``side`` where given), exported through files in ``tmp`` where it can,
    and the highest Event node offset."""
    from eventkg.queries.graph import columnar

    with reader(store) as r:
        top = columnar.max_event_offset(r)
        via = tmp if columnar.offset_kind(top) is np.int32 else None
        if side is not None:
            cols_pending = side.submit(_read_edges, store, types, top, counts, via)
        if via is None:
            cols = columnar.event_node_columns(r, top)
        else:
            nodes = columnar.export_nodes(r, via)
        if side is None:
            edges = _edges(r, types, top, counts, via)
    if via is not None:  # read back once the opening (and its pages) is gone
        cols = columnar.exported_node_columns(nodes, top)
    if side is None:
        cols.edges = edges() if callable(edges) else edges
    else:
        cols.pending = cols_pending.result
    return cols, top


def _save(job: tuple[Path, np.ndarray]) -> None:
    np.save(job[0], job[1], allow_pickle=False)


def _mapped(folder: Path) -> dict[str, np.ndarray]:
    # seen as plain arrays: indexing an np.memmap object is ~10x slower
    return {a: np.asarray(np.load(folder / f"{a}.npy", mmap_mode="r", allow_pickle=False)) for a in ARRAYS}


def _finish(tmp: Path, folder: Path, built_from: dict[str, Any], store: Any, rank: np.ndarray,
            top: int | None, ids: np.ndarray) -> Any:
    """Read the texts into ``tmp``, place them by position, write the stamp and move ``tmp`` to
    ``folder``: the texts (:func:`texts_of`), or where that cannot be written, texts read from
    the store by id (``ids``: the sorted ids)."""
    try:
        start, length = _read_texts(store, tmp, top)
        _place_texts(tmp, rank, start, length, int((rank >= 0).sum()))
        (tmp / "stamp.json").write_text(json.dumps(built_from))
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    except OSError:
        from eventkg.queries.graph.event_ids import EventIds
        from eventkg.queries.graph.event_texts import StoreTexts

        shutil.rmtree(tmp, ignore_errors=True)
        return StoreTexts(store, EventIds(ids))
    return texts_of(folder)


def _side_reads(store: Any) -> bool:
    """Whether the edges and texts are read beside the nodes, in a second thread: only through
    openings of their own (a read-only embedded store), whose engine calls run at once (calls
    through one database wait for each other) and outside the GIL."""
    from eventkg.queries.graph.columnar import _ladybug_conn

    return bool(getattr(store, "read_only", False)) and _ladybug_conn(store) is not None


def _edges(store: Any, types: list[str], top: int | None, counts: dict[str, int] | None, via: Path | None) -> Any:
    """The edges read in pages, or (``via``: a folder) exported there: a callable reading them back."""
    from eventkg.queries.graph import columnar

    if via is None:
        return columnar.event_edge_columns(store, types, top, counts)
    exports = columnar.export_edges(store, types, top, via, counts)
    return lambda: columnar.edge_columns_of(exports, top)


def _read_edges(store: Any, types: list[str], top: int | None, counts: dict[str, int] | None,
                via: Path | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The edges of ``types`` through an opening of their own; exported (``via``: a folder) a type
    at a time, the most edges first, each file read back in one more thread while the engine
    writes the next (one parsing thread: the engine's export takes the other cores)."""
    from eventkg.queries.graph import columnar

    if via is None or counts is None:
        with reader(store) as r:
            edges = _edges(r, types, top, counts, via)
        return edges() if callable(edges) else edges  # read back once the opening is gone
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    with ThreadPoolExecutor(1, thread_name_prefix="event-graph-parse") as parse:
        with reader(store) as r:
            read = [parse.submit(columnar.edge_columns_of, columnar.export_edges(r, [t], top, via, counts), top, False)
                    for t in sorted(types, key=lambda t: -counts.get(t, 0))]
        for done in read:
            out.update(done.result())
    return {t: out[t] for t in types}


def _read_texts(store: Any, folder: Path, top: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The texts, in node-offset pages, written to ``folder`` as read; ``(start, length)`` per offset."""
    from eventkg.queries.graph import columnar
    from eventkg.queries.graph.event_texts import write_text_file

    n = (top + 1) if top is not None else 0
    with reader(store) as r:
        # an opening of its own is read beside the questions: one engine thread, one parsing
        export = columnar.export_texts(r, folder, threads=1 if r is not store else None)
    pages = columnar.text_pages_of(export, use_threads=r is store)
    return write_text_file(folder / TEXTS, pages, n)  # read back once the opening is gone


def _place_texts(folder: Path, rank: np.ndarray, start: np.ndarray, length: np.ndarray, n: int) -> None:
    """Where each position's text lies (``rank[offset]``: the position of a node offset)."""
    at = np.zeros(n, dtype=np.int64)
    size = np.full(n, -1, dtype=np.int32)
    have = rank >= 0
    at[rank[have]] = start[:len(rank)][have]
    size[rank[have]] = length[:len(rank)][have]
    np.save(folder / "text_start.npy", at, allow_pickle=False)
    np.save(folder / "text_length.npy", size, allow_pickle=False)


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
    """The kept texts (:class:`~eventkg.queries.graph.event_texts.FileTexts`)."""
    from eventkg.queries.graph.event_texts import FileTexts

    start = np.load(folder / "text_start.npy", mmap_mode="r", allow_pickle=False)
    length = np.load(folder / "text_length.npy", mmap_mode="r", allow_pickle=False)
    return FileTexts(folder / TEXTS, np.asarray(start), np.asarray(length))


def clear(store: Any) -> None:
    """Drop the kept arrays of a store (the next read builds them again)."""
    folder = folder_of(store)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
