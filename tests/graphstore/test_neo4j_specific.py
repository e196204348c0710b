"""What only the Neo4j backend has: schema on open, credentials, connection errors,
server-enforced read-only Cypher, and chunked batches that still land all-or-nothing.

Runs against the real server of tests/support/neo4j_fixture.py (skips outside CI without Java/Maven).
"""

from __future__ import annotations

import json
import time

import pytest

from eventkg.graphstore import Batch, MissingEndpointError, StoreError, WriteRefused, open_store
from eventkg.graphstore.model import NODE_TYPES
from eventkg.graphstore.neo4j.connect import connect, parse_url
from eventkg.graphstore.neo4j.schema import INDEXED, schema_statements
from eventkg.graphstore.neo4j.store import Neo4jStore
from eventkg.graphstore.neo4j.upsert import empty_kinds

pytestmark = pytest.mark.neo4j


def _events(*names: str) -> Batch:
    b = Batch()
    for n in names:
        b.add_node("Event", {"id": n, "text": n, "level": "schema", "sources": ["t"]})
    return b


def test_parse_url_keeps_password_out_of_shown_url(monkeypatch):
    monkeypatch.delenv("NEO4J_USER", raising=False)
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    driver_url, auth, db, shown = parse_url("neo4j://alice:s%40cret@db.example:7688/events")
    assert (driver_url, auth, db) == ("neo4j://db.example:7688", ("alice", "s@cret"), "events")
    assert "cret" not in shown and shown == "neo4j://alice@db.example:7688/events"
    assert parse_url("bolt://localhost")[1:3] == (None, None)
    monkeypatch.setenv("NEO4J_USER", "bob")
    monkeypatch.setenv("NEO4J_PASSWORD", "pw-from-env")
    assert parse_url("bolt://localhost")[1] == ("bob", "pw-from-env")
    assert parse_url("bolt://carol:x@localhost")[1] == ("carol", "x")  # the URL wins


def test_constraints_and_indexes_exist_after_open(n4):
    constraints = n4.query("SHOW CONSTRAINTS YIELD type, labelsOrTypes, properties")
    unique = {(c["labelsOrTypes"][0], tuple(c["properties"])) for c in constraints if c["type"] == "UNIQUENESS"}
    assert {(label, ("id",)) for label in NODE_TYPES} <= unique
    indexes = n4.query("SHOW INDEXES YIELD labelsOrTypes, properties, state")
    have = {(i["labelsOrTypes"][0], i["properties"][0]) for i in indexes if i["labelsOrTypes"]}
    for label, props in INDEXED.items():
        for prop in props:
            assert (label, prop) in have
    assert all(i["state"] == "ONLINE" for i in indexes)


def test_stores_opened_at_once_on_a_fresh_database_all_get_the_schema(n4, neo4j_server):
    """Two terminals opening a fresh database together (an ingest, a reader) both create the schema:
    neither may fail with a lock deadlock or an 'already exists' from the other's DDL."""
    from concurrent.futures import ThreadPoolExecutor

    names = [name for name, _ in schema_statements()]
    for _ in range(3):
        for name in names:  # the constraints own their indexes: drop them first
            n4.query(f"DROP CONSTRAINT {name} IF EXISTS", write=True)
            n4.query(f"DROP INDEX {name} IF EXISTS", write=True)

        def open_and_count(_: int) -> int:
            with open_store(neo4j_server.url) as s:
                return s.counts()["nodes"]["Event"]

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(open_and_count, range(4))) == [0, 0, 0, 0]
        have = {r["name"] for r in n4.query("SHOW CONSTRAINTS YIELD name")}
        have |= {r["name"] for r in n4.query("SHOW INDEXES YIELD name")}
        assert set(names) <= have


def test_unreachable_server_is_one_line_store_error_naming_url():
    start = time.monotonic()
    with pytest.raises(StoreError) as err:
        Neo4jStore("neo4j://someone:topsecret@127.0.0.1:1")
    msg = str(err.value)
    assert time.monotonic() - start < 10
    assert msg.startswith("cannot reach Neo4j at neo4j://someone@127.0.0.1:1: ")
    assert "refused" in msg.lower()
    assert "topsecret" not in msg and "\n" not in msg


