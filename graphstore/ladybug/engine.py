"""Talking to the LadybugDB engine: the schema's DDL, store file checks, results, COPY, the memory budget.

Plain functions over a ``ladybug.Connection`` (they hold no state), shared by the parts of
:class:`~eventkg.graphstore.ladybug.store.LadybugStore`: the buffer pool each phase of a store gets
out of the memory budget (``EVENTKG_MEMORY_MB``: ``POOL_SHARE``, ``NODE_POOL_SHARE``,
``EDGE_POOL_SHARE``), the rows one COPY may take in a pool (:func:`copy_rows`), and handing freed
heap back to the system (:func:`release_free_memory`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from eventkg import settings
from eventkg.errors import DiskFullError, EventKGError
from eventkg.graphstore.atomic import disk_full_message, is_disk_full
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

POOL_SHARE = 0.5  # of the memory budget (EVENTKG_MEMORY_MB), the engine's buffer pool
EDGE_POOL_SHARE = 0.75  # of the budget, the pool while a bulk session writes its rel tables (edge_pool_bytes)
NODE_POOL_SHARE = 0.25  # of the budget, the pool while a bulk session writes its node tables (node_pool_bytes)


def budget_share(share: float) -> int:
    """``share`` of the memory budget (``EVENTKG_MEMORY_MB``), in bytes."""
    return int(settings.memory_mb() * 2**20 * share)


def buffer_pool_bytes() -> int:
    """ladybug's buffer pool for every open store: ``POOL_SHARE`` of the memory budget. The engine's
    default is 80% of the machine's memory, and it keeps every page it reads until then, so a
    bulk load or a scan of a big graph would grow the process with the graph."""
    return budget_share(POOL_SHARE)


def edge_pool_bytes() -> int:
    """The buffer pool while a bulk session writes its rel tables: ``EDGE_POOL_SHARE`` of the budget.
    A rel COPY looks both ends of every edge up in the node table's primary-key index; once that
    index outgrows the pool each lookup may read a page, and the loader's
    memory is gone by then, so the rel tables get the larger share."""
    return budget_share(EDGE_POOL_SHARE)


def node_pool_bytes() -> int:
    """The buffer pool while a bulk session writes its node tables: ``NODE_POOL_SHARE`` of the budget.
    The loader still holds its own memory then (it reads the edges meanwhile, with its id map), and
    a checkpoint of a big node table takes memory outside the pool, so the nodes get the smaller
    share and more COPYs (:func:`copy_rows`)."""
    return budget_share(NODE_POOL_SHARE)


EDGE_COPY_MARGIN = 256 * 2**20  # what a rel COPY and its checkpoint take beside the pool (edge_pool_for)
MIN_POOL = 256 * 2**20
# a rel COPY keeps an open pool up to this much under what the budget leaves (no reopen); more
# and it is grown: a reopen costs little, a rel COPY in a pool well short of what the budget
# leaves costs much more (docs/performance.md)
POOL_SLACK = 64 * 2**20
# the engine's buffer pool per row of one COPY (its primary-key index for nodes, its sorted
# edges for rels), with room to spare; measured in docs/scale.md. A rel table is best kept to one
# COPY: a second COPY into it rewrites it and holds engine memory per node it joins until its checkpoint
ENGINE_NODE_BYTES = 160
ENGINE_EDGE_BYTES = 64
POOL_FOR_COPY = 0.8  # share of the buffer pool one COPY may plan to fill
MIN_COPY_ROWS = 100_000  # copy_rows never plans fewer rows per COPY
LOOKUP_CHUNK = 20_000  # ids per keyed lookup statement


def copy_rows(name: str, pool_bytes: int) -> int:
    """The most rows one COPY into ``name`` may take with a buffer pool of ``pool_bytes``: the engine
    builds a node COPY's primary-key index and sorts a rel COPY's edges in its pool, so past some
    size one COPY fails and a bigger table goes in several COPYs (``ENGINE_NODE_BYTES`` or
    ``ENGINE_EDGE_BYTES`` a row in ``POOL_FOR_COPY`` of the pool; the measurements: ``docs/scale.md``)."""
    if not pool_bytes:  # the engine's default pool: most of the machine's memory
        return 2**62
    per_row = ENGINE_NODE_BYTES if name in NODE_TYPES else ENGINE_EDGE_BYTES
    return max(MIN_COPY_ROWS, int(pool_bytes * POOL_FOR_COPY) // per_row)


def edge_pool_for(process_bytes: int | None, margin: int = EDGE_COPY_MARGIN) -> int:
    """The pool for a rel COPY starting now: :func:`edge_pool_bytes`, less what would take the process
    over the budget with the memory it holds already beside the pool (``process_bytes``; unknown:
    the share alone). The COPY fills the pool, so the process peaks near ``process_bytes`` + pool +
    ``margin`` (:func:`append_margin_bytes` for an append); rounded down to 64 MiB so near sizes keep the
    open database."""
    cap = edge_pool_bytes()
    if process_bytes is None:
        return cap
    room = settings.memory_mb() * 2**20 - process_bytes - margin
    return max(MIN_POOL, min(cap, room)) // (64 * 2**20) * (64 * 2**20)


#: engine memory, per node of a rel table's end labels, that a COPY appending to the stored table
#: keeps in the buffer pool until the next checkpoint (ladybug 0.22; ``bench/second_source_bench.py``)
APPEND_NODE_BYTES = 150

# An update keeps engine memory for every node group it touches until the next checkpoint (~19 MB
# a group: 25K random events of ASER 1M/3M's 8 groups kept +153 MB); each checkpoint of a big node
# table costs ~0.45 s at 10M events, whatever it folds (docs/performance.md). So the changed nodes
# of a bulk session go in transactions of as many groups as UPDATE_SHARE of the budget holds.
UPDATE_SHARE = 0.25
NODE_GROUP_UPDATE_BYTES = 20 * 2**20


def update_node_groups() -> int:
    """Node groups one update transaction of a bulk session may touch (at least 2): ``UPDATE_SHARE``
    of the memory budget over ``NODE_GROUP_UPDATE_BYTES`` (25 at the default 2 GB)."""
    return max(2, budget_share(UPDATE_SHARE) // NODE_GROUP_UPDATE_BYTES)


#: what a COPY appending to a stored rel table and its checkpoint take beside the pool, per node of the table's end
#: labels, beyond a fresh COPY's ``EDGE_COPY_MARGIN``: the checkpoint rewrites the stored node groups the new edges
#: join (measured at ASER 10M/30M: docs/performance.md)
APPEND_BESIDE_NODE_BYTES = 40


def append_pool_bytes(end_nodes: int) -> int:
    """The buffer pool a COPY appending edges to a stored rel table over ``end_nodes`` nodes needs."""
    return end_nodes * APPEND_NODE_BYTES + EDGE_COPY_MARGIN


def append_margin_bytes(end_nodes: int) -> int:
    """What that COPY and its checkpoint take beside the pool (:func:`edge_pool_for`'s ``margin``)."""
    return end_nodes * APPEND_BESIDE_NODE_BYTES + EDGE_COPY_MARGIN


def pool_in_use(conn: Any) -> int:
    """Bytes of the open database's buffer pool holding pages now (``CALL bm_info()``; 0 where the
    engine does not say). They count in the process's resident size, yet a next COPY in the same
    opening reuses them, so they are not memory beside its pool."""
    try:
        return int(fetch_tuples(conn, "CALL bm_info() RETURN *")[0][1])
    except (RuntimeError, IndexError, TypeError, ValueError):
        return 0


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux ``/proc/self/statm``), or None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _columns(props: Mapping[str, str]) -> str:
    return "".join(f", `{name}` {ctype}" for name, ctype in props.items())


