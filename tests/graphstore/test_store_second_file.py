"""A second file onto a store that holds a graph: the bulk session's looked-up node tables and
deferred rel tables give the graph that writing both files batch by batch gives, and count each
key once: created when it was not stored, updated when its stored row changed.

The second session asks the engine about a big stored node table's keys batch by batch (here any
size, ``SCAN_MAX_NODES`` patched to 0) and lets a stored rel table's rows wait for its end, where a
row naming a node the session added is new without a lookup and the others are looked up per
source or through a key set. The reference is the plain batch-by-batch upsert path (no bulk
session), a different code path; both stores must end with the same rows, property for property,
and the counts are read off the two dumps, not off either path's own counting.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventkg.graphstore import Batch, open_store
from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES, event_id

RELS = ("SYNCHRONOUS", "CAUSES")  # one with a count, one with a weight


def _node(i: int, freq: float | None, source: str) -> dict:
    row = {"id": event_id(f"e{i}"), "text": f"e{i}", "level": "schema", "sources": [source]}
    if freq is not None:
        row["frequency"] = freq
    return row


def _edge(rtype: str, a: int, b: int, value: float, source: str) -> dict:
    prop = "count" if rtype == "SYNCHRONOUS" else "weight"
    return {"src": event_id(f"e{a}"), "dst": event_id(f"e{b}"), "sources": [source], prop: value}


def _file(nodes: list[tuple[int, float | None]], edges: list[tuple[int, int, int, float]], source: str,
          batch_rows: int) -> list[Batch]:
    """Batches as a loader sends them: every node first, then edges (ends among the file's nodes)."""
    ids = sorted({i for i, _ in nodes})
    batches, b = [], Batch()
    for n, (i, freq) in enumerate(nodes, 1):
        b.add_node("Event", _node(i, freq, source))
        if n % batch_rows == 0:
            batches.append(b)
            b = Batch()
    for n, (r, a, z, value) in enumerate(edges, 1):
        if ids:
            b.add_edge(RELS[r], _edge(RELS[r], ids[a % len(ids)], ids[z % len(ids)], value, source))
        if n % batch_rows == 0:
            batches.append(b)
            b = Batch()
    return [*batches, b]


def _rows(store) -> dict[tuple[str, str], str]:
    """Every row of the store by (table, key), as JSON (sources sorted)."""
    out = {}
    for table, rows, key in [*((label, store.iter_nodes(label), ("id",)) for label in NODE_TYPES),
                             *((rtype, store.iter_edges(rtype), ("src", "dst")) for rtype in REL_TYPES)]:
        for r in rows:
            out[(table, "|".join(r[k] for k in key))] = json.dumps(dict(r, sources=sorted(r.get("sources") or [])),
                                                                    sort_keys=True)
    return out


def _changes(before: dict, after: dict) -> tuple[dict[str, int], dict[str, int]]:
    """(created, updated) per table between two dumps: keys new in ``after``, and keys whose row changed."""
    created: dict[str, int] = {}
    updated: dict[str, int] = {}
    for (table, key), row in after.items():
        if (table, key) not in before:
            created[table] = created.get(table, 0) + 1
        elif before[(table, key)] != row:
            updated[table] = updated.get(table, 0) + 1
    return created, updated


def _no_repeats(file) -> bool:
    nodes, edges = file
    ids = sorted({i for i, _ in nodes})
    pairs = [(r, ids[x % len(ids)], ids[z % len(ids)]) for r, x, z, _ in edges]
    return len({i for i, _ in nodes}) == len(nodes) and len(set(pairs)) == len(pairs)


def _write(store, batches: list[Batch], bulk: bool) -> WriteResult:
    result = WriteResult()
    if not bulk:
        for b in batches:
            result.add(store.write_batch(b))
        return result
    with store.bulk_load():
        for b in batches:
            result.add(store.write_batch(b))
    result.add(store.late_result)
    return result


edges = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 30), st.integers(0, 30), st.sampled_from([1.0, 3.0])),
                 max_size=90)
files = st.tuples(
    st.lists(st.tuples(st.integers(0, 24), st.sampled_from([None, 1.0, 2.0])), min_size=2, max_size=25,
             unique_by=lambda node: node[0]),
    edges,
)


