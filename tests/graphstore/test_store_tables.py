"""The bulk-table write path (``Batch.node_tables`` / ``edge_tables``): the same contract as rows,
on every backend: idempotent, sources unioned, duplicates merged, atomic, validated."""

from __future__ import annotations

import pyarrow as pa
import pytest

from eventkg.graphstore import Batch, MissingEndpointError, StoreError, open_store
from eventkg.graphstore.model import event_id


def events(texts, sources=("t",), **cols) -> pa.Table:
    n = len(texts)
    data = {"id": [event_id(t) for t in texts], "sources": [list(sources)] * n, "text": list(texts),
            "level": ["schema"] * n}
    data.update(cols)
    return pa.table(data)


def edges(pairs, source="t", **cols) -> pa.Table:
    data = {"src": [event_id(a) for a, _ in pairs], "dst": [event_id(b) for _, b in pairs],
            "sources": [source] * len(pairs)}  # a plain string column: one source name per row
    data.update(cols)
    return pa.table(data)


def write(store, nodes=None, rels=None, **kw):
    b = Batch(**kw)
    for label, t in (nodes or {}).items():
        b.add_node_table(label, t)
    for rtype, t in (rels or {}).items():
        b.add_edge_table(rtype, t)
    return store.write_batch(b)


TEXTS = [f"event {i}" for i in range(3000)]
PAIRS = [(TEXTS[i], TEXTS[(i * 7 + k) % 3000]) for i in range(3000) for k in (1, 2, 3)]


def test_tables_write_nodes_and_edges(store):
    res = write(store, {"Event": events(TEXTS, frequency=[1.0] * 3000)},
                {"PRECEDENCE": edges(PAIRS, count=[2.0] * len(PAIRS))})
    assert res.created == {"Event": 3000, "PRECEDENCE": 9000}
    assert store.counts()["nodes"]["Event"] == 3000
    assert store.counts()["edges"]["PRECEDENCE"] == 9000
    node = store.get_nodes("Event", [event_id("event 5")])[event_id("event 5")]
    assert (node["text"], node["frequency"], node["sources"]) == ("event 5", 1.0, ["t"])
    e = next(e for e in store.iter_edges("PRECEDENCE") if e["src"] == event_id("event 0"))
    assert e["count"] == 2.0 and e["sources"] == ["t"]


def test_same_tables_twice_change_nothing(store):
    write(store, {"Event": events(TEXTS)}, {"PRECEDENCE": edges(PAIRS, count=[1.0] * len(PAIRS))})
    again = write(store, {"Event": events(TEXTS)}, {"PRECEDENCE": edges(PAIRS, count=[1.0] * len(PAIRS))})
    assert sum(again.created.values()) == 0 and sum(again.updated.values()) == 0
    assert store.counts()["edges"]["PRECEDENCE"] == 9000 and store.counts()["nodes"]["Event"] == 3000


def test_tables_union_sources_and_merge_properties(store):
    write(store, {"Event": events(["a", "b"], frequency=[1.0, 2.0])}, {"CAUSES": edges([("a", "b")], weight=[3.0])})
    res = write(store, {"Event": events(["a"], sources=("s2", "t"), frequency=[None], pattern=["s-v"])},
                {"CAUSES": edges([("a", "b")], source="s2")})
    assert res.updated == {"Event": 1, "CAUSES": 1} and sum(res.created.values()) == 0
    a = store.get_nodes("Event", [event_id("a")])[event_id("a")]
    assert a["sources"] == ["s2", "t"] and a["frequency"] == 1.0 and a["pattern"] == "s-v"
    (e,) = store.iter_edges("CAUSES")
    assert e["sources"] == ["s2", "t"] and e["weight"] == 3.0


