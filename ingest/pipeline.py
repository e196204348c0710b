"""The shared ingest pipeline: parse -> validate -> normalise -> batch -> store.

A loader turns its files into a stream of :class:`Row` (one per source row, already
validated and normalised into typed node/edge rows) or :class:`Reject` (a bad source row
and why). Loaders of very big files may instead yield :class:`Chunk` items: many source
rows at once as Arrow tables (``Batch.node_tables``), so no Python object is made per row. :func:`run` batches the rows, dedupes them inside a batch, and writes each batch
with ``store.write_batch`` (atomic). With ``on_error="fail"`` the first reject raises a
one-line :class:`~eventkg.ingest.errors.BadRowError` *before* its batch is written, so nothing of
that batch lands; with ``on_error="skip"`` good rows land and rejects are appended to the
rejects file as JSON lines ``{"file", "line", "reason", "raw"}``.

Re-running is idempotent because the store upserts (same ids, same rows). When an ingest
completes, the store records the absolute folder it read (:meth:`GraphStore.record_ingest_origin`,
outside the graph's data: the same files from two folders give the same graph).
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from eventkg.errors import EventKGError
from eventkg.graphstore.base import Batch, GraphStore, WriteResult, merge_props
from eventkg.graphstore.rows import EdgeRow, NodeRow
from eventkg.ingest.checks import Keys, check_batch_size, check_rejects_path
from eventkg.ingest.errors import (
    BadRowError,
    EmptyInputError,
    IngestError,
    MissingFilesError,
    PartialIngestError,
    RowError,
)
from eventkg.ingest.registry import DEFAULT_BATCH_SIZE
from eventkg.progress import Progress

ON_ERROR = ("fail", "skip")
BOM = b"\xef\xbb\xbf"

NodeRows = list[tuple[str, NodeRow]]
EdgeRows = list[tuple[str, EdgeRow]]


@dataclass(slots=True)
class Row:
    """One good source row, as the typed node and edge rows it becomes."""

    nodes: NodeRows
    edges: EdgeRows
    # (key, content) pairs naming what the row defines, checked by :class:`Keys` across the ingest
    keys: list[tuple[Any, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Reject:
    """One bad source row: where it is, why it was refused, and the raw text/values."""

    file: str
    line: int | str | None
    reason: str
    raw: Any = None


@dataclass(slots=True)
class Chunk:
    """``rows`` consecutive source rows (good and rejected) as node/edge Arrow tables plus rejects.

    The loader sizes chunks itself (and honours ``limit`` by reading no further); the
    pipeline batches chunks until ``batch_size`` table rows are pending. Rejects are handled
    before the chunk's tables join a batch, so in fail mode nothing of that batch lands.
    """

    rows: int
    nodes: dict[str, Any] = field(default_factory=dict)  # label -> pyarrow.Table
    edges: dict[str, Any] = field(default_factory=dict)  # TYPE -> pyarrow.Table
    rejects: list[Reject] = field(default_factory=list)
    # the loader sends no more nodes: the pipeline writes what is pending and lets the store
    # write the nodes it holds now (``nodes_done()``), while the loader reads the edges
    nodes_done: bool = False
    # every edge's ends are nodes of earlier chunks of this ingest (``Batch.ends_known``)
    ends_known: bool = False


@dataclass
class IngestReport:
    """What an ingest did (the CLI prints it as the summary table)."""

    source: str
    files: list[str] = field(default_factory=list)
    rows: int = 0  # source rows read, good and rejected
    rejected: int = 0
    nodes: dict[str, int] = field(default_factory=dict)  # node rows written per label (deduped per batch)
    edges: dict[str, int] = field(default_factory=dict)  # edge rows written per type
    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    seconds: float = 0.0
    rejects_file: str | None = None
    limited: bool = False  # stopped early because of ``limit``
    extra: dict[str, int] = field(default_factory=dict)  # a loader's own counts (ev2: instances_without_text)
    repeated: int = 0  # source rows that repeat an earlier row's key with the same content (stored once)
    left_out: list[str] = field(default_factory=list)  # parts of the dataset folder missing (accepted with partial=True)

    @property
    def good(self) -> int:
        return self.rows - self.rejected

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["good"] = self.good
        return d


def resolve_files(path: str | Path, source: str, accept: Callable[[Path], bool], expected: str) -> list[Path]:
    """``path`` itself if it is a file, else the accepted files under the folder (sorted).

    Raises :class:`MissingFilesError` when the path is missing or the folder holds none.
    """
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.exists():
        raise MissingFilesError(str(p), None, f"no such file or folder for {source}")
    files = sorted(f for f in p.rglob("*") if f.is_file() and accept(f))
    if not files:
        raise MissingFilesError(str(p), None, f"folder holds no {source} files (expected {expected})")
    return files


def json_reason(exc: json.JSONDecodeError) -> str:
    """``Expecting ',' delimiter at column 7``: the decoder's message, its trailing "at" dropped."""
    msg = exc.msg.removesuffix(" at").removesuffix(" at:")
    return f"{msg} at column {exc.colno}"