def test_credentials_from_url_then_env(neo4j_server, monkeypatch):
    if neo4j_server.user is None:
        pytest.skip("the test server runs without authentication (EVENTKG_NEO4J_AUTH=0)")
    monkeypatch.delenv("NEO4J_USER", raising=False)
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    bare = neo4j_server.bare_url
    with pytest.raises(StoreError, match="needs credentials.*NEO4J_PASSWORD"):
        Neo4jStore(bare)
    wrong = bare.replace("neo4j://", "neo4j://neo4j:not-the-password@")
    with pytest.raises(StoreError) as err:
        Neo4jStore(wrong)
    msg = str(err.value)
    assert "refused user 'neo4j'" in msg and "not-the-password" not in msg and "\n" not in msg
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    with Neo4jStore(bare) as s:  # credentials from the environment
        assert s.query("RETURN 1 AS one") == [{"one": 1}]
    monkeypatch.setenv("NEO4J_PASSWORD", "wrong-env-password")
    with Neo4jStore(neo4j_server.url) as s:  # the URL's credentials win over the environment
        assert s.url == bare.replace("neo4j://", "neo4j://neo4j@")


def test_read_only_query_is_refused_by_the_server_and_changes_nothing(n4):
    n4.write_batch(_events("a"))
    before = n4.counts()
    with pytest.raises(WriteRefused, match="pass --write"):
        n4.query("CREATE (n:Event {id: 'intruder'})")
    with pytest.raises(WriteRefused):
        n4.query("MATCH (n:Event) SET n.text = 'changed'")
    assert n4.counts() == before
    assert n4.get_nodes("Event", ["a"])["a"]["text"] == "a"
    n4.query("CREATE (n:Event {id: 'allowed', sources: []})", write=True)
    assert n4.counts()["nodes"]["Event"] == before["nodes"]["Event"] + 1


def test_cypher_errors_are_one_line_store_errors(n4):
    with pytest.raises(StoreError, match="^Cypher error: ") as err:
        n4.query("MATCH (n RETURN n")
    assert "\n" not in str(err.value)


def test_query_values_are_plain_json(n4):
    b = _events("a", "b")
    b.add_edge("CAUSES", {"src": "a", "dst": "b", "sources": ["t"], "weight": 0.5})
    n4.write_batch(b)
    rows = n4.query("MATCH p = (a:Event {id: 'a'})-[e]->(b) RETURN a, e, p, b.id AS bid")
    json.dumps(rows)
    (row,) = rows
    assert row["a"]["_label"] == "Event" and row["a"]["text"] == "a"
    assert row["e"]["_type"] == "CAUSES" and (row["e"]["_src"], row["e"]["_dst"]) == ("a", "b")
    assert [n["id"] for n in row["p"]["_nodes"]] == ["a", "b"] and row["bid"] == "b"


def test_missing_endpoint_in_a_later_chunk_rolls_back_the_whole_batch(neo4j_server):
    with Neo4jStore(neo4j_server.url, chunk_size=2) as s:
        s.clear()
        b = _events("a", "b", "c")
        for dst in ("b", "c", "a"):
            b.add_edge("BEFORE", {"src": "a" if dst != "a" else "b", "dst": dst, "sources": ["t"]})
        b.add_edge("BEFORE", {"src": "c", "dst": "ghost", "sources": ["t"]})
        with pytest.raises(MissingEndpointError, match="Event 'ghost'"):
            s.write_batch(b)
        counts = s.counts()
        assert counts["nodes"]["Event"] == 0 and counts["edges"]["BEFORE"] == 0
        # the same batch without the bad row lands, and landing it again counts nothing
        b.edges["BEFORE"].pop()
        first = s.write_batch(b)
        assert first.created == {"Event": 3, "BEFORE": 3}
        again = s.write_batch(b)
        assert again.created == {"Event": 0, "BEFORE": 0} and again.updated == {"Event": 0, "BEFORE": 0}
        # a missing endpoint found by the existence lookup (the type is no longer empty)
        with pytest.raises(MissingEndpointError, match="Event 'nobody'"):
            s.upsert_edges("BEFORE", [{"src": "nobody", "dst": "a", "sources": ["t"]}])