def test_rows_and_tables_of_one_batch_are_one_write(store):
    b = Batch()
    b.add_node("Event", {"id": event_id("a"), "text": "a", "sources": ["rows"], "frequency": 1.0})
    b.add_node_table("Event", events(["a", "b"], sources=("table",)))
    b.add_edge("CAUSES", {"src": event_id("a"), "dst": event_id("b"), "sources": ["rows"]})
    b.add_edge_table("CAUSES", edges([("a", "b")], source="table", weight=[0.5]))
    res = store.write_batch(b)
    assert res.created == {"Event": 2, "CAUSES": 1}
    a = store.get_nodes("Event", [event_id("a")])[event_id("a")]
    assert a["sources"] == ["rows", "table"] and a["frequency"] == 1.0
    (e,) = store.iter_edges("CAUSES")
    assert e["sources"] == ["rows", "table"] and e["weight"] == 0.5


def test_repeated_keys_in_a_table_collapse(store):
    t = events(["a", "b", "a"], frequency=[1.0, 1.0, 4.0])
    t = t.set_column(1, "sources", pa.array([["x"], ["x"], ["y", "x"]]))
    write(store, {"Event": t}, {"CAUSES": edges([("a", "b"), ("a", "b")], weight=[1.0, None])})
    assert store.counts()["nodes"]["Event"] == 2 and store.counts()["edges"]["CAUSES"] == 1
    a = store.get_nodes("Event", [event_id("a")])[event_id("a")]
    assert a["sources"] == ["x", "y"] and a["frequency"] == 4.0
    (e,) = store.iter_edges("CAUSES")
    assert e["weight"] == 1.0  # a later null does not erase an earlier value


def test_missing_endpoint_in_a_table_writes_nothing(store):
    write(store, {"Event": events(["a", "b"])})
    before = store.counts()
    bad = pa.table({"src": [event_id("a")], "dst": ["no-such-node"], "sources": ["t"]})
    with pytest.raises(MissingEndpointError, match="no-such-node"):
        write(store, {"Event": events(["c"])}, {"CAUSES": bad})
    assert store.counts() == before
    write(store, {"Event": events(["c"])}, {"CAUSES": edges([("a", "c")])})  # the store still works
    assert store.counts()["edges"]["CAUSES"] == 1


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (pa.table({"id": ["x"], "colour": ["red"]}), "undeclared properties"),
        (pa.table({"text": ["x"]}), "without id"),
        (pa.table({"id": pa.array([None, "y"], pa.string())}), "empty id"),
        (pa.table({"id": ["", "y"]}), "empty id"),
        (pa.table({"id": ["x"], "frequency": ["often"]}), "frequency"),
    ],
)
def test_bad_tables_are_refused(store, table, message):
    with pytest.raises(StoreError, match=message):
        write(store, {"Event": table})
    assert sum(store.counts()["nodes"].values()) == 0


def test_unknown_table_name_is_refused(store):
    with pytest.raises(StoreError, match="unknown relationship type"):
        write(store, rels={"LIKES": pa.table({"src": ["a"], "dst": ["b"]})})


def test_reopened_store_finds_what_an_earlier_process_wrote(tmp_path):
    """The embedded store remembers stored keys per object; a new object must rebuild that."""
    path = str(tmp_path / "kg.lbug")
    with open_store(path) as s:
        write(s, {"Event": events(TEXTS)}, {"PRECEDENCE": edges(PAIRS[:5000])})
    with open_store(path) as s:
        res = write(s, {"Event": events(TEXTS)}, {"PRECEDENCE": edges(PAIRS)})
        assert res.created == {"Event": 0, "PRECEDENCE": 4000}
        s.query("MATCH (n:Event {id: $id}) DETACH DELETE n", {"id": event_id("event 1")}, write=True)
        res = write(s, {"Event": events(["event 1"])}, {"PRECEDENCE": edges(PAIRS[3:6])})  # event 1 -> ...
        assert res.created == {"Event": 1, "PRECEDENCE": 3}
        touching = sum("event 1" in pair for pair in PAIRS)
        assert s.counts()["edges"]["PRECEDENCE"] == 9000 - touching + 3