def utf8_reason(exc: UnicodeDecodeError, data: bytes) -> str:
    """``invalid UTF-8 (byte 0xff at column 7)``: the first byte that is not UTF-8, 1-based column."""
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    return f"invalid UTF-8 (byte 0x{data[exc.start]:02x} at column {exc.start - line_start + 1})"


def read_json_lines(path: Path) -> Iterator[tuple[int, str, Any] | Reject]:
    """(line number, raw line, parsed object) per non-blank line; a broken line is a Reject.

    Lines are read as bytes and decoded one at a time, so a byte that is not UTF-8 rejects its
    line only; a UTF-8 byte-order mark at the start of the file is dropped (the rows are the same
    as without it). An empty file yields one Reject (line 0) so that ``--on-error`` decides.
    """
    seen = False
    with path.open("rb") as fh:
        for n, data in enumerate(fh, 1):
            if n == 1 and data.startswith(BOM):
                data = data[len(BOM):]
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                seen = True
                yield Reject(str(path), n, utf8_reason(exc, data), data.rstrip(b"\r\n").decode("utf-8", "replace"))
                continue
            if not line.strip():
                continue
            seen = True
            try:
                yield n, line, json.loads(line)
            except json.JSONDecodeError as exc:
                yield Reject(str(path), n, f"broken JSON line: {json_reason(exc)}", line.rstrip("\n"))
    if not seen:
        yield Reject(str(path), 0, "empty file: no rows")


def json_line_rows(path: Path, make_row: Callable[[Any], Row], keys: Keys | None = None) -> Iterator[Row | Reject]:
    """Each JSON line of ``path`` through ``make_row``; broken lines and rows it refuses
    (:class:`~eventkg.ingest.errors.RowError`) become Rejects naming the line. With ``keys``, a
    row whose keys were read before is checked against them (:meth:`Keys.admit`)."""
    for item in read_json_lines(path):
        if isinstance(item, Reject):
            yield item
            continue
        n, line, obj = item
        try:
            row = make_row(obj)
            yield keys.admit(row, str(path), n) if keys is not None else row
        except RowError as exc:
            yield Reject(str(path), n, str(exc), line.rstrip("\n"))


