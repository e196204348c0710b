"""The storage contract: every backend must pass every test here (see conftest ``store``)."""

from __future__ import annotations

import base64
import hashlib
import types
import typing

import pytest

from eventkg import ingest_source
from eventkg.graphstore import Batch, MissingEndpointError, StoreError, WriteRefused
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES, event_id
from eventkg.graphstore.rows import EdgeRow, NodeRow


def ev(text: str, source: str = "test", **props) -> dict:
    return {"id": event_id(text), "text": text, "level": "schema", "sources": [source], **props}


def small_world(store) -> dict[str, str]:
    texts = ["study", "learn", "pass exam", "celebrate", "fail exam", "cook dinner"]
    b = Batch()
    for t in texts:
        b.add_node("Event", ev(t))
    ids = {t: event_id(t) for t in texts}
    b.add_edge("BEFORE", {"src": ids["study"], "dst": ids["learn"], "sources": ["test"]})
    b.add_edge("CAUSES", {"src": ids["learn"], "dst": ids["pass exam"], "sources": ["test"], "weight": 2.0})
    b.add_edge("CAUSES", {"src": ids["pass exam"], "dst": ids["celebrate"], "sources": ["test"]})
    b.add_edge("HAS_SUBEVENT", {"src": ids["study"], "dst": ids["learn"], "sources": ["test"]})
    b.add_edge("PRECEDENCE", {"src": ids["cook dinner"], "dst": ids["study"], "sources": ["aser"], "count": 3.0})
    store.write_batch(b)
    return ids


def test_an_ingest_refuses_a_store_with_ids_of_the_first_scheme_and_leaves_it_as_it_was(store):
    from tests.support.paths import SAMPLES

    old = hashlib.blake2b(b"Event\x1fschema\x1fstudy", digest_size=10).hexdigest()  # 20 hex digits
    store.upsert_nodes("Event", [{"id": old, "text": "study", "level": "schema", "sources": ["old"]}])
    before = store.counts()
    with pytest.raises(StoreError, match="older eventkg .*20 hex digits"):
        ingest_source(store, "ev2", SAMPLES / "ev2")
    assert store.counts() == before and store.unfinished_ingests() == []
    assert store.ingest_origins() == {}  # a refused ingest records no folder


def test_ingest_origin_survives_reopening_and_is_not_counted(store, backend, request, samples_dir):
    """Where each source was last ingested from is kept outside the data model: closing and
    opening the store keeps it, counts and stats never see it, ``clear`` forgets it."""
    from eventkg.graphstore import open_store
    from eventkg.queries.stats import store_stats

    assert store.ingest_origin("ev2") is None and store.ingest_origins() == {}
    ingest_source(store, "ev2", samples_dir / "ev2")
    assert store.ingest_origin("ev2") == str(samples_dir / "ev2")
    counts, stats = store.counts(), store_stats(store)
    store.record_ingest_origin("clomo", "/somewhere/clomo")
    store.record_ingest_origin("ev2", "/elsewhere/data")  # the last folder replaces the one before
    assert store.counts() == counts and store_stats(store) == stats
    url = store.url if backend == "ladybug" else request.getfixturevalue("neo4j_server").url
    store.close()
    with open_store(url) as again:
        assert again.ingest_origins() == {"ev2": "/elsewhere/data", "clomo": "/somewhere/clomo"}
        assert again.ingest_origin("abspyramid") is None
        assert again.counts() == counts and store_stats(again) == stats
        again.clear()
        assert again.ingest_origins() == {}  # an emptied store was ingested from nowhere


def test_stable_ids_are_12_url_safe_characters_of_a_9_byte_blake2b_digest():
    digest = hashlib.blake2b(b"Event\x1fschema\x1fstudy", digest_size=9).digest()
    assert event_id("study") == base64.urlsafe_b64encode(digest).decode() and len(event_id("study")) == 12


def test_empty_store_counts_every_label_and_type(store):
    counts = store.counts()
    assert counts["nodes"] == {label: 0 for label in NODE_TYPES}
    assert counts["edges"] == {t: 0 for t in REL_TYPES}


def test_upsert_and_count(store):
    small_world(store)
    counts = store.counts()
    assert counts["nodes"]["Event"] == 6
    assert counts["edges"]["CAUSES"] == 2
    assert counts["edges"]["BEFORE"] == 1
    assert counts["edges"]["PRECEDENCE"] == 1
    assert sum(counts["edges"].values()) == 5