def schema_statements() -> list[str]:
    """DDL declaring every node and rel table of the data model."""
    stmts = [
        f"CREATE NODE TABLE IF NOT EXISTS {n.label}(id STRING PRIMARY KEY, sources STRING{_columns(n.properties)})"
        for n in NODE_TYPES.values()
    ]
    stmts += [
        f"CREATE REL TABLE IF NOT EXISTS {r.name}(FROM {r.source} TO {r.target}, sources STRING{_columns(r.properties)})"
        for r in REL_TYPES.values()
    ]
    return stmts


def declare_schema(conn: Any) -> None:
    """Declare every table of the data model that the database does not hold yet."""
    for stmt in schema_statements():
        conn.execute(stmt)


def check_store_path(p: Path, *, read_only: bool = False) -> None:
    """Refuse a path that cannot be a store: a folder, an unreadable or foreign file, an unwritable folder;
    read-only, an empty (0-byte) file, which an ingest that never wrote a page leaves (it holds no graph)."""
    if p.is_dir():
        raise StoreError(f"cannot open store {p}: it is a folder, not a LadybugDB file")
    if p.exists():
        if not os.access(p, os.R_OK):
            raise StoreError(f"cannot open store {p}: not readable")
        with open(p, "rb") as fh:  # a database file starts with ladybug's magic
            head = fh.read(4)
        if not head and read_only and not p.with_name(p.name + ".wal").exists():
            raise StoreError(f"cannot open store {p}: the file is empty (0 bytes), no ingest completed writing it "
                             "(a full disk or a kill before its first page?); run the ingest again, which fills it")
        if head and head[:3] != b"LBU" and head[:3] != b"KUZ":
            raise StoreError(f"cannot open store {p}: the file exists and is not a LadybugDB database")
        return
    parent = p.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create store {p}: {exc.strerror}") from exc
    if not os.access(parent, os.W_OK):
        raise StoreError(f"cannot create store {p}: folder {parent} is not writable")