def read_json_document(path: Path) -> Any:
    """A whole-file JSON document (a UTF-8 BOM allowed); empty, broken or non-UTF-8 files raise
    one-line errors naming the line."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRowError(str(path), data.count(b"\n", 0, exc.start) + 1, utf8_reason(exc, data)) from None
    if not text.strip():
        raise EmptyInputError(str(path), 0, "empty file: no rows")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRowError(str(path), exc.lineno, f"broken JSON: {json_reason(exc)}") from None


def json_list_items(path: Path, not_a_list: str, empty: str) -> Iterator[tuple[int, Any] | Reject]:
    """(index, item) per item of a file holding one JSON list. A file that cannot be read or is not
    a list is one Reject (:func:`whole_file_reject`; ``not_a_list`` may name ``{type}``), and an
    empty list one Reject (``empty``) too."""
    try:
        data = read_json_document(path)
        if not isinstance(data, list):
            raise BadRowError(str(path), None, not_a_list.format(type=type(data).__name__))
    except IngestError as exc:
        yield whole_file_reject(exc)
        return
    if not data:
        yield Reject(str(path), 0, empty)
    yield from enumerate(data)


def whole_file_reject(exc: IngestError) -> Reject:
    """A whole-file error as one Reject: fail mode raises it as it was, skip mode records the file
    as one reject and goes on with the other files."""
    return Reject(exc.file, exc.line, exc.reason)


def _tell(progress: Progress, report: IngestReport) -> None:
    """The rows read and the rows rejected so far, as two :data:`~eventkg.progress.Progress` stages."""
    progress("rows", report.rows, None)
    progress("rejected", report.rejected, None)


class _Batcher:
    """Collects typed rows, deduping by key inside the batch (later non-null values win)."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, NodeRow]] = {}
        self.edges: dict[str, dict[tuple[str, str], EdgeRow]] = {}
        self.node_tables: dict[str, list[Any]] = {}  # Arrow tables from Chunk items
        self.edge_tables: dict[str, list[Any]] = {}
        self.pending = 0
        self.ends_known = True  # while every edge pending came from a chunk that says so

    def add(self, row: Row) -> None:
        for label, r in row.nodes:
            table = self.nodes.setdefault(label, {})
            key = r["id"]
            old = table.get(key)
            table[key] = r if old is None else merge_props(old, r)
        for rtype, r in row.edges:
            table = self.edges.setdefault(rtype, {})
            key = (r["src"], r["dst"])
            old = table.get(key)
            table[key] = r if old is None else merge_props(old, r)
        self.pending += len(row.nodes) + len(row.edges)
        self.ends_known = self.ends_known and not row.edges

    def add_chunk(self, chunk: Chunk) -> None:
        for label, table in chunk.nodes.items():
            self.node_tables.setdefault(label, []).append(table)
            self.pending += table.num_rows
        for rtype, table in chunk.edges.items():
            self.edge_tables.setdefault(rtype, []).append(table)
            self.pending += table.num_rows
        self.ends_known = self.ends_known and (chunk.ends_known or not chunk.edges)

    def take(self) -> Batch:
        batch = Batch(
            nodes={k: list(v.values()) for k, v in self.nodes.items() if v},
            edges={k: list(v.values()) for k, v in self.edges.items() if v},
            ends_known=self.ends_known,
        )
        for label, tables in self.node_tables.items():
            for t in tables:
                batch.add_node_table(label, t)
        for rtype, tables in self.edge_tables.items():
            for t in tables:
                batch.add_edge_table(rtype, t)
        self.nodes, self.edges, self.pending, self.ends_known = {}, {}, 0, True
        self.node_tables, self.edge_tables = {}, {}
        return batch


def _raw_json(raw: Any) -> Any:
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "replace")
    if isinstance(raw, str) and not raw.isascii():  # bytes read with surrogateescape: shown as U+FFFD
        return raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(raw, dict):
        return {k: _raw_json(v) for k, v in raw.items()}
    if isinstance(raw, list | tuple):
        return [_raw_json(v) for v in raw]
    return raw


