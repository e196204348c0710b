"""SQLite -> typed Arrow chunks: ADBC when the cells have their declared types, sqlite3 cell by cell when not."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest

from eventkg.ingest import sqlite_arrow
from eventkg.ingest.sqlite_arrow import NUMBER, TEXT, WORDS, read_chunks

COLUMNS = {"id": TEXT, "words": WORDS, "n": NUMBER}


def _db(tmp_path, rows, without_rowid=False):
    path = tmp_path / "t.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE T (id PRIMARY KEY, words TEXT, n REAL)" + (" WITHOUT ROWID" if without_rowid else ""))
    conn.executemany("INSERT INTO T VALUES (?, ?, ?)", rows)
    conn.commit()
    return path, conn


def _read(path, conn, size=4, budget=None):
    return list(read_chunks(path, conn, "T", COLUMNS, size, [budget]))


def test_clean_chunks_come_from_adbc_typed(tmp_path, monkeypatch):
    rows = [(f"id{i}", f"word {i}", i / 3) for i in range(10)]
    path, conn = _db(tmp_path, rows)
    calls = []
    real = sqlite_arrow._from_rows
    monkeypatch.setattr(sqlite_arrow, "_from_rows", lambda *a: calls.append(1) or real(*a))
    chunks = _read(path, conn)
    assert [c.table.num_rows for c in chunks] == [4, 4, 2]
    assert calls == []  # no chunk needed the sqlite3 reader
    table = pa.concat_tables(c.table for c in chunks)
    assert table.schema.types == [pa.string(), pa.string(), pa.float64()]
    assert table.to_pylist() == [{"id": i, "words": w, "n": n} for i, w, n in rows]  # exact doubles


def test_a_chunk_with_odd_cells_is_read_again_and_each_bad_cell_reported(tmp_path):
    rows = [("a", "one", 1.5), ("b", "two", "lots"), ("c", b"bytes", 1 / 3), ("d", "four", "2.25"),
            (5, "five", None), ("f", "six", ""), ("g", "seven", 7), ("h", "eight", 0.1)]
    path, conn = _db(tmp_path, rows)
    first, second = _read(path, conn)
    assert first.bad == {1: ("n", "lots")}
    assert first.table.column("n").to_pylist() == [1.5, None, 1 / 3, 2.25]  # numeric text is a number
    assert first.table.column("words").to_pylist() == ["one", "two", None, "four"]  # bytes are not words
    assert second.bad == {}
    assert second.table.column("id").to_pylist() == ["5", "f", "g", "h"]  # an id stored as a number is text
    assert second.table.column("n").to_pylist() == [None, None, 7.0, 0.1]  # an empty text is no number


def test_budget_caps_the_rows_read(tmp_path):
    path, conn = _db(tmp_path, [(f"id{i}", "w", 1.0) for i in range(10)])
    budget = [7]
    chunks = list(read_chunks(path, conn, "T", COLUMNS, 4, budget))
    assert [c.table.num_rows for c in chunks] == [4, 3] and budget == [0]


@pytest.mark.parametrize("without_rowid", [True, False])
def test_every_row_is_read_once_in_order(tmp_path, without_rowid):
    rows = [(f"id{i:03d}", f"w{i}", float(i)) for i in range(23)]
    path, conn = _db(tmp_path, rows, without_rowid=without_rowid)
    got = pa.concat_tables(c.table for c in _read(path, conn, size=5))
    assert got.column("id").to_pylist() == [r[0] for r in rows]
    assert got.column("n").to_pylist() == [r[2] for r in rows]