def test_updates_across_chunks_count_only_real_changes(neo4j_server):
    with Neo4jStore(neo4j_server.url, chunk_size=2) as s:
        s.clear()
        s.write_batch(_events("a", "b", "c", "d", "e"))
        rows = [
            {"id": "a", "sources": ["t"]},  # nothing new
            {"id": "b", "sources": ["u"]},  # new source
            {"id": "c", "frequency": 3.0, "sources": ["t"]},  # new property
            {"id": "d", "text": None, "sources": []},  # null never overwrites
            {"id": "e", "text": "e", "sources": ["t"]},  # same value
        ]
        res = s.upsert_nodes("Event", rows)
        assert res.created == {"Event": 0} and res.updated == {"Event": 2}
        got = s.get_nodes("Event", ["b", "c", "d"])
        assert got["b"]["sources"] == ["t", "u"]
        assert got["c"]["frequency"] == 3.0 and got["d"]["text"] == "d"


def test_clear_removes_everything_but_keeps_the_schema(n4):
    n4.write_batch(_events(*[f"e{i}" for i in range(50)]))
    n4.clear()
    assert n4.query("MATCH (n) RETURN count(n) AS c") == [{"c": 0}]
    names = {c["name"] for c in n4.query("SHOW CONSTRAINTS YIELD name")}
    assert "event_id" in names


def _chain(n: int, prefix: str = "c", source: str = "t") -> Batch:
    b = Batch()
    for i in range(n):
        b.add_node("Event", {"id": f"{prefix}{i}", "text": f"{prefix} {i}", "sources": [source]})
    for i in range(n - 1):
        b.add_edge("BEFORE", {"src": f"{prefix}{i}", "dst": f"{prefix}{i + 1}", "sources": [source], "weight": 1.0})
    return b


def test_a_big_batch_goes_in_bounded_transactions_and_lands_whole(neo4j_server):
    with Neo4jStore(neo4j_server.url, tx_rows=7, chunk_size=3) as s:
        s.clear()
        first = s.write_batch(_chain(30))  # 59 rows: 9 transactions of at most 7 rows
        assert first.created == {"Event": 30, "BEFORE": 29}
        again = s.write_batch(_chain(30))
        assert again.created == {"Event": 0, "BEFORE": 0} and again.updated == {"Event": 0, "BEFORE": 0}
        other = s.write_batch(_chain(30, source="u"))  # every row changes: merged, not duplicated
        assert other.updated == {"Event": 30, "BEFORE": 29}
        counts = s.counts()
        assert counts["nodes"]["Event"] == 30 and counts["edges"]["BEFORE"] == 29
        assert s.get_nodes("Event", ["c29"])["c29"]["sources"] == ["t", "u"]


def test_a_byte_bound_splits_batches_too(neo4j_server):
    with Neo4jStore(neo4j_server.url, tx_bytes=4_000) as s:  # ~20 rows of ~200 bytes per transaction
        s.clear()
        b = _chain(200)
        assert s.write_batch(b).created == {"Event": 200, "BEFORE": 199}
        assert s.counts()["edges"]["BEFORE"] == 199


def test_a_failing_later_transaction_keeps_the_earlier_ones_and_says_so(neo4j_server):
    with Neo4jStore(neo4j_server.url, tx_rows=5) as s:
        s.clear()
        b = _chain(10)
        b.add_edge("BEFORE", {"src": "c9", "dst": "ghost", "sources": ["t"]})
        with pytest.raises(MissingEndpointError, match="Event 'ghost'") as err:
            s.write_batch(b)
        msg = str(err.value)
        assert "rows were written in earlier transactions; writing the batch again completes it" in msg
        assert "\n" not in msg
        assert s.counts()["nodes"]["Event"] == 10  # nodes go first, in their own transactions
        b.edges["BEFORE"].pop()
        s.write_batch(b)  # the re-run completes the batch, nothing twice
        counts = s.counts()
        assert counts["nodes"]["Event"] == 10 and counts["edges"]["BEFORE"] == 9


def test_small_batches_stay_one_transaction(neo4j_server):
    with Neo4jStore(neo4j_server.url) as s:  # default bounds: 20,000 rows
        s.clear()
        b = _chain(500)
        b.add_edge("BEFORE", {"src": "c0", "dst": "ghost", "sources": ["t"]})
        with pytest.raises(MissingEndpointError) as err:
            s.write_batch(b)
        assert "earlier transactions" not in str(err.value)
        assert s.counts()["nodes"]["Event"] == 0


