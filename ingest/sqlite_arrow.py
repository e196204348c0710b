"""An SQLite table as typed Arrow chunks, read in C by the ADBC SQLite driver when it can be.

Why: Python's ``sqlite3`` makes one Python object per cell. Scanning 1M ASER relations
(18 columns) takes 2.6 s that way, and 1.0 s through ``adbc-driver-sqlite``, which builds
the Arrow arrays in C (bench/ingest_bench.py).

SQLite columns are not typed, so a big file may hold a word in a REAL column. ADBC types
each column from the rows of one query, so each chunk is one query (``rowid`` ranges)
read as one batch: a chunk whose columns come back with unexpected types is read again
through ``sqlite3`` and converted cell by cell, and each cell that does not fit is
reported instead of failing the chunk. Tables without a ``rowid`` are read through
``sqlite3`` throughout.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.ingest.errors import BadRowError

TEXT = "text"  # any value, as its text (ids written as numbers become strings)
WORDS = "words"  # text only: a value of another type becomes null, for the caller to refuse
NUMBER = "number"  # integer or real (numeric text too); an empty text is null
ARROW_TYPES = {TEXT: pa.string(), WORDS: pa.string(), NUMBER: pa.float64()}
_FAST_TYPES = {  # ADBC column types each kind takes as they are (then cast)
    TEXT: (pa.string(), pa.large_string(), pa.int64(), pa.null()),
    WORDS: (pa.string(), pa.large_string(), pa.null()),
    NUMBER: (pa.float64(), pa.int64(), pa.null()),
}


@dataclass
class TableChunk:
    """Consecutive rows: the columns typed per their kind, and the cells that did not fit."""

    table: pa.Table
    bad: dict[int, tuple[str, Any]] = field(default_factory=dict)  # row -> (column, raw value), first bad cell
    rowids: list[int] | pa.Array | None = None  # each row's rowid (None for a table without rowid)


def has_rowid(conn: sqlite3.Connection, table: str) -> bool:
    """False for a ``WITHOUT ROWID`` table."""
    try:
        conn.execute(f"SELECT rowid FROM {table} LIMIT 1").fetchall()
    except sqlite3.OperationalError:
        return False
    return True


def read_chunks(
    path: Path, conn: sqlite3.Connection, table: str, columns: Mapping[str, str], size: int, budget: list[int | None]
) -> Iterator[TableChunk]:
    """Chunks of at most ``size`` rows of ``table`` in rowid order, never more than ``budget[0]`` in all.

    ``conn`` is an open ``sqlite3`` connection to ``path`` (the fallback reader). A file that
    cannot be read on (a corrupt page) raises a one-line :class:`~eventkg.ingest.errors.BadRowError`.
    """
    read = 0
    try:
        for chunk in _chunks(path, conn, table, columns, size, budget):
            read += chunk.table.num_rows
            yield chunk
    except sqlite3.DatabaseError as exc:
        raise BadRowError(str(path), f"{table} after {read:,} rows", f"unreadable SQLite data ({exc})") from None


def _chunks(
    path: Path, conn: sqlite3.Connection, table: str, columns: Mapping[str, str], size: int, budget: list[int | None]
) -> Iterator[TableChunk]:
    names = ", ".join(columns)
    if not has_rowid(conn, table):  # WITHOUT ROWID: no ranges to page by
        yield from _sqlite_chunks(conn, f"SELECT {names} FROM {table}", columns, size, budget)
        return
    adbc = _adbc_connect(path)
    last = None
    try:
        while True:
            n = _wanted(size, budget)
            if n <= 0:
                return
            where = "" if last is None else f"WHERE rowid > {last} "
            sql = f"SELECT rowid, {names} FROM {table} {where}ORDER BY rowid LIMIT {n}"
            got = _adbc_read(adbc, sql, n) if adbc is not None else None
            if got is not None and not got.num_rows:
                return
            chunk = _typed(got.drop_columns([got.column_names[0]]), columns) if got is not None else None
            if chunk is not None:
                last = got.column(0)[-1].as_py()
                chunk.rowids = got.column(0)
            else:  # no driver, or a column of unexpected type: these rows again, through sqlite3
                rows = conn.execute(sql).fetchall()
                if not rows:
                    return
                last = rows[-1][0]
                chunk = _from_rows([r[1:] for r in rows], columns)
                chunk.rowids = [r[0] for r in rows]
            _spend(budget, chunk.table.num_rows)
            yield chunk
    finally:
        if adbc is not None:
            adbc.close()


def _wanted(size: int, budget: list[int | None]) -> int:
    """Rows to ask for next: a chunk, or what is left of the budget."""
    return size if budget[0] is None else min(size, budget[0])


def _spend(budget: list[int | None], rows: int) -> None:
    if budget[0] is not None:
        budget[0] -= rows


def _adbc_connect(path: Path):
    try:
        import adbc_driver_sqlite.dbapi as adbc_sqlite
    except ImportError:  # pragma: no cover - a dependency; sqlite3 still reads everything
        return None
    try:
        return adbc_sqlite.connect(f"file:{path}?mode=ro")
    except Exception:  # noqa: BLE001 - any driver failure means: read through sqlite3
        return None


def _adbc_read(adbc, sql: str, rows: int) -> pa.Table | None:
    """The query as one Arrow table, or None if the driver cannot type it (mixed column types)."""
    try:
        cur = adbc.cursor()
        try:
            cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(rows)})
            cur.execute(sql)
            return cur.fetch_arrow_table()
        finally:
            cur.close()
    except Exception:  # noqa: BLE001 - the driver's errors have no common type; sqlite3 reads it instead
        return None


def _typed(table: pa.Table, columns: Mapping[str, str]) -> TableChunk | None:
    """ADBC's columns cast to their kinds' types; None if one came back as another type
    (ADBC turns a mixed column into text and prints its reals with 7 digits)."""
    cols = []
    for kind, col in zip(columns.values(), table.columns, strict=True):
        if col.type not in _FAST_TYPES[kind]:
            return None
        cols.append(col.cast(ARROW_TYPES[kind]) if col.type != ARROW_TYPES[kind] else col)
    return TableChunk(pa.table(dict(zip(columns, cols, strict=True))))


def _sqlite_chunks(conn: sqlite3.Connection, sql: str, columns: Mapping[str, str], size: int,
                   budget: list[int | None]) -> Iterator[TableChunk]:
    cur = conn.execute(sql)
    try:
        while True:
            n = _wanted(size, budget)
            rows = cur.fetchmany(n) if n > 0 else []
            if not rows:
                return
            _spend(budget, len(rows))
            yield _from_rows(rows, columns)
    finally:
        cur.close()


def _from_rows(rows: list[tuple], columns: Mapping[str, str]) -> TableChunk:
    """Python rows -> a typed chunk; a cell that does not fit its kind becomes null and is reported."""
    bad: dict[int, tuple[str, Any]] = {}
    arrays = {}
    for j, (name, kind) in enumerate(columns.items()):
        values = [r[j] for r in rows]
        try:
            arrays[name] = pa.array(values, ARROW_TYPES[kind]) if kind != WORDS else _words(values)
            continue
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            pass
        out = []
        for i, v in enumerate(values):
            try:
                out.append(_cell(v, kind))
            except ValueError:
                bad.setdefault(i, (name, v))
                out.append(None)
        arrays[name] = pa.array(out, ARROW_TYPES[kind])
    return TableChunk(pa.table(arrays) if arrays else pa.table({}), bad)


def _words(values: list[Any]) -> pa.Array:
    return pa.array([v if isinstance(v, str) else None for v in values], pa.string())


def _cell(value: Any, kind: str) -> Any:
    """One cell as its kind's Python value; ValueError if it cannot be one."""
    if value is None:
        return None
    if kind == NUMBER:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, int | float):
            return float(value)
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        return None if not text.strip() else float(text)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def invalid_utf8(table: pa.Table, columns: Sequence[str]) -> dict[int, str]:
    """Rows whose text in ``columns`` is not UTF-8 (ADBC hands SQLite's bytes on unchecked): row -> reason.

    Only rows with a non-ASCII byte are decoded, one by one (ASER's text is ASCII but for a few).
    """
    out: dict[int, str] = {}
    for name in columns:
        col = table.column(name).combine_chunks()
        wide = np.flatnonzero(pc.fill_null(pc.invert(pc.string_is_ascii(col)), False).to_numpy(zero_copy_only=False))
        if not len(wide):
            continue
        for i, raw in zip(wide, col.cast(pa.binary()).take(pa.array(wide)).to_pylist(), strict=True):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.setdefault(int(i), f"invalid UTF-8 in {name} (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
    return out


def locked_reason(path: Path, waited: float) -> str:
    """Why a file is locked, naming the processes that hold it open where /proc says (Linux)."""
    holders = []
    target = path.resolve()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        if fd_dir.parent.name == str(os.getpid()):
            continue
        try:
            if any(Path(os.readlink(fd)) == target for fd in fd_dir.iterdir()):
                pid = fd_dir.parent.name
                holders.append(f"{(fd_dir.parent / 'comm').read_text().strip()} (pid {pid})")
        except OSError:
            continue
    who = f" by {', '.join(holders)}" if holders else " by another process"
    return (f"the database is locked{who} (a writer holds its lock; waited {waited:g} s); "
            "ingest it when the writer has finished")