@st.composite
def second_files(draw):
    """A file whose last nodes repeat some of its keys (with any frequency), so later batches repeat
    keys it adds itself (merged before the COPY) as well as stored ones (upserted after it)."""
    nodes = draw(st.lists(st.tuples(st.integers(0, 34), st.sampled_from([None, 1.0, 2.0])), min_size=2, max_size=25,
                          unique_by=lambda node: node[0]))
    again = draw(st.lists(st.tuples(st.sampled_from([i for i, _ in nodes]), st.sampled_from([None, 1.0, 2.0])),
                          max_size=10))
    return nodes + again, draw(edges)



@pytest.mark.parametrize("digests", [True, False], ids=["digests known", "digests lost (a copied store)"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=files, second=second_files(), batch_rows=st.integers(3, 40))
def test_a_second_file_gives_the_rows_and_counts_of_writing_both_batch_by_batch(
        tmp_path_factory, monkeypatch, digests, first, second, batch_rows):
    from eventkg.graphstore.ladybug.bulk import planning

    folder = tmp_path_factory.mktemp("second")
    a, b = _file(*first, "a", batch_rows), _file(*second, "b", batch_rows)
    with open_store(str(folder / "ref.lbug")) as ref:
        _write(ref, a, bulk=False)
        before = _rows(ref)
        _write(ref, b, bulk=False)
        want = _rows(ref)
    path = folder / "s.lbug"
    with open_store(str(path)) as store:
        _write(store, a, bulk=True)
    if not digests:
        path.with_name(path.name + ".digests").unlink()
    monkeypatch.setattr(planning, "SCAN_MAX_NODES", 0)
    with open_store(str(path)) as store:
        got_result = WriteResult()
        with store.bulk_load():
            for batch in b:
                got_result.add(store.write_batch(batch))
            seen = store.state()  # which path the session took, seen before it ends
        got_result.add(store.late_result)
        got = _rows(store)
    monkeypatch.undo()
    assert got == want
    created, updated = _changes(before, want)  # what the session must say it did: each key once
    assert {k: v for k, v in got_result.created.items() if v} == created
    if _no_repeats(second):  # a key repeated in the file is counted per change, as batch by batch
        assert {k: v for k, v in got_result.updated.items() if v} == updated
    if any(batch.nodes for batch in b):  # a stored Event table: asked of the engine, not scanned
        assert seen.looked_up == {"Event"}


def test_edges_naming_a_node_the_session_adds_are_written_without_asking_the_engine(tmp_path, monkeypatch):
    """The stored SYNCHRONOUS table defers; of the second file's edges, those naming a new node are
    COPYed at once, and only the one between two stored nodes is looked up (one keyed query)."""
    from eventkg.graphstore.ladybug.bulk import planning, waiting

    path = str(tmp_path / "s.lbug")
    first = Batch()
    for i in range(10):
        first.add_node("Event", _node(i, None, "a"))
    for i in range(9):
        first.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", i, i + 1, 1.0, "a"))
    with open_store(path) as store, store.bulk_load():
        store.write_batch(first)
    monkeypatch.setattr(planning, "SCAN_MAX_NODES", 0)
    asked: list[int] = []
    lookup = waiting.existing_edges
    monkeypatch.setattr(waiting, "existing_edges", lambda conn, name, rows, **kw: (
        asked.append(rows.num_rows), lookup(conn, name, rows, **kw))[1])
    second = Batch()
    for i in range(10, 20):
        second.add_node("Event", _node(i, None, "b"))
    second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 3, 7, 4.0, "b"))  # two stored ends: asked
    for i in range(10, 19):
        second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", i, i + 1, 1.0, "b"))  # new ends: not asked
    second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 2, 15, 1.0, "b"))  # one new end: not asked
    with open_store(path) as store:
        with store.bulk_load():
            store.write_batch(second)
            assert store.state().deferred == {"SYNCHRONOUS"} and store.state().looked_up == {"Event"}
        assert asked == [1]
        assert store.late_result.created["SYNCHRONOUS"] == 11
        assert store.counts()["edges"]["SYNCHRONOUS"] == 9 + 11