def test_server_transaction_memory_limit_halves_then_names_a_single_row():
    from eventkg.graphstore.neo4j.server import launch as server_mod
    from eventkg.graphstore.neo4j.server.jars import missing_tools

    if missing_tools():
        pytest.skip("needs java and mvn")
    server = server_mod.start(heap="512m", pagecache="64m", jvm_flags=["-XX:TieredStopAtLevel=1"],
                              settings={"db.memory.transaction.max": "4m"})
    try:
        with Neo4jStore(server.url, tx_bytes=1 << 40) as s:  # the store's own bound off: the server's decides
            b = Batch()
            for i in range(40):  # ~12 MB in one transaction, 300 KB a row
                b.add_node("Event", {"id": f"big{i}", "pattern": f"{i}" + "x" * 300_000, "sources": ["t"]})  # not indexed
            assert s.write_batch(b).created == {"Event": 40}
            assert s.counts()["nodes"]["Event"] == 40
            giant = {"id": "giant", "pattern": "y" * 8_000_000, "sources": ["t"]}
            with pytest.raises(StoreError, match="Event 'giant' alone exceeds the server's transaction memory") as err:
                s.upsert_nodes("Event", [giant])
            assert "\n" not in str(err.value)
            assert s.counts()["nodes"]["Event"] == 40
            s.write_batch(b)  # the re-run changes nothing
            assert s.counts()["nodes"]["Event"] == 40
    finally:
        server.stop()


def test_bulk_session_key_sets_skip_lookups_but_never_duplicate(neo4j_server):
    with Neo4jStore(neo4j_server.url) as s:
        s.clear()
        with s.bulk_load():
            assert s.write_batch(_chain(20)).created == {"Event": 20, "BEFORE": 19}
            assert s.write_batch(_chain(25)).created == {"Event": 5, "BEFORE": 5}  # 20/19 known: looked up
            s.query("MATCH (a:Event {id: 'c0'}), (b:Event {id: 'c24'}) CREATE (a)-[:BEFORE {sources: ['raw']}]->(b)",
                    write=True)  # a raw write: the session forgets its key sets
            b = Batch()
            b.add_edge("BEFORE", {"src": "c0", "dst": "c24", "sources": ["t"]})
            assert s.write_batch(b).updated == {"BEFORE": 1}
        with s.bulk_load():  # a new session on a non-empty store looks rows up
            assert s.write_batch(_chain(25)).created == {"Event": 0, "BEFORE": 0}
        counts = s.counts()
        assert counts["nodes"]["Event"] == 25 and counts["edges"]["BEFORE"] == 25


def test_a_stopped_server_is_one_line_and_a_rerun_completes(tmp_path):
    from eventkg.graphstore.neo4j.server import launch as server_mod
    from eventkg.graphstore.neo4j.server.jars import missing_tools

    if missing_tools():
        pytest.skip("needs java and mvn")
    home = tmp_path / "home"
    server = server_mod.start(home=home, heap="512m", pagecache="64m", jvm_flags=["-XX:TieredStopAtLevel=1"])
    try:
        store = Neo4jStore(server.url)
        store.write_batch(_chain(10, "s"))
        server.stop()  # a clean shutdown: the first batch is on disk
        with pytest.raises(StoreError, match="^cannot reach Neo4j at ") as err:
            store.write_batch(_chain(20, "s"))
        assert "\n" not in str(err.value)
        store.close()
        server = server_mod.start(home=home, password=server.password, port=server.bolt_port, heap="512m",
                                  pagecache="64m", jvm_flags=["-XX:TieredStopAtLevel=1"])
        with Neo4jStore(server.url) as again:
            assert again.counts()["nodes"]["Event"] == 10  # nothing of the first batch lost
            again.write_batch(_chain(20, "s"))  # the re-run completes
            counts = again.counts()
            assert counts["nodes"]["Event"] == 20 and counts["edges"]["BEFORE"] == 19
    finally:
        server.stop()


def test_empty_labels_and_types_are_known_empty(n4, neo4j_server):
    # rows of an empty label/type are CREATEd without a lookup; this check decides it
    conn = connect(neo4j_server.url)
    try:
        with conn.session() as s:
            assert s.execute_read(empty_kinds, ["Event"], ["CAUSES"]) == {"Event", "CAUSES"}
        n4.write_batch(_events("a"))
        with conn.session() as s:
            assert s.execute_read(empty_kinds, ["Event"], ["CAUSES"]) == {"CAUSES"}
    finally:
        conn.close()
