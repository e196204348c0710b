"""The embedded store's bulk sessions: held rows go to files beside the store, which never outlive them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from eventkg.errors import DiskFullError
from eventkg.graphstore import Batch, StoreError, open_store
from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.ladybug.events import StoreEvent
from eventkg.graphstore.ladybug.spool import PREFIX, remove_stale
from eventkg.graphstore.model import REL_TYPES, event_id


def _events(n: int, start: int = 0) -> Batch:
    b = Batch()
    for i in range(start, start + n):
        b.add_node("Event", {"id": event_id(f"e{i}"), "text": f"e{i}", "level": "schema", "sources": ["t"]})
    for i in range(start, start + n - 1):
        b.add_edge("SYNCHRONOUS", {"src": event_id(f"e{i}"), "dst": event_id(f"e{i + 1}"), "sources": ["t"], "count": 2.0})
    return b


def _spools(folder) -> list:
    return sorted(p.name for p in folder.glob(f"{PREFIX}*"))


def test_held_rows_live_in_a_spool_folder_until_the_session_ends(tmp_path):
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(_events(200))
            store.write_batch(_events(200, start=1000))
            assert len(_spools(tmp_path)) == 1
            held = next(tmp_path.glob(f"{PREFIX}*"))
            assert (held / "SYNCHRONOUS.arrow").stat().st_size > 0  # the edges wait on disk, not in memory
        assert _spools(tmp_path) == []
        assert store.counts()["edges"]["SYNCHRONOUS"] == 398


def test_close_inside_a_session_writes_what_it_holds(tmp_path):
    store = open_store(str(tmp_path / "s.lbug"))
    with store.bulk_load():
        store.write_batch(_events(50))
        store.close()
    assert _spools(tmp_path) == []
    with open_store(str(tmp_path / "s.lbug"), read_only=True) as again:
        assert again.counts()["edges"]["SYNCHRONOUS"] == 49


def test_spools_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    stale = tmp_path / f"{PREFIX}{dead.stdout.strip()}-abc"
    stale.mkdir()
    (stale / "CAUSES.arrow").write_bytes(b"left by a killed ingest")
    mine = tmp_path / f"{PREFIX}{os.getpid()}-xyz"  # a live process's spool stays
    mine.mkdir()
    remove_stale(tmp_path)
    assert _spools(tmp_path) == [mine.name]


def test_reopening_after_big_writes_keeps_the_store_whole(tmp_path, monkeypatch):
    from eventkg.graphstore.ladybug import database

    monkeypatch.setattr(database, "REOPEN_ROWS", 300)  # reopen after every ~300 rows written
    with open_store(str(tmp_path / "s.lbug")) as store:
        events: list[StoreEvent] = []
        store.on_event = events.append
        with store.bulk_load():
            for start in range(0, 2000, 250):
                store.write_batch(_events(250, start=start))
        assert StoreEvent("reopen") in events  # the engine's memory was handed back at least once
        store.write_batch(_events(10, start=100))  # stored keys again: nothing changes
        counts = store.counts()
        assert counts["nodes"]["Event"] == 2000 and counts["edges"]["SYNCHRONOUS"] == 8 * 249
        assert store.query("MATCH (a:Event {text: 'e1'})-[:SYNCHRONOUS]->(b) RETURN b.text AS t") == [{"t": "e2"}]


def test_past_the_key_set_limit_a_session_still_writes_everything_once(tmp_path, monkeypatch):
    monkeypatch.setenv("EVENTKG_KEYSET_MAX", "700")  # the key sets give up mid-session
    with open_store(str(tmp_path / "s.lbug")) as store:
        notes: list[str] = []
        store.on_bulk_write = notes.append
        with store.bulk_load():
            for start in range(0, 1500, 250):
                store.write_batch(_events(250, start=start))
            store.write_batch(_events(250, start=0))  # again: must not duplicate anything
        counts = store.counts()
        assert counts["nodes"]["Event"] == 1500 and counts["edges"]["SYNCHRONOUS"] == 6 * 249
    said = [n for n in notes if "EVENTKG_KEYSET_MAX=700" in n]  # the user is told once, with the setting to raise
    assert len(said) == 1 and said[0].startswith("note: ") and "batch by batch" in said[0]


def test_without_room_for_a_spool_the_session_writes_batch_by_batch(tmp_path, monkeypatch):
    from eventkg.graphstore.ladybug.bulk import session as bulk_session

    def refuse(*_):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(bulk_session, "TableSpool", refuse)
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(_events(100))
        assert store.counts()["edges"]["SYNCHRONOUS"] == 99


def test_a_full_disk_while_holding_is_one_error_and_nothing_lands(tmp_path, monkeypatch):
    """The session is all or nothing: the first batch's nodes were written (a fresh store writes
    them once edges come) and are deleted again when a later batch fails."""
    from eventkg.graphstore.ladybug import spool

    with open_store(str(tmp_path / "s.lbug")) as store:
        with pytest.raises(DiskFullError, match="disk full: holding the ingest's new rows beside .* free on"), \
                store.bulk_load():
            store.write_batch(_events(100))
            monkeypatch.setattr(spool.TableSpool, "add", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
            store.write_batch(_events(100, start=500))
        monkeypatch.undo()
        counts = store.counts()
        assert counts["nodes"]["Event"] == 0 and counts["edges"]["SYNCHRONOUS"] == 0
        assert _spools(tmp_path) == []


def test_keys_repeated_across_batches_keep_the_session_and_later_rows_win(tmp_path):
    """A batch repeating held keys (ASER: two eids with one text, in different chunks) no longer
    writes everything held and upserts batch by batch: its new rows are held, its repeats wait
    and are merged after the held rows land, later values winning as batch by batch."""
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(_events(300))
            again = Batch()  # e5..e9 again with new frequencies and a new source, and e300..e304 new
            for i in [*range(5, 10), *range(300, 305)]:
                again.add_node("Event", {"id": event_id(f"e{i}"), "text": f"e{i}", "level": "schema",
                                         "sources": ["u"], "frequency": float(i)})
            again.add_edge("SYNCHRONOUS", {"src": event_id("e5"), "dst": event_id("e6"), "sources": ["u"], "count": 7.0})
            again.add_edge("SYNCHRONOUS", {"src": event_id("e300"), "dst": event_id("e301"), "sources": ["u"], "count": 1.0})
            store.write_batch(again)
            spools = list(tmp_path.glob(f"{PREFIX}*"))  # the held rows' and the waiting rows' folders
            assert any((held / "SYNCHRONOUS.arrow").exists() for held in spools)  # the edges are held, not written
            assert store.state().held_rows["SYNCHRONOUS"] == 299 + 2  # a fresh rel table holds its repeats too
        counts = store.counts()
        assert counts["nodes"]["Event"] == 305 and counts["edges"]["SYNCHRONOUS"] == 300
        got = store.get_nodes("Event", [event_id("e7"), event_id("e1")])
        assert got[event_id("e7")]["frequency"] == 7.0 and sorted(got[event_id("e7")]["sources"]) == ["t", "u"]
        assert got[event_id("e1")]["sources"] == ["t"] and got[event_id("e1")].get("frequency") is None
        edge = store.query("MATCH (a:Event {id: $a})-[e:SYNCHRONOUS]->(b:Event {id: $b}) RETURN e.count AS c, e.sources AS s",
                           {"a": event_id("e5"), "b": event_id("e6")})
        assert edge == [{"c": 7.0, "s": "t,u"}]


def _repeats(ids: range, frequency: float | None) -> Batch:
    b = Batch()
    for i in ids:
        row = {"id": event_id(f"e{i}"), "text": f"e{i}", "level": "schema", "sources": ["t"]}
        if frequency is not None:
            row["frequency"] = frequency
        b.add_node("Event", row)
    return b


@pytest.mark.parametrize("stored_first", [False, True], ids=["fresh table: merged before the COPY", "stored rows: upserted"])
def test_repeated_keys_give_the_same_rows_and_counts_whether_merged_before_the_copy_or_upserted(tmp_path, stored_first):
    """A fresh table's repeats are merged into its held rows before the one COPY; a table that
    already holds rows gets them upserted. Both end with the same rows and count the same
    updates: a repeat that changes nothing (e10..e14 again as they were) is no update."""
    with open_store(str(tmp_path / "s.lbug")) as store:
        if stored_first:
            store.write_batch(_events(1, start=999))  # the Event table is no longer empty
        with store.bulk_load():
            store.write_batch(_events(50))
            store.write_batch(_repeats(range(5, 10), 3.0))  # changes e5..e9
            store.write_batch(_repeats(range(10, 15), None))  # e10..e14 as held: no change
            store.write_batch(_repeats(range(7, 9), 4.0))  # e7, e8 again: the last value wins
        assert store.late_result.updated.get("Event", 0) == 5
        assert store.counts()["nodes"]["Event"] == 50 + stored_first
        got = store.get_nodes("Event", [event_id(f"e{i}") for i in (5, 7, 12)])
        assert [got[event_id(f"e{i}")].get("frequency") for i in (5, 7, 12)] == [3.0, 4.0, None]


def _flows(pairs: list[tuple[int, int]], count: float, source: str = "t") -> Batch:
    b = Batch()
    for a, z in pairs:
        b.add_edge("SYNCHRONOUS", {"src": event_id(f"e{a}"), "dst": event_id(f"e{z}"), "sources": [source], "count": count})
    return b


@pytest.mark.parametrize("stored_first", [False, True], ids=["fresh rel table: no key set", "stored edges: key set"])
def test_edges_repeated_across_batches_count_as_created_once_and_updated_only_when_changed(tmp_path, stored_first):
    """A fresh rel table is held without a key set and its repeated keys merged when it is COPYed;
    the write counts stay those of the keyed path: each key created once, a repeat updated only
    when it changes the edge (e0->e1 gets a new count; e1->e2 comes again as it was)."""
    with open_store(str(tmp_path / "s.lbug")) as store:
        store.write_batch(_events(50))
        store.query("MATCH ()-[e:SYNCHRONOUS]->() DELETE e", write=True)
        if stored_first:
            store.write_batch(_flows([(40, 41)], 1.0))  # the table is no longer empty
        stored = int(stored_first)
        result = WriteResult()
        with store.bulk_load():
            result.add(store.write_batch(_flows([(0, 1), (1, 2), (2, 3)], 2.0)))
            result.add(store.write_batch(_flows([(0, 1)], 5.0)))  # changes e0->e1
            result.add(store.write_batch(_flows([(1, 2), (3, 4)], 2.0)))  # e1->e2 as it was; e3->e4 new
            assert ("SYNCHRONOUS" in store.state().unkeyed) is not stored_first
        result.add(store.late_result)
        assert result.created["SYNCHRONOUS"] == 4 and result.updated["SYNCHRONOUS"] == 1
        assert store.counts()["edges"]["SYNCHRONOUS"] == stored + 4
        rows = store.query("MATCH (a:Event)-[e:SYNCHRONOUS]->(b:Event) WHERE a.id IN $ids RETURN a.text AS a, e.count AS c",
                           {"ids": [event_id("e0"), event_id("e1")]})
        assert sorted((r["a"], r["c"]) for r in rows) == [("e0", 5.0), ("e1", 2.0)]
        assert not store.state().unkeyed


def test_a_fresh_rel_table_left_by_a_flush_gets_its_key_set_back_from_the_store(tmp_path):
    """Once a session has written an unkeyed rel table (here: a read in the middle of the session
    writes what is held), later batches find its rows again: a repeat is an update, not a second edge."""
    with open_store(str(tmp_path / "s.lbug")) as store:
        store.write_batch(_events(10))
        store.query("MATCH ()-[e:SYNCHRONOUS]->() DELETE e", write=True)
        with store.bulk_load():
            store.write_batch(_flows([(0, 1), (1, 2)], 2.0))
            assert store.counts()["edges"]["SYNCHRONOUS"] == 2  # a read writes what is held
            result = store.write_batch(_flows([(0, 1), (2, 3)], 3.0))
        result.add(store.late_result)
        assert store.counts()["edges"]["SYNCHRONOUS"] == 3
        assert result.created.get("SYNCHRONOUS", 0) == 1 and result.updated.get("SYNCHRONOUS", 0) == 1


def test_slices_read_a_held_table_back_in_order_at_most_n_rows_at_a_time(tmp_path):
    import pyarrow as pa

    from eventkg.graphstore.ladybug.spool import TableSpool

    held = TableSpool(tmp_path / "s.lbug")
    try:
        for start in (0, 10, 20):
            held.add("Event", pa.table({"id": [f"e{i}" for i in range(start, start + 10)]}))
        path = held.folder / "Event.arrow"
        parts = [t.column("id").to_pylist() for t in held.slices("Event", 15)]
        assert [len(p) for p in parts] == [15, 15]  # written batches cut: at most 15 rows each
        assert sum(parts, []) == [f"e{i}" for i in range(30)]
        assert not path.exists() and "Event" not in held.rows
        assert list(held.slices("Event", 15)) == []  # nothing held any more
    finally:
        held.close()


def test_nodes_in_slices_and_edges_in_checkpointed_groups_give_the_same_graph(tmp_path, monkeypatch):
    """Held rows are read back STAGE_READ_ROWS at a time into the file each table is COPYed from,
    and rel tables are checkpointed every REL_PENDING_EDGES edges (the database reopened each
    time): repeated keys split across parts still merge before their COPY, later values winning,
    and nothing is lost."""
    from eventkg.graphstore.ladybug.bulk import held_tables, waiting

    monkeypatch.setattr(held_tables, "STAGE_READ_ROWS", 40)
    monkeypatch.setattr(held_tables, "REL_PENDING_EDGES", 30)
    monkeypatch.setattr(waiting, "EARLY_CHECKPOINT_ROWS", 1)
    with open_store(str(tmp_path / "s.lbug")) as store:
        events: list[StoreEvent] = []
        store.on_event = events.append
        with store.bulk_load():
            for start in range(0, 200, 25):  # eight held batches: five slices of Event
                store.write_batch(_events(25, start=start))
            store.write_batch(_repeats(range(5, 10), 3.0))  # repeats of the first slice
            store.write_batch(_repeats(range(180, 185), 5.0))  # and of the last
            flows = Batch()
            for i in range(0, 60):
                flows.add_edge("CAUSES", {"src": event_id(f"e{i}"), "dst": event_id(f"e{i + 1}"), "sources": ["t"],
                                          "weight": 1.0})
            store.write_batch(flows)
        assert StoreEvent("reopen") in events
        counts = store.counts()
        assert counts["nodes"]["Event"] == 200
        assert counts["edges"]["SYNCHRONOUS"] == 8 * 24 and counts["edges"]["CAUSES"] == 60
        assert store.late_result.updated.get("Event", 0) == 10
        got = store.get_nodes("Event", [event_id(f"e{i}") for i in (5, 50, 184)])
        assert [got[event_id(f"e{i}")].get("frequency") for i in (5, 50, 184)] == [3.0, None, 5.0]


def test_partitions_split_a_held_table_by_key_keeping_each_keys_rows_in_order(tmp_path):
    import pyarrow as pa

    from eventkg.graphstore.keyset import fingerprints
    from eventkg.graphstore.ladybug.spool import TableSpool, read_partitions

    held = TableSpool(tmp_path / "s.lbug")
    try:
        for start in (0, 10, 20):
            ids = [f"k{i % 7}" for i in range(start, start + 10)]
            held.add("Event", pa.table({"id": ids, "n": list(range(start, start + 10))}))
        path = held.held_file("Event")
        parts = list(read_partitions(path, 3, lambda b: fingerprints(b.column("id"))[0]))
        assert len(parts) == 3 and sum(p.num_rows for p in parts) == 30
        owner = {}
        for i, part in enumerate(parts):
            for key in set(part.column("id").to_pylist()):
                assert owner.setdefault(key, i) == i  # every key in exactly one part
            assert part.column("n").to_pylist() == sorted(part.column("n").to_pylist())  # in the order held
        assert path.exists() and "Event" not in held.rows  # no longer held; the caller deletes the file
        assert held.held_file("Event") is None
    finally:
        held.close()


def test_a_rerun_upserts_its_waiting_rows_in_parts_with_keyed_lookups(tmp_path, monkeypatch):
    """A re-run sends every key again: the waiting rows go in parts of LATE_UPSERT_ROWS (split
    by key) and, past SCAN_MAX_NODES, stored rows are found by keyed lookups, not a scan."""
    from eventkg.graphstore.ladybug import upsert as ladybug_upsert
    from eventkg.graphstore.ladybug.bulk import waiting

    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(_events(120))
    monkeypatch.setattr(waiting, "LATE_UPSERT_ROWS", 25)
    monkeypatch.setattr(ladybug_upsert, "SCAN_MAX_NODES", 50)
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(_events(120))  # all stored already, nothing changes
            store.write_batch(_repeats(range(30, 40), 2.0))  # changes e30..e39
            store.write_batch(_repeats(range(35, 38), 6.0))  # e35..e37 again: the last value wins
            store.write_batch(_events(10, start=200))  # new rows still held and COPYed
        assert store.late_result.updated.get("Event", 0) == 10
        assert store.late_result.created.get("Event", 0) == 0
        counts = store.counts()
        assert counts["nodes"]["Event"] == 130 and counts["edges"]["SYNCHRONOUS"] == 119 + 9
        got = store.get_nodes("Event", [event_id(f"e{i}") for i in (30, 36, 50)])
        assert [got[event_id(f"e{i}")].get("frequency") for i in (30, 36, 50)] == [2.0, 6.0, None]


def test_key_sets_read_in_offset_ranges_hold_exactly_the_stored_keys(tmp_path, monkeypatch):
    """Built a few node offsets (of a rel table's sources) at a time (``KEY_SCAN_ROWS``), across
    the gaps deleted nodes leave."""
    from eventkg.graphstore.keyset import edge_fingerprints, fingerprints
    from eventkg.graphstore.ladybug import stored_keys

    monkeypatch.setattr(stored_keys, "KEY_SCAN_ROWS", 7)
    path = str(tmp_path / "s.lbug")
    with open_store(path) as store:
        store.write_batch(_events(50))
        store.query("MATCH (n:Event) WHERE n.text IN ['e3', 'e20', 'e49'] DETACH DELETE n", write=True)
    with open_store(path) as store:
        keys = store.key_set("Event")
        kept = [event_id(f"e{i}") for i in range(50) if i not in (3, 20, 49)]
        assert len(keys) == 47 and keys.lookup(*fingerprints(kept))[0].all()
        assert not keys.lookup(*fingerprints([event_id(f"e{i}") for i in (3, 20, 49)]))[0].any()
        edges = store.key_set("SYNCHRONOUS")
        pairs = [(i, i + 1) for i in range(49)]
        kept = [p for p in pairs if not {3, 20, 49} & set(p)]
        gone = [p for p in pairs if p not in kept]

        def ends(ps):
            return edge_fingerprints([event_id(f"e{a}") for a, _ in ps], [event_id(f"e{b}") for _, b in ps])

        assert len(edges) == len(kept) == 44 and edges.lookup(*ends(kept))[0].all()
        assert not edges.lookup(*ends(gone))[0].any()


def test_a_node_key_set_is_built_from_one_read_of_its_table(tmp_path, monkeypatch):
    """Pages of node offsets, one query each, read the whole node table per page (the square of its
    size at 10M events); the key scan has the engine write a node table's ids once, beside the
    store, and hashes that file in parts, then removes it."""
    from types import SimpleNamespace

    from eventkg.graphstore.keyset import fingerprints
    from eventkg.graphstore.ladybug import stored_keys

    monkeypatch.setattr(stored_keys, "KEY_SCAN_ROWS", 7)
    folder = tmp_path / "it's here"  # the file's path goes into a Cypher string
    folder.mkdir()
    path = folder / "s.lbug"
    statements: list[str] = []
    with open_store(str(path)) as store:
        store.write_batch(_events(50))
        store.query("MATCH (n:Event) WHERE n.text = 'e20' DETACH DELETE n", write=True)
        conn = store.connection

        class Recorded:
            def execute(self, statement: str, *args):
                statements.append(statement)
                return conn.execute(statement, *args)

        sets = stored_keys.StoredKeys(SimpleNamespace(conn=Recorded(), url=str(path), failed=False), 10**6)
        keys = sets.get("Event")
    reads = [s for s in statements if "(n:Event)" in s and "count(" not in s]
    assert len(reads) == 1 and reads[0].startswith("COPY (MATCH (n:Event)"), reads
    kept = [event_id(f"e{i}") for i in range(50) if i != 20]
    assert len(keys) == 49 and keys.lookup(*fingerprints(kept))[0].all()
    assert not keys.lookup(*fingerprints([event_id("e20")]))[0].any()
    assert not [p.name for p in folder.iterdir() if p.name.startswith(PREFIX)]


@pytest.mark.parametrize("by_offsets", [True, False])
def test_a_rel_key_set_by_end_offsets_or_by_end_ids_holds_exactly_the_stored_keys(tmp_path, monkeypatch, by_offsets):
    """A big rel table's set is composed from its ends' node offsets and each end label's
    fingerprints by offset; a small one's from its ends' ids. Both hold exactly the stored edges,
    across the holes deleted nodes leave in either end label."""
    from eventkg.graphstore.keyset import edge_fingerprints
    from eventkg.graphstore.ladybug import stored_keys

    monkeypatch.setattr(stored_keys, "KEY_SCAN_ROWS", 7)
    monkeypatch.setattr(stored_keys, "OFFSET_SCAN_EDGES_PER_NODE", 0.0 if by_offsets else float("inf"))
    path = str(tmp_path / "s.lbug")
    b = _events(40)
    for c in range(12):
        b.add_node("Concept", {"id": f"c{c}", "name": f"concept {c}", "sources": ["t"]})
    abstracts = [(event_id(f"e{i}"), f"c{(i * 5) % 12}") for i in range(0, 40, 2)]
    for src, dst in abstracts:
        b.add_edge("ABSTRACTS_TO", {"src": src, "dst": dst, "sources": ["t"]})
    with open_store(path) as store:
        store.write_batch(b)
        store.query("MATCH (n:Event) WHERE n.text IN ['e0', 'e7', 'e21'] DETACH DELETE n", write=True)
        store.query("MATCH (n:Concept) WHERE n.id IN ['c3', 'c10'] DETACH DELETE n", write=True)
    gone_events, gone_concepts = {event_id(f"e{i}") for i in (0, 7, 21)}, {"c3", "c10"}
    with open_store(path) as store:
        calls: list[str] = []
        real = stored_keys._add_offset_pages
        monkeypatch.setattr(stored_keys, "_add_offset_pages", lambda *a: (calls.append(a[1]), real(*a)))
        got = {name: store.key_set(name) for name in ("SYNCHRONOUS", "ABSTRACTS_TO")}
    assert calls == (["SYNCHRONOUS", "ABSTRACTS_TO"] if by_offsets else [])
    pairs = [(event_id(f"e{i}"), event_id(f"e{i + 1}")) for i in range(39)]
    for name, all_pairs, ends in (("SYNCHRONOUS", pairs, (gone_events, gone_events)),
                                  ("ABSTRACTS_TO", abstracts, (gone_events, gone_concepts))):
        kept = [p for p in all_pairs if p[0] not in ends[0] and p[1] not in ends[1]]
        gone = [p for p in all_pairs if p not in kept]
        assert len(got[name]) == len(kept) and gone, name
        assert got[name].lookup(*edge_fingerprints([a for a, _ in kept], [b for _, b in kept]))[0].all(), name
        assert not got[name].lookup(*edge_fingerprints([a for a, _ in gone], [b for _, b in gone]))[0].any(), name


def test_key_fingerprints_held_beside_a_table_come_back_in_row_order_or_not_at_all(tmp_path):
    import numpy as np
    import pyarrow as pa

    from eventkg.graphstore.ladybug.spool import TableSpool

    held = TableSpool(tmp_path / "s.lbug")
    try:
        for start in (0, 3):
            rows = np.arange(start, start + 3, dtype=np.uint64)
            held.add("CAUSES", pa.table({"src": ["a"] * 3}), (rows, rows + np.uint64(100)))
        h1, h2 = held.take_keys("CAUSES", 6)
        assert h1.tolist() == [0, 1, 2, 3, 4, 5] and h2.tolist() == [100, 101, 102, 103, 104, 105]
        assert held.take_keys("CAUSES", 6) is None  # read once
        held.add("BEFORE", pa.table({"src": ["a"] * 2}), (np.zeros(2, np.uint64), np.zeros(2, np.uint64)))
        held.add("BEFORE", pa.table({"src": ["b"]}))  # an add without them: they no longer cover the table
        assert held.take_keys("BEFORE", 3) is None
    finally:
        held.close()


def test_a_copy_into_a_rel_table_that_held_edges_is_checkpointed_before_the_next_copy(tmp_path):
    """Such a COPY keeps engine memory for every node group its edges touch until a checkpoint
    (~135 B per node at ASER scale, however few the edges), so the rows of stored rel tables wait
    for the end of the session and each table's are written and checkpointed one by one (digests
    known or not); a fresh rel table's held COPY still waits for the edge budget."""

    def chain(rtype: str, prop: str, pairs) -> Batch:
        b = Batch()
        for i, j in pairs:
            b.add_edge(rtype, {"src": event_id(f"e{i}"), "dst": event_id(f"e{j}"), "sources": ["t"], prop: 1.0})
        return b

    path = tmp_path / "s.lbug"
    with open_store(str(path)) as store, store.bulk_load():
        store.write_batch(_events(50))
        store.write_batch(chain("CAUSES", "weight", [(i, i + 1) for i in range(40)]))
    (tmp_path / "s.lbug.digests").unlink()  # digests unknown (an older store): new rows are held by key
    events: list[StoreEvent] = []
    with open_store(str(path)) as store:
        store.on_event = events.append
        with store.bulk_load():
            batch = chain("CAUSES", "weight", [(i, i + 2) for i in range(30)])
            for rtype, prop in (("SYNCHRONOUS", "count"), ("BEFORE", "weight"), ("PRECEDENCE", "count")):
                batch.edges.setdefault(rtype, []).extend(chain(rtype, prop, [(i, i + 3) for i in range(20)]).edges[rtype])
            store.write_batch(batch)
            assert store.state().deferred == {"CAUSES", "SYNCHRONOUS"}
        counts = store.counts()["edges"]
    # the rel tables written (held ones COPYed, deferred ones' waiting rows) and the checkpoints, in order
    log = [e.table if e.kind in ("copied", "merged") else e.kind for e in events
           if e.kind == "checkpoint" or e.kind in ("copied", "merged") and e.table in REL_TYPES]
    assert {n: counts[n] for n in ("CAUSES", "SYNCHRONOUS", "BEFORE", "PRECEDENCE")} == {
        "CAUSES": 70, "SYNCHRONOUS": 49 + 20, "BEFORE": 20, "PRECEDENCE": 20}
    written = [entry for entry in log if entry != "checkpoint"]
    assert sorted(written) == ["BEFORE", "CAUSES", "PRECEDENCE", "SYNCHRONOUS"]
    for name in ("CAUSES", "SYNCHRONOUS"):  # appended to stored edges: a checkpoint right after
        assert log[log.index(name) + 1] == "checkpoint"
    fresh = [log[log.index(name) + 1] for name in ("BEFORE", "PRECEDENCE") if log.index(name) + 1 < len(log)]
    assert fresh.count("checkpoint") <= 1  # fresh tables share the edge budget (only the last may end it)