def test_looking_up_a_stored_node_table_cuts_the_pool_to_the_node_share_until_the_session_ends(tmp_path, monkeypatch):
    """The engine answers a looked-up table's keys from its buffer pool while the loader holds its
    own memory: the pool is the node COPYs' share from the first lookup, the usual one after the
    session, whether it wrote anything or not."""
    from eventkg.graphstore.ladybug.bulk import planning
    from eventkg.graphstore.ladybug.engine import buffer_pool_bytes, node_pool_bytes

    path = str(tmp_path / "s.lbug")
    first = Batch()
    for i in range(10):
        first.add_node("Event", _node(i, None, "a"))
    with open_store(path) as store, store.bulk_load():
        store.write_batch(first)
    monkeypatch.setattr(planning, "SCAN_MAX_NODES", 0)
    assert node_pool_bytes() < buffer_pool_bytes()
    for new in (range(10, 12), range(0, 2)):  # new events, then only stored ones (nothing to write)
        batch = Batch()
        for i in new:
            batch.add_node("Event", _node(i, None, "a"))
        with open_store(path) as store:
            assert store.state().buffer_pool_bytes == buffer_pool_bytes()
            with store.bulk_load():
                store.write_batch(batch)
                state = store.state()
                assert state.looked_up == {"Event"} and state.buffer_pool_bytes == node_pool_bytes()
            assert store.state().buffer_pool_bytes == buffer_pool_bytes()
            assert store.counts()["nodes"]["Event"] == 12


def test_a_second_file_that_fails_part_way_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    """A failure inside the session (a bad row, Ctrl-C) after batches went through the looked-up
    node table and the deferred rel table: nothing of the second file lands, row for row."""
    from eventkg.graphstore.ladybug.bulk import planning

    path = str(tmp_path / "s.lbug")
    with open_store(path) as store:
        _write(store, _file([(i, None) for i in range(12)], [(0, i, i + 1, 1.0) for i in range(11)], "a", 5), bulk=True)
        before = _rows(store)
    monkeypatch.setattr(planning, "SCAN_MAX_NODES", 0)
    second = _file([(i, 2.0) for i in range(6, 20)], [(0, i, i + 2, 3.0) for i in range(14)], "b", 4)
    with open_store(path) as store:
        with pytest.raises(KeyboardInterrupt), store.bulk_load():
            for batch in second:
                store.write_batch(batch)
            assert store.state().looked_up == {"Event"} and store.state().deferred == {"SYNCHRONOUS"}
            raise KeyboardInterrupt
        assert _rows(store) == before
    with open_store(path) as store:
        assert _rows(store) == before


class _CountingConnection:
    """A real connection whose keyed edge queries per source are counted (query, source id)."""

    def __init__(self, conn, asked: list) -> None:
        self._conn, self._asked = conn, asked

    def execute(self, query, *args, **kwargs):
        if "{id: $id}" in query and "]->(" in query:
            params = args[0] if args else kwargs.get("parameters", {})
            self._asked.append((query.split("[e:")[1].split("]")[0], params["id"]))
        return self._conn.execute(query, *args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self._conn, attr)


def test_each_stored_candidate_edge_of_a_deferred_table_is_looked_up_once(tmp_path, monkeypatch):
    """Edges of the second file between two stored nodes are asked of the engine per source once:
    the rows found are what the upsert compares and updates (it asked again before)."""
    from eventkg.graphstore.ladybug.bulk import planning
    from eventkg.graphstore.ladybug.database import Database

    path = str(tmp_path / "s.lbug")
    with open_store(path) as store:
        # edges i -> i + 1 and i -> i + 2: enough of them that three rows are asked per source, not by a scan
        chain = [(0, i, i + 1, 1.0) for i in range(29)] + [(0, i, i + 2, 1.0) for i in range(28)]
        _write(store, _file([(i, None) for i in range(30)], chain, "a", 100), bulk=True)
    monkeypatch.setattr(planning, "SCAN_MAX_NODES", 0)
    asked: list[tuple[str, str]] = []
    opened = Database.open

    def open_counting(self) -> None:
        opened(self)
        self.conn = _CountingConnection(self.conn, asked)

    monkeypatch.setattr(Database, "open", open_counting)
    second = Batch()
    for i in range(30, 34):
        second.add_node("Event", _node(i, None, "b"))
    second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 3, 4, 5.0, "b"))  # stored, changed
    second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 5, 6, 1.0, "b"))  # stored, its sources change
    second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 7, 2, 1.0, "b"))  # not stored, two stored ends
    second.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 30, 31, 1.0, "b"))  # new ends: not asked
    with open_store(path) as store:
        with store.bulk_load():
            store.write_batch(second)
            assert store.state().deferred == {"SYNCHRONOUS"}
        assert sorted(asked) == sorted(("SYNCHRONOUS", event_id(f"e{i}")) for i in (3, 5, 7))
        assert store.late_result.created["SYNCHRONOUS"] == 2 and store.late_result.updated["SYNCHRONOUS"] == 2
        edges = {(r["src"], r["dst"]): r for r in store.iter_edges("SYNCHRONOUS")}
    assert edges[(event_id("e3"), event_id("e4"))]["count"] == 5.0
    assert sorted(edges[(event_id("e5"), event_id("e6"))]["sources"]) == ["a", "b"]
    assert len(edges) == 57 + 2