def write_failure(exc: BaseException, store: str | Path, doing: str) -> EventKGError:
    """The one-line error of a failed write into the store at ``store``: a full disk says so, where
    and how much was free (:class:`~eventkg.errors.DiskFullError`, nothing about memory); any other
    engine error names the memory budget, which is what the engine's own errors most often mean.

    Args:
        exc: What the engine (or pyarrow, or the file system) raised.
        store: The store's file.
        doing: What was being written (``writing held rows``).

    Returns:
        The error to raise (``from exc``).
    """
    where = Path(store)
    if is_disk_full(exc, where.parent):
        return DiskFullError(disk_full_message(f"{doing} into {where} failed ({short_error(exc)})", where))
    return StoreError(f"LadybugDB failed {doing} into {where}: {short_error(exc)} "
                      f"(EVENTKG_MEMORY_MB={settings.memory_mb()}: raise it if memory ran short)")


def short_error(exc: BaseException) -> str:
    """The first line of an engine error, without its exception-class prefix noise."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def fetch_rows(conn: Any, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """A query's result as one dict per row."""
    result = conn.execute(cypher, dict(params or {}))
    cols = result.get_column_names()
    out = []
    while result.has_next():
        out.append(dict(zip(cols, result.get_next(), strict=True)))
    return out