def test_changed_stored_nodes_are_rewritten_a_few_node_groups_per_transaction(tmp_path, monkeypatch):
    """A session's waiting rows that change stored nodes are rewritten in offset order, at most
    ``engine.update_node_groups()`` node groups per transaction (what UPDATE_SHARE of the memory
    budget holds at NODE_GROUP_UPDATE_BYTES each), each checkpointed: one update over the whole
    table keeps engine memory in proportion to the table until its checkpoint."""
    from eventkg.graphstore.ladybug import engine
    from eventkg.graphstore.ladybug import upsert as ladybug_upsert

    monkeypatch.setattr(ladybug_upsert, "NODE_GROUP_ROWS", 10)  # so 100 events span ten groups
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "1024")  # a quarter of it: 256 MiB,
    monkeypatch.setattr(engine, "NODE_GROUP_UPDATE_BYTES", 100 * 2**20)  # so 2 groups: 20 offsets per transaction
    assert engine.update_node_groups() == 2
    path = str(tmp_path / "s.lbug")
    with open_store(path) as store, store.bulk_load():
        store.write_batch(_events(100))  # one COPY: e<i> is the node at offset i
    changed = list(range(3, 100, 7))  # 14 events, in five of the 20-offset parts
    again = _events(100)
    for row in again.nodes["Event"]:
        if int(row["text"][1:]) in changed:
            row["frequency"] = 7.0
    parts: list[list[int]] = []
    update = ladybug_upsert.update_rows

    def recorded(conn, name, rows):
        parts.append(sorted(int(r["text"][1:]) for r in rows))
        update(conn, name, rows)

    monkeypatch.setattr(ladybug_upsert, "update_rows", recorded)
    with open_store(path) as store:
        with store.bulk_load():
            store.write_batch(again)
        assert store.late_result.updated.get("Event") == len(changed)
        stored = store.get_nodes("Event", [event_id(f"e{i}") for i in range(100)])
    assert sorted(i for part in parts for i in part) == changed
    assert [sorted({i // 20 for i in part}) for part in parts] == [[0], [1], [2], [3], [4]]
    assert [i for i in range(100) if stored[event_id(f"e{i}")].get("frequency") == 7.0] == changed
    monkeypatch.undo()
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "2048")
    assert engine.update_node_groups() == 25  # 512 MiB of the default budget over 20 MiB a group
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "512")
    assert engine.update_node_groups() == 6


def test_a_table_bigger_than_one_copy_may_take_goes_in_several_and_says_so_first(tmp_path, monkeypatch):
    """The memory budget bounds the rows of one COPY (``copy_rows``): past it a held table is
    COPYed in parts, each checkpointed, after a ``note:`` naming the parts and the setting. A node
    table's parts each hold the keys of one range of the engine's hash indexes (the top 8 bits of
    its own ``hash()`` of the key), so each checkpoint rewrites only that range of its index."""
    import bisect

    import ladybug
    import pyarrow.parquet as pq

    from eventkg.graphstore.ladybug import writer
    from eventkg.graphstore.ladybug.bulk import staged_copies

    monkeypatch.setattr(staged_copies, "copy_rows", lambda name, pool: 40)
    copies, messages = [], []
    monkeypatch.setattr(writer, "copy_file", lambda conn, name, path, f=writer.copy_file: (
        copies.append((name, pq.read_table(path).column(0).to_pylist())), f(conn, name, path))[-1])
    with open_store(str(tmp_path / "s.lbug")) as store:
        store.on_bulk_write = messages.append
        with store.bulk_load():
            store.write_batch(_events(100))
        counts = store.counts()
        assert counts["nodes"]["Event"] == 100 and counts["edges"]["SYNCHRONOUS"] == 99
    assert [len(rows) for name, rows in copies if name == "SYNCHRONOUS"] == [40, 40, 19]  # in the order held
    events = [rows for name, rows in copies if name == "Event"]
    assert len(events) >= 3 and all(len(rows) <= 40 for rows in events) and sum(map(len, events)) == 100
    conn = ladybug.Connection(ladybug.Database(":memory:"))
    top = [[int(conn.execute("RETURN hash($k)", {"k": k}).get_next()[0]) >> 56 for k in rows] for rows in events]
    # the three ranges the note plans, 256 hash indexes cut in three; a range that drew more than 40
    # keys goes in two COPYs, so each COPY's keys lie in one range, the ranges in order
    ranges = [[bisect.bisect_right([85, 171], p) for p in positions] for positions in top]
    assert all(len(set(r)) == 1 for r in ranges) and [r[0] for r in ranges] == sorted(r[0] for r in ranges)
    assert {r[0] for r in ranges} == {0, 1, 2}
    notes = [m for m in messages if m.startswith("note: ")]
    assert notes[0].startswith("note: Event: 100 rows need 3 COPYs of at most 40") and "EVENTKG_MEMORY_MB" in notes[0]
    assert messages.index(notes[0]) < messages.index(next(m for m in messages if m.startswith("note: SYNCHRONOUS")))


def test_a_rel_copy_gets_the_pool_the_budget_leaves_beside_the_process(monkeypatch):
    """``edge_pool_for``: the share's cap when the process is small, the budget less the process and
    the COPY's margin when it is not (rounded down to 64 MiB), never under the floor."""
    from eventkg.graphstore.ladybug import engine

    mib = 2**20
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "2048")
    assert engine.edge_pool_for(None) == int(2048 * mib * engine.EDGE_POOL_SHARE)
    assert engine.edge_pool_for(100 * mib) == int(2048 * mib * engine.EDGE_POOL_SHARE)  # 1,692 MiB of room > cap
    # 2,048 - 681 - 256 = 1,111 MiB of room, 1,088 once rounded down to 64 MiB
    assert engine.edge_pool_for(681 * mib) == 1088 * mib
    assert engine.edge_pool_for(1900 * mib) == 256 * mib  # no room: the floor
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "8192")
    assert engine.edge_pool_for(681 * mib) == int(8192 * mib * engine.EDGE_POOL_SHARE)
    assert engine.resident_bytes() > 10 * mib  # this process, read from /proc