def test_same_10000_edges_twice_leaves_10000(store):
    n_nodes, n_edges = 2_000, 10_000
    nodes = [ev(f"event {i}") for i in range(n_nodes)]
    # distinct (src, dst) pairs: each node points to its next 1..5 neighbours
    pairs = [(i % n_nodes, (i % n_nodes + 1 + i // n_nodes) % n_nodes) for i in range(n_edges)]
    assert len(set(pairs)) == n_edges
    edges = [{"src": nodes[s]["id"], "dst": nodes[d]["id"], "sources": ["bench"], "weight": 1.0} for s, d in pairs]
    store.upsert_nodes("Event", nodes)
    first = store.upsert_edges("CAUSES", edges)
    second = store.upsert_edges("CAUSES", edges)
    assert first.created["CAUSES"] == n_edges
    assert second.created.get("CAUSES", 0) == 0
    assert second.updated.get("CAUSES", 0) == 0
    assert store.counts()["edges"]["CAUSES"] == n_edges
    assert store.counts()["nodes"]["Event"] == n_nodes


def test_merge_properties_and_union_sources(store):
    ids = small_world(store)
    store.upsert_nodes("Event", [{"id": ids["learn"], "sources": ["eeckg"], "frequency": 5.0}])
    node = store.get_nodes("Event", [ids["learn"]])[ids["learn"]]
    assert node["sources"] == ["eeckg", "test"]
    assert node["text"] == "learn"  # not overwritten by a row without text
    assert node["frequency"] == 5.0
    store.upsert_edges("CAUSES", [{"src": ids["learn"], "dst": ids["pass exam"], "sources": ["eeckg"]}])
    edges = {(e["src"], e["dst"]): e for e in store.iter_edges("CAUSES")}
    e = edges[(ids["learn"], ids["pass exam"])]
    assert e["sources"] == ["eeckg", "test"]
    assert e["weight"] == 2.0
    assert store.counts()["edges"]["CAUSES"] == 2


def test_duplicate_rows_in_one_batch_collapse(store):
    store.upsert_nodes("Event", [ev("a", "s1"), ev("a", "s2"), ev("b")])
    assert store.counts()["nodes"]["Event"] == 2
    assert store.get_nodes("Event", [event_id("a")])[event_id("a")]["sources"] == ["s1", "s2"]


def test_failed_batch_writes_nothing(store):
    small_world(store)
    before = store.counts()
    b = Batch()
    b.add_node("Event", ev("a brand new event"))
    b.add_edge("CAUSES", {"src": event_id("learn"), "dst": "no-such-node", "sources": ["x"]})
    with pytest.raises(MissingEndpointError, match="no-such-node"):
        store.write_batch(b)
    assert store.counts() == before


def test_unknown_label_or_property_is_refused(store):
    with pytest.raises(StoreError, match="unknown node label"):
        store.upsert_nodes("Widget", [{"id": "x", "sources": []}])
    with pytest.raises(StoreError, match="undeclared properties"):
        store.upsert_nodes("Event", [{"id": "x", "sources": [], "colour": "red"}])
    assert sum(store.counts()["nodes"].values()) == 0


def test_query_rows_keyed_by_return_names(store):
    small_world(store)
    rows = store.query(
        "MATCH (a:Event)-[:CAUSES]->(b:Event) RETURN a.text AS cause, b.text AS effect ORDER BY cause"
    )
    assert rows == [{"cause": "learn", "effect": "pass exam"}, {"cause": "pass exam", "effect": "celebrate"}]
    rows = store.query("MATCH (a:Event {id: $id}) RETURN a.text AS t", {"id": event_id("study")})
    assert rows == [{"t": "study"}]


def test_query_gives_aggregates_as_python_numbers(store):
    """``sum()`` of integers is an ``int`` on every backend (LadybugDB hands its INT128 over as a
    ``Decimal``, which JSON output printed as a string), ``sum()`` of floats a ``float``."""
    small_world(store)
    rows = store.query("MATCH ()-[r:CAUSES]->() RETURN sum(1) AS n, count(*) AS c, sum(r.weight) AS w")
    assert rows == [{"n": 2, "c": 2, "w": 2.0}]  # the second CAUSES edge has no weight
    assert [type(rows[0][k]) for k in ("n", "c", "w")] == [int, int, float]


def test_read_only_passthrough_refuses_writes(store):
    small_world(store)
    before = store.counts()
    with pytest.raises(WriteRefused, match="--write"):
        store.query("CREATE (n:Event {id: 'x', text: 'x'})")
    assert store.counts() == before
    store.query("CREATE (n:Event {id: 'x', text: 'x'})", write=True)
    assert store.counts()["nodes"]["Event"] == before["nodes"]["Event"] + 1


def test_a_read_only_phase_reads_what_was_written_and_the_store_writes_again_after_it(store):
    ids = small_world(store)
    before = store.counts()
    with store.read_only_phase() as same:
        assert same is store and store.counts() == before
        assert set(store.get_nodes("Event", [ids["study"]])) == {ids["study"]}
    store.upsert_nodes("Event", [ev("after the phase")])
    with pytest.raises(ZeroDivisionError), store.read_only_phase():
        1 / 0  # noqa: B018 - a block that raises
    store.upsert_nodes("Event", [ev("after a failed phase")])
    assert store.counts()["nodes"]["Event"] == before["nodes"]["Event"] + 2


def test_neighbourhood_hops_and_types(store):
    ids = small_world(store)
    g = store.neighbourhood([ids["learn"]], hops=1)
    assert set(g.nodes) == {ids["learn"], ids["study"], ids["pass exam"]}
    assert g.nodes[ids["learn"]]["text"] == "learn"
    assert g.nodes[ids["learn"]]["label"] == "Event"
    assert g.has_edge(ids["learn"], ids["pass exam"], key="CAUSES")
    assert g.has_edge(ids["study"], ids["learn"], key="BEFORE")
    assert g.has_edge(ids["study"], ids["learn"], key="HAS_SUBEVENT")
    assert g.edges[ids["learn"], ids["pass exam"], "CAUSES"]["weight"] == 2.0

    g2 = store.neighbourhood([ids["learn"]], hops=2)
    assert set(g2.nodes) == set(ids.values()) - {ids["fail exam"]}
    assert g2.has_edge(ids["cook dinner"], ids["study"], key="PRECEDENCE")

    causal = store.neighbourhood([ids["learn"]], hops=3, rel_types=["CAUSES"])
    assert set(causal.nodes) == {ids["learn"], ids["pass exam"], ids["celebrate"]}
    assert {k for _, _, k in causal.edges(keys=True)} == {"CAUSES"}

    out_only = store.neighbourhood([ids["learn"]], hops=2, direction="out")
    assert set(out_only.nodes) == {ids["learn"], ids["pass exam"], ids["celebrate"]}
    into = store.neighbourhood([ids["learn"]], hops=2, direction="in")
    assert set(into.nodes) == {ids["learn"], ids["study"], ids["cook dinner"]}


def test_neighbourhood_includes_edges_among_outer_nodes(store):
    ids = small_world(store)
    store.upsert_edges("BEFORE", [{"src": ids["pass exam"], "dst": ids["study"], "sources": ["t"]}])
    g = store.neighbourhood([ids["learn"]], hops=1)
    assert g.has_edge(ids["pass exam"], ids["study"], key="BEFORE")


def test_get_iter_and_fetch_graph(store):
    ids = small_world(store)
    got = store.get_nodes("Event", [ids["study"], "missing"])
    assert set(got) == {ids["study"]}
    assert {n["text"] for n in store.iter_nodes("Event", page_size=2)} == set(ids)
    assert len(list(store.iter_edges("CAUSES", page_size=1))) == 2
    g = store.fetch_graph(["CAUSES", "BEFORE"])
    assert g.number_of_edges() == 3
    assert g.nodes[ids["celebrate"]]["text"] == "celebrate"


def _fits(value, hint) -> bool:
    """Whether ``value`` is of the row type's annotation ``hint`` (``str | None``, ``list[str]``...)."""
    if isinstance(hint, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if typing.get_origin(hint) is list:
        return isinstance(value, list) and all(isinstance(v, typing.get_args(hint)[0]) for v in value)
    return isinstance(value, hint) and not (hint is int and isinstance(value, bool))


def test_rows_read_back_have_the_row_types_shape(store):
    """What ``get_nodes``, ``iter_nodes`` and ``iter_edges`` give back is a ``NodeRow`` / ``EdgeRow``:
    its required keys and ``sources``, no key the type lacks, each value of the key's type."""
    ids = small_world(store)
    q = {"id": "q1", "sources": ["t"], "qid": "1", "task": "CEC", "choices": ["a", "b"], "payload": "{}"}
    store.upsert_nodes("Question", [q])
    store.upsert_edges("HAS_CHOICE", [{"src": "q1", "dst": ids["study"], "sources": ["t"], "order": 0, "correct": 1}])
    node_hints, edge_hints = typing.get_type_hints(NodeRow), typing.get_type_hints(EdgeRow)
    nodes = [*store.get_nodes("Event", list(ids.values())).values(), *store.iter_nodes("Event"),
             *store.iter_nodes("Question")]
    edges = [e for t in ("CAUSES", "PRECEDENCE", "HAS_CHOICE") for e in store.iter_edges(t)]
    assert len(nodes) == 13 and len(edges) == 4
    for rows, hints, required in ((nodes, node_hints, NodeRow.__required_keys__ | {"sources"}),
                                  (edges, edge_hints, EdgeRow.__required_keys__ | {"sources"})):
        for row in rows:
            assert required <= set(row) <= set(hints), row
            assert all(_fits(v, hints[k]) for k, v in row.items()), row
    question = next(n for n in nodes if n["id"] == "q1")
    assert question["choices"] == ["a", "b"] and question["sources"] == ["t"]


def test_clear(store):
    small_world(store)
    store.clear()
    counts = store.counts()
    assert sum(counts["nodes"].values()) == 0 and sum(counts["edges"].values()) == 0


def test_neighbourhood_without_induced_edges_keeps_only_walkable_ones(store):
    ids = small_world(store)
    store.upsert_edges("BEFORE", [{"src": ids["pass exam"], "dst": ids["study"], "sources": ["t"]}])
    g = store.neighbourhood([ids["learn"]], hops=1, induced=False)
    # pass exam and study are both one hop out: the edge between them needs a second step
    assert set(g.nodes) == {ids["learn"], ids["study"], ids["pass exam"]}
    assert not g.has_edge(ids["pass exam"], ids["study"], key="BEFORE")
    assert g.has_edge(ids["learn"], ids["pass exam"], key="CAUSES")
    assert g.has_edge(ids["study"], ids["learn"], key="HAS_SUBEVENT")
    g2 = store.neighbourhood([ids["learn"]], hops=2, induced=False)
    assert g2.has_edge(ids["pass exam"], ids["study"], key="BEFORE")


def _chain_batch(start: int, n: int, source: str = "bulk") -> Batch:
    """Events start..start+n and CAUSES / PRECEDENCE edges along the chain."""
    b = Batch()
    for i in range(start, start + n):
        b.add_node("Event", ev(f"bulk event {i}", source))
    for i in range(start, start + n - 1):
        a, z = event_id(f"bulk event {i}"), event_id(f"bulk event {i + 1}")
        b.add_edge("CAUSES", {"src": a, "dst": z, "sources": [source], "weight": float(i)})
        b.add_edge("PRECEDENCE", {"src": a, "dst": z, "sources": [source], "count": 1.0})
    return b


def test_bulk_session_writes_everything_and_reads_see_it(store):
    ids = small_world(store)
    with store.bulk_load():
        store.write_batch(_chain_batch(0, 100))
        edges_only = Batch()
        edges_only.add_edge("BEFORE", {"src": ids["learn"], "dst": event_id("bulk event 5"), "sources": ["bulk"]})
        store.write_batch(edges_only)
        inside = store.counts()  # a read inside the session sees every batch handed over
    after = store.counts()
    assert inside == after
    assert after["nodes"]["Event"] == 6 + 100
    assert after["edges"]["CAUSES"] == 2 + 99 and after["edges"]["PRECEDENCE"] == 1 + 99
    assert after["edges"]["BEFORE"] == 2
    got = {(e["src"], e["dst"]): e["weight"] for e in store.iter_edges("CAUSES") if e["sources"] == ["bulk"]}
    assert got[(event_id("bulk event 3"), event_id("bulk event 4"))] == 3.0


def test_bulk_session_merges_rows_it_already_holds(store):
    with store.bulk_load():
        store.write_batch(_chain_batch(0, 50, source="first"))
        store.write_batch(_chain_batch(40, 20, source="second"))  # 10 events and 9 edges again
        store.write_batch(_chain_batch(0, 50, source="first"))  # all again: nothing changes
    counts = store.counts()
    assert counts["nodes"]["Event"] == 60 and counts["edges"]["CAUSES"] == 59
    both = store.get_nodes("Event", [event_id("bulk event 45")])[event_id("bulk event 45")]
    assert both["sources"] == ["first", "second"]


def test_a_failed_bulk_session_keeps_nothing_embedded_and_its_batches_on_neo4j(store, backend):
    """The embedded store's session is all or nothing; over Bolt, written batches stay (and the
    ingest that wrote them is recorded as unfinished, see test_store_all_or_nothing)."""
    with pytest.raises(RuntimeError, match="loader broke"), store.bulk_load():
        store.write_batch(_chain_batch(0, 30))
        raise RuntimeError("loader broke")
    kept = (30, 29) if backend == "neo4j" else (0, 0)
    assert (store.counts()["nodes"]["Event"], store.counts()["edges"]["CAUSES"]) == kept


def test_bulk_session_refuses_a_bad_batch_and_keeps_the_rest(store):
    with store.bulk_load():
        store.write_batch(_chain_batch(0, 10))
        bad = _chain_batch(100, 5)
        bad.add_edge("CAUSES", {"src": event_id("bulk event 100"), "dst": "no-such-node", "sources": ["x"]})
        with pytest.raises(MissingEndpointError, match="no-such-node"):
            store.write_batch(bad)
    counts = store.counts()
    assert counts["nodes"]["Event"] == 10 and counts["edges"]["CAUSES"] == 9