class Prefetch:
    """A loader's items produced in a thread, a few ahead, so reading overlaps writing.

    Worth it for loaders of big files that yield :class:`Chunk` items: their reading
    (ADBC, numpy, Arrow) and LadybugDB's writing both release the GIL. Errors in the
    loader surface at the consumer's next item; ``close()`` stops the thread and closes
    the loader's generator there.
    """

    def __init__(self, items: Iterable[Row | Reject | Chunk], depth: int = 2) -> None:
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self.count = 0  # items handed out so far
        self._thread = threading.Thread(target=self._produce, args=(iter(items),), name="eventkg-loader", daemon=True)
        self._thread.start()

    def _produce(self, items: Iterator[Row | Reject | Chunk]) -> None:
        try:
            for item in items:
                if not self._put(("item", item)):
                    break
            else:
                self._put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            self._put(("error", exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    def _put(self, message: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(message, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Prefetch:
        return self

    def __next__(self) -> Row | Reject | Chunk:
        if self._done:
            raise StopIteration
        kind, value = self._queue.get()
        if kind == "item":
            self.count += 1
            return value
        self._done = True
        if kind == "error":
            raise value
        raise StopIteration

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> Prefetch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Rejects:
    """Bad source rows: raised at once in fail mode; else counted and appended to the rejects file."""

    def __init__(self, on_error: str, path: str | Path | None, report: IngestReport) -> None:
        self.on_error, self.path, self.report = on_error, path, report
        self._fh: TextIO | None = None  # opened at the first reject

    def __call__(self, item: Reject) -> None:
        if self.on_error == "fail":
            raise BadRowError(item.file, item.line, item.reason)
        self.report.rejected += 1
        if self.path:
            if self._fh is None:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
            rec = {"file": item.file, "line": item.line, "reason": item.reason, "raw": _raw_json(item.raw)}
            self._fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


class _Drive:
    """One ingest's items into the store: batching, rejects, limit, progress and the write counts."""

    def __init__(self, store: GraphStore, report: IngestReport, refuse: _Rejects, batch_size: int,
                 limit: int | None, progress: Progress | None) -> None:
        self.store, self.report, self.refuse = store, report, refuse
        self.batch_size, self.limit, self.progress = batch_size, limit, progress
        self.batcher = _Batcher()
        self.result = WriteResult()

    def items(self, iterator: Iterator[Row | Reject | Chunk]) -> None:
        """Take every item (up to ``limit`` source rows) inside one bulk session of the store."""
        with self.store.bulk_load():  # the store may hold new rows and write them table by table at the end
            for item in iterator:
                if self._chunk(item) if isinstance(item, Chunk) else self._row(item):
                    break
            self.flush()

    def _chunk(self, item: Chunk) -> bool:
        """Take a chunk of source rows; True once ``limit`` is reached."""
        self.report.rows += item.rows
        for bad in item.rejects:
            self.refuse(bad)
        self.batcher.add_chunk(item)
        if self.batcher.pending >= self.batch_size or item.nodes_done:
            self.flush()
        if item.nodes_done and hasattr(self.store, "nodes_done"):
            self.store.nodes_done()
        if self.progress is not None:
            _tell(self.progress, self.report)
        return self._limit_reached()

    def _row(self, item: Row | Reject) -> bool:
        """Take one source row; True once ``limit`` is reached."""
        self.report.rows += 1
        if isinstance(item, Reject):
            self.refuse(item)
        else:
            self.batcher.add(item)
            if self.batcher.pending >= self.batch_size:
                self.flush()
        if self.progress is not None and self.report.rows % 1000 == 0:
            _tell(self.progress, self.report)
        return self._limit_reached()

    def _limit_reached(self) -> bool:
        if self.limit is not None and self.report.rows >= self.limit:
            self.report.limited = True
            return True
        return False

    def flush(self) -> None:
        """Write the pending rows as one batch, counting them per label/type."""
        if not self.batcher.pending:
            return
        batch = self.batcher.take()
        report = self.report
        for label, rows in batch.nodes.items():
            report.nodes[label] = report.nodes.get(label, 0) + len(rows)
        for rtype, rows in batch.edges.items():
            report.edges[rtype] = report.edges.get(rtype, 0) + len(rows)
        for label, table in batch.node_tables.items():
            report.nodes[label] = report.nodes.get(label, 0) + table.num_rows
        for rtype, table in batch.edge_tables.items():
            report.edges[rtype] = report.edges.get(rtype, 0) + table.num_rows
        self.result.add(self.store.write_batch(batch))
        report.batches += 1

    def settle(self) -> None:
        """Put what the writes did into the report, with the rows a bulk session upserted when it ended."""
        late = getattr(self.store, "late_result", None)
        if late is not None:
            self.result.add(late)
            self.store.late_result = type(late)()
        self.report.created, self.report.updated = self.result.created, self.result.updated


def _marked(store: GraphStore, what: str, drive: _Drive, iterator: Iterator[Row | Reject | Chunk],
            origin: str | None) -> None:
    """``drive.items(iterator)`` inside the store's unfinished-ingest mark: set before the first
    write (a crash leaves it for readers), cleared when the ingest completes or fails without
    changing the store; a failure after writes says what had landed (:class:`PartialIngestError`).
    A completed ingest records ``origin``, its folder, before its mark is cleared."""
    completed = False
    store.begin_ingest(what)
    try:
        drive.items(iterator)
        if origin is not None:
            store.record_ingest_origin(drive.report.source, origin)
        completed = True
    except EventKGError as exc:
        if not store.changed_since_begin():
            raise
        report = drive.report
        raise PartialIngestError(
            f"{exc} -- before it, {report.batches:,} batch(es) of this ingest had been written "
            f"({sum(report.nodes.values()):,} node rows, {sum(report.edges.values()):,} edge rows sent); "
            "the store records the ingest as unfinished: run it again to complete it") from exc
    finally:
        try:
            store.end_ingest(what, completed=completed)
        except Exception:
            if completed:  # else the ingest's own error is the one to report (e.g. a server gone)
                raise


def run(
    store: GraphStore,
    source: str,
    files: Sequence[Path | str],
    items: Iterable[Row | Reject | Chunk],
    *,
    on_error: str = "fail",
    rejects: str | Path | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    prefetch: bool = False,
    origin: str | None = None,
) -> IngestReport:
    """Drive ``items`` into ``store`` in atomic batches; returns the :class:`IngestReport`.

    With ``prefetch`` the loader runs in a thread, a few items ahead (see :class:`Prefetch`);
    ``origin``, the absolute folder the files were read from, is recorded for ``source`` when the
    ingest completes (:meth:`GraphStore.record_ingest_origin`).
    """
    if on_error not in ON_ERROR:
        raise IngestError("on_error", None, f"unknown mode {on_error!r}; choose {' or '.join(ON_ERROR)}",
                          option="on_error")
    if limit is not None and limit < 0:
        raise IngestError("limit", None, "must be >= 0", option="limit")
    check_batch_size(batch_size)
    check_rejects_path(rejects)
    report = IngestReport(source=source, files=[str(f) for f in files], rejects_file=str(rejects) if rejects else None)
    start = time.perf_counter()
    refuse = _Rejects(on_error, rejects, report)
    drive = _Drive(store, report, refuse, batch_size, limit, progress)
    iterator = Prefetch(items) if prefetch and limit != 0 else iter(items)
    try:
        if limit == 0:
            report.limited = True
            return report
        _marked(store, f"{source} {' '.join(str(f) for f in files)}", drive, iterator, origin)
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()  # lets a loader release its cursor/file at once
        refuse.close()
        drive.settle()
        report.seconds = time.perf_counter() - start
    if progress is not None:
        _tell(progress, report)
    return report


@dataclass(frozen=True)
class Source:
    """What a loader's ``parse`` is given: the path, the ingest's :class:`Keys`, and the common
    options a loader may size its reading by (``limit``, ``batch_size``)."""

    path: Path
    keys: Keys
    limit: int | None
    batch_size: int


@dataclass
class Parsed:
    """What a loader's ``parse`` returns: the files it reads and the stream of items they give.

    ``left_out`` names the dataset parts a partial folder lacks; ``counts``, called once the
    stream is spent, gives the loader's own figures for :attr:`IngestReport.extra`; ``prefetch``
    reads the stream in a thread (see :class:`Prefetch`).
    """

    files: list[Path]
    items: Iterable[Row | Reject | Chunk]
    left_out: list[str] = field(default_factory=list)
    counts: Callable[[], dict[str, int]] | None = None
    prefetch: bool = False


#: a loader: ``parse(source, **own_options) -> Parsed``
Parse = Callable[..., Parsed]


def ingest(store: GraphStore, source: str, parse: Parse, path: str | Path, *, on_error: str = "fail",
           rejects: str | Path | None = None, limit: int | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
           progress: Progress | None = None, **own: Any) -> IngestReport:
    """One loader's ingest: ``parse`` the files at ``path``, then :func:`run` the items into ``store``.

    The body every loader shares: the keys checked across the ingest, the report's repeats,
    left-out parts and the loader's own counts, and the folder the store records as ``source``'s
    origin (:func:`origin_folder`). :func:`eventkg.ingest.registry.ingest_source` calls it.
    """
    keys = Keys()
    parsed = parse(Source(Path(path), keys, limit, batch_size), **own)
    report = run(store, source, parsed.files, parsed.items, on_error=on_error, rejects=rejects, limit=limit,
                 batch_size=batch_size, progress=progress, prefetch=parsed.prefetch, origin=origin_folder(path))
    report.repeated, report.left_out = keys.repeated, parsed.left_out
    if parsed.counts is not None:
        report.extra.update(parsed.counts())
    return report


def origin_folder(path: str | Path) -> str:
    """The absolute folder an ingest of ``path`` reads: ``path`` itself, or a file's folder.

    Args:
        path: The file or folder given to the ingest.

    Returns:
        The folder, absolute, with symbolic links kept as given (a link to a release's ``data/``
        stays the link, so the checkout around it is the one the user named).
    """
    p = Path(path)
    return os.path.abspath(p if p.is_dir() else p.parent)