def test_appending_edges_the_budget_cannot_hold_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    """A COPY appending to a stored rel table keeps engine memory per node of its end labels
    (``engine.APPEND_NODE_BYTES``), and it and its checkpoint take more beside the pool and the
    process (``APPEND_BESIDE_NODE_BYTES``); when the budget cannot hold that, the session says so in one line
    before writing, and the store keeps exactly what it held."""
    from eventkg.graphstore.ladybug import engine
    from eventkg.graphstore.ladybug.bulk import staged_copies
    from eventkg.graphstore.ladybug.engine import pool_in_use

    mib = 2**20
    path = str(tmp_path / "s.lbug")
    with open_store(path) as store:
        store.write_batch(_events(300))
        before = ([sorted(map(str, store.iter_nodes("Event")))], sorted(map(str, store.iter_edges("SYNCHRONOUS"))))
    # the process holds 100 MiB beside the pool's pages, whatever this test process holds
    monkeypatch.setattr(staged_copies, "resident_bytes", lambda: pool_in_use(store.connection) + 100 * mib)
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "1024")  # rel pool cap 768 MiB
    monkeypatch.setattr(engine, "APPEND_NODE_BYTES", mib)  # 400 nodes x 1 MiB + 256: 656 MiB, under the cap
    monkeypatch.setattr(engine, "APPEND_BESIDE_NODE_BYTES", mib)  # and 656 MiB beside the pool
    with open_store(path) as store:
        with pytest.raises(StoreError) as err, store.bulk_load():
            store.write_batch(_events(100, start=300))  # new events, and edges appended to SYNCHRONOUS
            store.write_batch(_flows([(0, 350)], 1.0))
        message = str(err.value)
        assert "\n" not in message and "SYNCHRONOUS" in message and "nothing was written" in message
        assert "~656 MiB of engine memory and ~756 MiB beside it" in message  # the 100 MiB held, and 656
        assert "EVENTKG_MEMORY_MB to at least 1536 " in message  # 656 + 756 MiB, up to 512s
    with open_store(path) as store:
        after = ([sorted(map(str, store.iter_nodes("Event")))], sorted(map(str, store.iter_edges("SYNCHRONOUS"))))
    assert after == before
    monkeypatch.setattr(engine, "APPEND_NODE_BYTES", 150)  # the real figures: the same ingest goes in
    monkeypatch.setattr(engine, "APPEND_BESIDE_NODE_BYTES", 40)
    with open_store(path) as store:
        with store.bulk_load():
            store.write_batch(_events(100, start=300))
            store.write_batch(_flows([(0, 350)], 1.0))
        assert store.counts()["nodes"]["Event"] == 400