def fetch_tuples(conn: Any, cypher: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """A query's result as one list of values per row."""
    result = conn.execute(cypher, dict(params or {}))
    out = []
    while result.has_next():
        out.append(result.get_next())
    return out


def count_rows(conn: Any, name: str) -> int:
    """Rows stored in a node or rel table."""
    pattern = f"(n:{name})" if name in NODE_TYPES else f"()-[n:{name}]->()"
    return fetch_tuples(conn, f"MATCH {pattern} RETURN count(*)")[0][0]


def max_offset(conn: Any, label: str) -> int:
    """The highest node offset of ``label`` (-1 when it has no node)."""
    value = conn.execute(f"MATCH (n:{label}) RETURN max(offset(id(n)))").get_next()[0]
    return -1 if value is None else int(value)


def table_pages(conn: Any, name: str, returns: str, *, page: int) -> Iterator[pa.Table]:
    """``RETURN returns`` over a node table (its node bound to ``n``) or a rel table (``(a)-[e]->(b)``),
    ``page`` node offsets (of ``n``, or of the sources ``a``) at a time, each page one Arrow table:
    a big table read in bounded parts, never whole."""
    if name in NODE_TYPES:
        label, match, var = name, f"(n:{name})", "n"
    else:
        rel = REL_TYPES[name]
        label, match, var = rel.source, f"(a:{rel.source})-[e:{name}]->(b:{rel.target})", "a"
    for low in range(0, max_offset(conn, label) + 1, page):
        yield conn.execute(
            f"MATCH {match} WHERE offset(id({var})) >= {low} AND offset(id({var})) < {low + page} RETURN {returns}"
        ).get_as_arrow(0)


def node_file_pages(conn: Any, label: str, returns: str, path: Path, *, page: int) -> Iterator[pa.Table]:
    """``RETURN returns`` over every node of ``label`` (bound to ``n``), written once by the engine to the
    Parquet file ``path`` (``COPY ... TO``, on its own threads) and read back ``page`` rows at a time;
    the file is removed once read. Why not :func:`table_pages` for a node table: each of its page
    queries reads the whole table's columns to filter the offsets, so reading a node table page by
    page costs the square of the table; this reads each row once, holding one page."""
    import pyarrow.parquet as pq

    try:
        conn.execute(f"COPY (MATCH (n:{label}) RETURN {returns}) TO {path_literal(path)}")
        if not path.exists():  # no node: nothing written
            return
        for batch in pq.ParquetFile(path).iter_batches(batch_size=page):
            yield pa.Table.from_batches([batch])
    except RuntimeError as exc:
        raise StoreError(f"reading {label}: {short_error(exc)}") from exc
    finally:
        path.unlink(missing_ok=True)


#: how the engine's error for a rel COPY end whose key is not in its node table begins (the key follows, then ".")
MISSING_KEY_ERROR = "Copy exception: Unable to find primary key value "


def missing_key(exc: BaseException) -> str | None:
    """The key an engine error of a rel COPY says it did not find (``MISSING_KEY_ERROR``), else None."""
    text = str(exc)
    at = text.find(MISSING_KEY_ERROR)
    if at < 0:
        return None
    rest = text[at + len(MISSING_KEY_ERROR):]
    return rest[:-1] if rest.endswith(".") else rest


@contextmanager
def one_engine_thread(conn: Any) -> Iterator[None]:
    """Run the connection's statements on one engine thread inside the block, its setting after."""
    threads = int(fetch_tuples(conn, "CALL current_setting('threads') RETURN *")[0][0])
    conn.set_max_threads_for_exec(1)
    try:
        yield
    finally:
        conn.set_max_threads_for_exec(threads)


def copy_arrow(conn: Any, table: str, arrow: pa.Table) -> None:
    """``COPY table FROM`` a typed Arrow table (see :mod:`eventkg.graphstore.tables`)."""
    # ladybug binds Python variables named in COPY ... FROM <name> from the caller's scope
    eventkg_copy_rows = arrow  # noqa: F841
    try:
        conn.execute(f"COPY {table} FROM eventkg_copy_rows")
    except RuntimeError as exc:
        raise StoreError(f"writing {table}: {short_error(exc)}") from exc


def path_literal(path: Path) -> str:
    """``path`` as a quoted Cypher string (backslashes and quotes escaped) for ``COPY ... FROM/TO``."""
    escaped = str(path).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def copy_file(conn: Any, table: str, path: Path) -> None:
    """``COPY table FROM`` a Parquet file the engine reads itself, a row group at a time."""
    try:
        conn.execute(f"COPY {table} FROM {path_literal(path)}")
    except RuntimeError as exc:
        raise StoreError(f"writing {table}: {short_error(exc)}") from exc


def release_failed_statement() -> None:
    """Drop the locals of the finished frames of an engine error being handled (an error, or its
    cause or context, raised inside ``ladybug``) before the database is closed: a failed
    statement's frames hold the engine's prepared statement, which keeps the old database alive,
    and opening its file again then dropped the rows its write-ahead log held (committed, not yet
    checkpointed; found with ladybug 0.22). Other errors keep their frames for the debugger."""
    exc, seen = sys.exc_info()[1], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _raised_in_engine(exc.__traceback__):
            traceback.clear_frames(exc.__traceback__)  # frames still running are left as they are
        exc = exc.__cause__ or exc.__context__


def _raised_in_engine(tb: Any) -> bool:
    """True when the traceback ``tb`` passes through the ``ladybug`` package's code."""
    module = sys.modules.get("ladybug")
    if module is None or not getattr(module, "__file__", None):
        return False
    engine_dir = str(Path(module.__file__).parent) + os.sep
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(engine_dir):
            return True
        tb = tb.tb_next
    return False


def rollback(conn: Any) -> None:
    """Roll back the open transaction; the engine may already have aborted it on error."""
    try:
        conn.execute("ROLLBACK")
    except RuntimeError as exc:
        if "No active transaction" not in str(exc):
            raise


@cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None on another C library."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Give the heap's free pages back to the system (glibc ``malloc_trim(0)``; Arrow's pool too).

    Called after a bulk session reopens the database: the engine frees what a COPY built,
    but glibc keeps freed arenas mapped, so without it the process never shrinks between
    COPYs and each peak stands on the last one's leftovers.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    pa.default_memory_pool().release_unused()