def _event_writes(asked: list) -> list[str]:
    """The statements among ``asked`` (query texts) that rewrite stored events."""
    return [q for q in asked if "SET" in q and ("(n:Event" in q or "eventkg_update_rows" in q)]


class _Queries(_CountingConnection):
    """A real connection that keeps the text of every statement."""

    def execute(self, query, *args, **kwargs):
        self._asked.append(query)
        return self._conn.execute(query, *args, **kwargs)


@pytest.mark.parametrize("flush_between", [False, True], ids=["one flush", "read between the repeats"])
@pytest.mark.parametrize("also_new", [True, False], ids=["with new events", "only the repeats after it"])
def test_a_key_the_second_file_adds_and_repeats_changed_is_merged_before_its_copy(
        tmp_path, monkeypatch, flush_between, also_new):
    """The second file adds e40 and e41, then repeats them in later batches with other values
    (e40's frequency set, e41's changed, e42 unchanged): the stored rows and the counts are
    those of writing batch by batch, and no stored event is rewritten after the COPY (the repeats
    were merged into the held rows). A read between the batches writes what is held; the
    repeats of keys written so are upserted as stored keys."""
    from eventkg.graphstore.ladybug.bulk import planning
    from eventkg.graphstore.ladybug.database import Database

    first = _file([(i, None) for i in range(30)], [(0, i, i + 1, 1.0) for i in range(29)], "a", 100)
    b1, b2, b3 = Batch(), Batch(), Batch()
    for i, freq in ((40, None), (41, 1.0), (42, 3.0), (5, None)):
        b1.add_node("Event", _node(i, freq, "b"))
    for i, freq in ((40, 2.0), (41, 2.0), (42, 3.0), (6, 4.0)):  # 6: a stored event, changed
        b2.add_node("Event", _node(i, freq, "b"))
    if also_new:
        b2.add_node("Event", _node(43, None, "b"))
    b3.add_edge("SYNCHRONOUS", _edge("SYNCHRONOUS", 40, 41, 1.0, "b"))
    second = [b1, b2, b3]
    with open_store(str(tmp_path / "ref.lbug")) as ref:
        _write(ref, first, bulk=False)
        before = _rows(ref)
        _write(ref, second, bulk=False)
        want = _rows(ref)
    path = str(tmp_path / "s.lbug")
    with open_store(path) as store:
        _write(store, first, bulk=True)
    monkeypatch.setattr(planning, "SCAN_MAX_NODES", 0)
    asked: list[str] = []
    opened = Database.open

    def open_counting(self) -> None:
        opened(self)
        self.conn = _Queries(self.conn, asked)

    monkeypatch.setattr(Database, "open", open_counting)
    with open_store(path) as store:
        result = WriteResult()
        with store.bulk_load():
            result.add(store.write_batch(b1))
            if flush_between:
                store.counts()  # writes what is held: e40 and e41 are stored when b2 repeats them
            result.add(store.write_batch(b2))
            result.add(store.write_batch(b3))
            assert store.state().looked_up == {"Event"}
        result.add(store.late_result)
        got = _rows(store)
    monkeypatch.undo()
    assert got == want
    created, _ = _changes(before, want)
    assert {k: v for k, v in result.created.items() if v} == created
    # e40's and e41's frequency changed by the repeats, the stored e5 (sources) and e6: as batch by batch
    assert result.updated.get("Event") == 4
    events = _event_writes(asked)  # one statement per row (fewer than upsert.LOAD_UPDATE_ROWS)
    assert len(events) == (4 if flush_between else 2), events  # e5, e6 (and e40, e41 when written before b2)