def test_a_small_append_is_not_refused_for_memory_the_process_holds_for_other_things(tmp_path, monkeypatch):
    """The process's own memory counts in the append's check only up to the share the rel COPYs'
    pool leaves it: a process holding 1.8 GB beside the pool (a notebook, a test run) still adds a
    few edges under the 2 GB default (the full test suite's process was refused a 229-node append)."""
    from eventkg.graphstore.ladybug.bulk import staged_copies
    from eventkg.graphstore.ladybug.engine import pool_in_use

    path = str(tmp_path / "s.lbug")
    with open_store(path) as store:
        store.write_batch(_events(300))  # 299 SYNCHRONOUS edges, i -> i + 1
    monkeypatch.setattr(staged_copies, "resident_bytes", lambda: pool_in_use(store.connection) + 1800 * 2**20)
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "2048")
    with open_store(path) as store:
        with store.bulk_load():
            store.write_batch(_flows([(0, 2), (3, 5)], 1.0))
        assert store.counts()["edges"]["SYNCHRONOUS"] == 301


def test_a_rel_copy_is_sized_on_the_process_beside_the_pool_pages_it_reuses(tmp_path, monkeypatch):
    """The buffer pool's pages in use (the engine's ``bm_info``) count in the process's resident
    size, yet the next COPY in the same opening reuses them: each rel COPY's pool is planned on the
    resident size less them (a second table COPYed before a checkpoint was given a pool shrunk by
    the first one's pages, and the database reopened to shrink it)."""
    from eventkg.graphstore.ladybug.bulk import staged_copies
    from eventkg.graphstore.ladybug.engine import pool_in_use

    mib, planned, in_use = 2**20, [], []
    real = staged_copies.edge_pool_for

    def resident() -> int:
        in_use.append(pool_in_use(store.connection))
        return in_use[-1] + 300 * mib  # what the process holds beside the pool, whatever the pool holds

    monkeypatch.setattr(staged_copies, "resident_bytes", resident)
    monkeypatch.setattr(staged_copies, "edge_pool_for", lambda beside, *margin: (planned.append(beside), real(beside, *margin))[-1])
    batch = _events(500)
    for i in range(498):
        batch.add_edge("PRECEDENCE", {"src": event_id(f"e{i}"), "dst": event_id(f"e{i + 2}"), "sources": ["t"], "count": 1.0})
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(batch)
        assert store.counts()["edges"]["PRECEDENCE"] == 498
    assert len(planned) == 2 and all(abs(p - 300 * mib) < mib for p in planned), (planned, in_use)
    assert max(in_use) > 2 * mib, in_use  # the pages the planning left out 


