"""Re-runs skip upserting rows the store provably holds: table digests, and every way they must not lie.

The embedded store keeps an order-independent digest of each table beside the database
(``graphstore/ladybug/digest_file.py``); a bulk session whose waiting rows (keys already stored) digest
to exactly the stored table skips upserting them. These tests hold the digests to the store's real
content and check that any write the digest cannot follow makes the re-run compare row by row.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from eventkg.graphstore import Batch, open_store
from eventkg.graphstore.digest import EMPTY, TableDigest, row_hashes, table_digest
from eventkg.graphstore.ladybug.digest_file import DigestBook
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES, event_id
from eventkg.graphstore.tables import rows_table
from tests.support.paths import CHECKOUT

ROOT = CHECKOUT


def _events(n: int, start: int = 0, **changed) -> Batch:
    """Events e<start>..e<start+n-1> (e5 with ``changed`` properties) and SYNCHRONOUS edges along them."""
    b = Batch()
    for i in range(start, start + n):
        row = {"id": event_id(f"e{i}"), "text": f"event number {i} " + "x" * (i % 23), "level": "schema",
               "sources": ["t"], "frequency": float(i) / 3, "cluster": i if i % 2 else None}
        b.add_node("Event", {**row, **changed} if i == 5 else row)
    for i in range(start, start + n - 1):
        b.add_edge("SYNCHRONOUS", {"src": event_id(f"e{i}"), "dst": event_id(f"e{i + 1}"), "sources": ["t"],
                                   "count": 1.0 + i})
    return b


def _bulk(path: Path, *batches: Batch):
    """Bulk-load ``batches`` in one session; returns (late_skipped, late_result) of the store."""
    with open_store(str(path)) as store:
        with store.bulk_load():
            for b in batches:
                store.write_batch(b)
        return dict(store.late_skipped), store.late_result


def _stored_digest(path: Path, name: str) -> TableDigest:
    """The digest of what the store holds, read back through the public API (not the kept digest)."""
    with open_store(str(path), read_only=True) as store:
        if name in NODE_TYPES:
            rows, keys, props = list(store.iter_nodes(name)), ("id",), NODE_TYPES[name].properties
        else:
            rows, keys, props = list(store.iter_edges(name)), ("src", "dst"), REL_TYPES[name].properties
    return table_digest(rows_table(name, rows, keys, props))


def _text(path: Path, i: int) -> str:
    with open_store(str(path), read_only=True) as store:
        return store.get_nodes("Event", [event_id(f"e{i}")])[event_id(f"e{i}")]["text"]


# -- the digest itself ---------------------------------------------------------------------------
def _typed() -> pa.Table:
    return pa.table({
        "id": pa.array(["a", "bb", "ccc" * 7, "d", "é-ü-ß"], pa.string()),
        "text": pa.array(["", None, "x" * 17, "y", "with\x00nul"], pa.string()),
        "frequency": pa.array([0.0, -0.5, None, 1e300, 2.0], pa.float64()),
        "cluster": pa.array([None, 0, 1, -1, 2**62], pa.int64()),
        "choices": pa.array([["a", "b"], ["b", "a"], ["a,b"], [], None], pa.list_(pa.string())),
    })


def test_digest_ignores_row_order_and_adds_over_disjoint_parts():
    t = _typed()
    assert table_digest(t.take([4, 2, 0, 3, 1])) == table_digest(t)
    assert table_digest(t.slice(0, 2)) + table_digest(t.slice(2)) == table_digest(t)
    assert table_digest(t) - table_digest(t.slice(2)) == table_digest(t.slice(0, 2))
    assert table_digest(t.slice(0, 0)) == EMPTY
    assert TableDigest.from_json(table_digest(t).to_json()) == table_digest(t)


def test_every_cell_every_null_and_every_column_name_changes_a_rows_hash():
    t = _typed()
    base1, base2 = row_hashes(t)
    assert len(set(base1.tolist())) == t.num_rows  # rows ["a","b"] / ["b","a"] / ["a,b"] / [] / null all differ
    edits = {"id": "a ", "text": "z", "frequency": 0.25, "cluster": 3, "choices": ["a", "b", ""]}
    for col, value in edits.items():
        for row in range(t.num_rows):
            values = t.column(col).to_pylist()
            values[row] = None if values[row] is not None and col != "id" and row % 2 else value
            if values[row] == t.column(col)[row].as_py():
                values[row] = value
            changed = t.set_column(t.column_names.index(col), col, pa.array(values, t.schema.field(col).type))
            h1, h2 = row_hashes(changed)
            assert h1[row] != base1[row] and h2[row] != base2[row], (col, row)
            assert (h1[:row] == base1[:row]).all() and (h1[row + 1:] == base1[row + 1:]).all()
    assert table_digest(t.rename_columns(["id", "text2", "frequency", "cluster", "choices"])) != table_digest(t)


def test_sliced_and_chunked_columns_hash_like_whole_ones():
    t = _typed()
    whole = row_hashes(t)
    chunked = pa.Table.from_batches(t.slice(0, 2).to_batches() + t.slice(2).to_batches())
    assert all((a == b).all() for a, b in zip(row_hashes(chunked), whole, strict=True))
    assert all((a == b[1:4]).all() for a, b in zip(row_hashes(t.slice(1, 3)), whole, strict=True))


def test_long_and_repeated_strings_hash_apart():
    words = ["a" * n for n in range(40)] + ["a" * 8 + "b", "b" + "a" * 8] + ["same"] * 9000
    t = pa.table({"text": pa.array(words, pa.string())})
    h1, _ = row_hashes(t)
    assert len(set(h1[:42].tolist())) == 42 and len(set(h1[42:].tolist())) == 1


# -- the store keeps it true ----------------------------------------------------------------------
def test_the_kept_digest_is_the_digest_of_what_the_store_holds(tmp_path):
    path = tmp_path / "s.lbug"
    q = Batch()
    for i in range(30):
        q.add_node("Question", {"id": f"q{i}", "qid": f"Q{i}", "choices": [f"c{i}", "", "c,x"][: i % 4],
                                "answer": None if i % 3 else "a", "sources": ["ev2", "t"]})
    _bulk(path, _events(120), q)
    _bulk(path, _events(20, start=500))  # a second session adds to stored tables
    book = DigestBook.load(path)
    for name in ("Event", "SYNCHRONOUS", "Question"):
        assert book.get(name) == _stored_digest(path, name), name
    assert book.get("Event").rows == 140 and book.get("CAUSES") == EMPTY


def test_the_kept_digest_holds_when_a_node_table_goes_in_several_copies(tmp_path, monkeypatch):
    """A node table bigger than one COPY goes in one COPY per range of the engine's hash indexes;
    each adds its rows' digest to the table's as it stands before that COPY, fresh or appended,
    and a re-run of the same rows is still recognised as stored."""
    from eventkg.graphstore.ladybug.bulk import staged_copies

    monkeypatch.setattr(staged_copies, "copy_rows", lambda name, pool: 40)
    path = tmp_path / "s.lbug"
    _bulk(path, _events(120))
    assert DigestBook.load(path).get("Event") == _stored_digest(path, "Event")
    _bulk(path, _events(60, start=500))
    book = DigestBook.load(path)
    assert book.get("Event") == _stored_digest(path, "Event") and book.get("Event").rows == 180
    skipped, _ = _bulk(path, _events(120), _events(60, start=500))  # the stored rows again
    assert skipped["Event"] == 180 and DigestBook.load(path).tables == book.tables


def test_a_rerun_of_the_stored_rows_skips_them_and_leaves_the_graph_and_digest_as_they_were(tmp_path):
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    before = DigestBook.load(path).tables
    skipped, result = _bulk(path, _events(100))
    assert skipped == {"Event": 100, "SYNCHRONOUS": 99}
    assert result.updated == {} or not any(result.updated.values())
    assert DigestBook.load(path).tables == before
    skipped, _ = _bulk(path, _events(100), _events(10, start=1000))  # new keys beside the stored ones
    assert skipped == {"Event": 100, "SYNCHRONOUS": 99}
    assert DigestBook.load(path).get("Event") == _stored_digest(path, "Event")
    with open_store(str(path), read_only=True) as store:
        assert store.counts()["nodes"]["Event"] == 110 and store.counts()["edges"]["SYNCHRONOUS"] == 99 + 9


def test_a_rerun_whose_source_changed_one_property_of_one_stored_row_updates_it(tmp_path):
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    skipped, result = _bulk(path, _events(100, text="changed in the source"))
    assert "Event" not in skipped and result.updated.get("Event") == 1
    assert skipped == {"SYNCHRONOUS": 99}  # the unchanged table still skips
    assert _text(path, 5) == "changed in the source"
    assert DigestBook.load(path).get("Event") is None  # written by the upsert: no longer known


def test_an_upsert_outside_a_session_then_a_reingest_still_applies_the_source(tmp_path):
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    with open_store(str(path)) as store:  # batch by batch, no session: the upsert path
        store.write_batch(_events(1, start=5, text="edited by hand"))
    assert _text(path, 5) == "edited by hand"
    skipped, _ = _bulk(path, _events(100))
    assert "Event" not in skipped
    assert _text(path, 5) == _events(1, start=5).nodes["Event"][0]["text"]


@pytest.mark.parametrize("how", ["query", "foreign writer"])
def test_writes_the_store_cannot_follow_make_the_reingest_compare_rows(tmp_path, how):
    """A raw write query through the store, or another program writing the file (it does not keep
    the digests: the store's files no longer match their stamp), leaves no digest to trust."""
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    edit = "MATCH (n:Event {id: $id}) SET n.text = 'edited elsewhere'"
    if how == "query":
        with open_store(str(path)) as store:
            store.query(edit, {"id": event_id("e5")}, write=True)
    else:
        import ladybug

        db = ladybug.Database(str(path))
        conn = ladybug.Connection(db)
        conn.execute(edit, {"id": event_id("e5")})
        conn.close()
        db.close()
    assert _text(path, 5) == "edited elsewhere"
    skipped, _ = _bulk(path, _events(100))
    assert "Event" not in skipped
    assert _text(path, 5) == _events(1, start=5).nodes["Event"][0]["text"]


def test_clear_leaves_empty_tables_with_the_empty_digest(tmp_path):
    path = tmp_path / "s.lbug"
    _bulk(path, _events(50))
    with open_store(str(path)) as store:
        store.clear()
    assert DigestBook.load(path).get("Event") == EMPTY
    _bulk(path, _events(50))
    assert DigestBook.load(path).get("Event") == _stored_digest(path, "Event")


KILLED = """
import os, signal, sys
from eventkg.graphstore import open_store
from tests.graphstore.test_store_rerun_digest import _events

store = open_store(sys.argv[1])
if sys.argv[2] == "after the drop":  # the first step of every write: the COPY never comes
    store.on_event = lambda e: e.kind == "dropped" and e.table == "Event" and os.kill(os.getpid(), signal.SIGKILL)
batch = _events(20, start=1000)
batch.edges.clear()  # new rows of one table: one COPY, whose CHECKPOINT never comes
store.write_batch(batch)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("stage", ["after the drop", "after the COPY"])
def test_a_crash_between_the_steps_of_a_copy_leaves_no_digest_that_lies(tmp_path, stage):
    """Killed after the digest was dropped (no COPY), or after the COPY (no CHECKPOINT): the file
    holds no digest of Event, or one equal to what the store holds; the re-run ends with the graph."""
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    died = subprocess.run([sys.executable, "-c", KILLED, str(path), stage], cwd=ROOT, capture_output=True, text=True)
    assert died.returncode == -9, died.stderr
    kept = DigestBook.load(path).get("Event")
    assert kept is None or kept == _stored_digest(path, "Event")
    if stage == "after the drop":  # killed by the on_event hook as the digest was dropped: no row came
        assert kept is None
        with open_store(str(path), read_only=True) as store:
            assert store.counts()["nodes"]["Event"] == 100
    _bulk(path, _events(100, text="the source changed"), _events(20, start=1000))
    assert _text(path, 5) == "the source changed"
    assert DigestBook.load(path).get("Event") in (None, _stored_digest(path, "Event"))
    with open_store(str(path), read_only=True) as store:
        assert store.counts()["nodes"]["Event"] == 120


def _sync(path: Path, src: int, dst: int) -> float | None:
    with open_store(str(path), read_only=True) as store:
        got = store.query("MATCH (a:Event {id: $a})-[e:SYNCHRONOUS]->(b:Event {id: $b}) RETURN e.count AS c",
                          {"a": event_id(f"e{src}"), "b": event_id(f"e{dst}")})
    return got[0]["c"] if got else None


def test_a_rerun_checks_a_stored_rel_table_by_digest_without_scanning_its_keys(tmp_path):
    """The stored rows of a rel table whose digest is known all wait without a key set (no scan of
    the table); equal to the table, they are skipped."""
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    with open_store(str(path)) as store:
        with store.bulk_load():
            store.write_batch(_events(100))
            state = store.state()
            assert "SYNCHRONOUS" in state.deferred and "SYNCHRONOUS" not in state.key_sets
            assert "Event" in state.key_sets  # node key sets still check the edges' endpoints
        assert store.late_skipped == {"Event": 100, "SYNCHRONOUS": 99}


def test_a_rerun_with_a_changed_and_a_new_edge_in_a_stored_rel_table_writes_both(tmp_path):
    """Rows routed by digest that differ from the table: the new edge is COPYed (the table's digest
    kept), the changed one upserted (then the digest is unknown), and the counts are the keyed path's."""
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    rerun = _events(100)
    rerun.edges["SYNCHRONOUS"][3]["count"] = 99.0  # e3 -> e4 changed
    rerun.add_edge("SYNCHRONOUS", {"src": event_id("e0"), "dst": event_id("e2"), "sources": ["t"], "count": 7.0})
    skipped, result = _bulk(path, rerun)
    assert skipped == {"Event": 100}
    assert result.created.get("SYNCHRONOUS") == 1 and result.updated.get("SYNCHRONOUS") == 1
    assert (_sync(path, 3, 4), _sync(path, 0, 2), _sync(path, 7, 8)) == (99.0, 7.0, 8.0)
    assert DigestBook.load(path).get("SYNCHRONOUS") is None


def test_new_edges_beside_the_stored_ones_keep_the_rel_tables_digest(tmp_path):
    path = tmp_path / "s.lbug"
    _bulk(path, _events(100))
    more = _events(100)
    more.add_edge("SYNCHRONOUS", {"src": event_id("e0"), "dst": event_id("e2"), "sources": ["t"], "count": 7.0})
    skipped, result = _bulk(path, more)
    assert skipped == {"Event": 100, "SYNCHRONOUS": 99}  # the stored rows skipped, the new one COPYed
    assert result.created.get("SYNCHRONOUS") == 1 and not result.updated.get("SYNCHRONOUS")
    assert DigestBook.load(path).get("SYNCHRONOUS") == _stored_digest(path, "SYNCHRONOUS")
    assert _sync(path, 0, 2) == 7.0