def test_a_rel_copy_grows_an_open_pool_that_is_well_under_what_the_budget_leaves(tmp_path, monkeypatch):
    """The rel COPY's pool is grown to what the budget leaves beside the process once the open pool
    is more than ``POOL_SLACK`` under it: here 1,152 MiB against the 1,024 MiB open after the node
    tables (docs/performance.md, ``POOL_SLACK``)."""
    from eventkg.graphstore.ladybug.bulk import staged_copies
    from eventkg.graphstore.ladybug.database import Database
    from eventkg.graphstore.ladybug.engine import pool_in_use

    mib, pools = 2**20, []
    monkeypatch.setenv("EVENTKG_MEMORY_MB", "2048")
    # 600 MiB beside the pool: 2,048 - 600 - 256 = 1,192 MiB of room, 1,152 once rounded down to 64 MiB
    monkeypatch.setattr(staged_copies, "resident_bytes", lambda: pool_in_use(store.connection) + 600 * mib)
    real = Database.set_buffer_pool
    monkeypatch.setattr(Database, "set_buffer_pool", lambda self, n: (pools.append(n // mib), real(self, n))[-1])
    batch = _events(200)
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(batch)
        assert store.counts()["edges"]["SYNCHRONOUS"] == 199
    assert 1024 in pools and 1152 in pools[pools.index(1024):], pools


def test_a_staged_file_closed_before_its_copy_keeps_its_digest(tmp_path):
    """The bulk session closes a staged file before it sizes the COPY's pool, and the COPY closes it
    again: the second close gives the digest of every row added, not an empty one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from eventkg.graphstore.digest import EMPTY, table_digest
    from eventkg.graphstore.ladybug.spool import Staged

    rows = pa.table({"src": [f"a{i}" for i in range(50)], "dst": [f"b{i}" for i in range(50)],
                     "count": [float(i) for i in range(50)]})
    stage = Staged(tmp_path / "t.parquet", rows.schema, digest=True)
    stage.add(rows.slice(0, 20))
    stage.add(rows.slice(20))
    first = stage.close()
    assert first == table_digest(rows) and first != EMPTY
    assert stage.close() == first
    assert pq.read_table(stage.path).equals(rows)
    stage.discard()
    assert not stage.path.exists()


def test_the_staged_file_is_closed_before_its_rel_copy_pool_is_sized(tmp_path, monkeypatch):
    """The writer's buffers are freed before the process beside the pool is measured (they counted
    against the pool: docs/performance.md): at that moment the staged Parquet file is
    whole (its footer written)."""
    import pyarrow.parquet as pq

    from eventkg.graphstore.ladybug.bulk import staged_copies

    whole, real = [], staged_copies.resident_bytes

    def resident() -> int | None:
        staged = list(tmp_path.glob(f"{PREFIX}*/SYNCHRONOUS.parquet"))
        whole.append(bool(staged) and pq.ParquetFile(str(staged[0])).metadata.num_rows == 299)
        return real()

    monkeypatch.setattr(staged_copies, "resident_bytes", resident)
    with open_store(str(tmp_path / "s.lbug")) as store:
        with store.bulk_load():
            store.write_batch(_events(300))
        assert store.counts()["edges"]["SYNCHRONOUS"] == 299
    assert whole == [True], whole



def test_the_event_hook_given_at_open_hears_the_checkpoint_that_closing_makes(tmp_path):
    from eventkg.graphstore.ladybug.store import LadybugStore

    events: list[StoreEvent] = []
    store = LadybugStore(str(tmp_path / "s.lbug"), on_event=events.append)
    store.write_batch(_events(5))
    assert StoreEvent("checkpoint") not in events  # one batch: its rows wait in the write-ahead log
    store.close()
    assert events[-1] == StoreEvent("checkpoint")
