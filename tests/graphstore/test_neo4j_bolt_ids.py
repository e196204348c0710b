"""The Bolt write path's fast lane: node ids learnt from CREATE, new edges written a node pair at a time.

Runs against the real server of tests/support/neo4j_fixture.py. Expected values are spelled out by
hand from the rows written, never read back from the code under test.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from eventkg.graphstore import Batch, MissingEndpointError, open_store
from eventkg.graphstore.keyset import fingerprints
from eventkg.graphstore.neo4j.node_ids import MISSING, NodeIds
from eventkg.graphstore.neo4j.pair_edges import foreach_cypher

pytestmark = pytest.mark.neo4j


def _events(batch: Batch, *names: str) -> Batch:
    for n in names:
        batch.add_node("Event", {"id": n, "text": n, "level": "schema", "sources": ["t"]})
    return batch


def _edges(store) -> set[tuple]:
    rows = store.query("MATCH (a)-[e]->(b) RETURN a.id AS a, type(e) AS t, b.id AS b, e.count AS c, e.sources AS s")
    return {(r["a"], r["t"], r["b"], r["c"], tuple(r["s"])) for r in rows}


def test_node_ids_map_finds_what_was_added_and_nothing_else():
    ids = NodeIds()
    h1, h2 = fingerprints(["a", "b", "c"])
    ids.add(h1, h2, np.array([10, 11, 12]))
    q1, q2 = fingerprints(["c", "x", "a"])
    assert ids.find(q1, q2).tolist() == [12, MISSING, 10]
    q1[0] ^= np.uint64(1)  # same key but a different first hash: not found
    assert ids.find(q1, q2).tolist()[0] == MISSING


def test_pair_statement_finds_ends_by_id(neo4j_server):
    """The plan of the pair statement seeks both ends by internal id, not by an index on the string id."""
    import neo4j

    auth = (neo4j_server.user, neo4j_server.password) if neo4j_server.user else None
    with neo4j.GraphDatabase.driver(neo4j_server.bare_url, auth=auth) as drv, drv.session() as s:
        cypher = foreach_cypher(["CO_OCCURRENCE", "REASON"], ["sources", "count"])
        summary = s.run("EXPLAIN " + cypher, rows=[]).consume()
    ops, todo = [], [summary.plan]
    while todo:
        op = todo.pop()
        ops.append(op["operatorType"])
        todo += op.get("children", [])
    assert sum(o.startswith("NodeByIdSeek") for o in ops) == 2, ops
    assert not any("IndexSeek" in o or "Scan" in o for o in ops), ops


def test_several_types_between_one_pair_in_one_batch(n4):
    b = _events(Batch(), "e1", "e2", "e3")
    b.add_edge("CO_OCCURRENCE", {"src": "e1", "dst": "e2", "count": 2.0, "sources": ["aser"]})
    b.add_edge("REASON", {"src": "e1", "dst": "e2", "count": 0.5, "sources": ["aser"]})
    b.add_edge("RESULT", {"src": "e1", "dst": "e2", "count": 1.0, "sources": ["aser"]})
    b.add_edge("REASON", {"src": "e2", "dst": "e3", "count": 3.0, "sources": ["aser", "x"]})
    with n4.bulk_load():
        res = n4.write_batch(b)
    assert res.created == {"Event": 3, "CO_OCCURRENCE": 1, "REASON": 2, "RESULT": 1}
    assert _edges(n4) == {
        ("e1", "CO_OCCURRENCE", "e2", 2.0, ("aser",)),
        ("e1", "REASON", "e2", 0.5, ("aser",)),
        ("e1", "RESULT", "e2", 1.0, ("aser",)),
        ("e2", "REASON", "e3", 3.0, ("aser", "x")),
    }
    again = n4.write_batch(b)  # outside the session: the exact path, nothing new
    assert sum(again.created.values()) == 0 and sum(again.updated.values()) == 0


def test_edges_in_a_later_batch_find_nodes_of_an_earlier_one_and_of_before_the_session(n4):
    n4.write_batch(_events(Batch(), "old"))  # stored before the session: looked up once by string id
    with n4.bulk_load():
        n4.write_batch(_events(Batch(), "n1", "n2"))
        b = Batch()
        b.add_edge("PRECEDENCE", {"src": "n1", "dst": "n2", "count": 1.0, "sources": ["aser"]})
        b.add_edge("PRECEDENCE", {"src": "old", "dst": "n1", "count": 4.0, "sources": ["aser"]})
        b.add_edge("SUCCESSION", {"src": "n2", "dst": "old", "count": 2.0, "sources": ["aser"]})
        res = n4.write_batch(b)
    assert res.created == {"PRECEDENCE": 2, "SUCCESSION": 1}
    assert _edges(n4) == {
        ("n1", "PRECEDENCE", "n2", 1.0, ("aser",)),
        ("old", "PRECEDENCE", "n1", 4.0, ("aser",)),
        ("n2", "SUCCESSION", "old", 2.0, ("aser",)),
    }


def test_ids_survive_clear_inside_a_session(n4):
    """clear() deletes nodes, whose ids Neo4j reuses: the session's id map must not point at new nodes."""
    with n4.bulk_load():
        n4.write_batch(_events(Batch(), "a1", "a2"))
        n4.clear()
        n4.write_batch(_events(Batch(), "b1", "b2"))
        b = Batch()
        b.add_edge("CONTRAST", {"src": "b1", "dst": "b2", "count": 1.0, "sources": ["aser"]})
        n4.write_batch(b)
    assert _edges(n4) == {("b1", "CONTRAST", "b2", 1.0, ("aser",))}


def test_missing_end_of_a_new_pair_edge_is_one_line_naming_it(n4):
    with n4.bulk_load():
        n4.write_batch(_events(Batch(), "here"))
        b = Batch()
        b.add_edge("REASON", {"src": "here", "dst": "gone", "count": 1.0, "sources": ["aser"]})
        with pytest.raises(MissingEndpointError) as err:
            n4.write_batch(b)
    msg = str(err.value)
    assert "\n" not in msg and "REASON" in msg and "Event 'gone'" in msg
    assert _edges(n4) == set()


def test_many_pairs_across_transactions_and_chunks(neo4j_server):
    """Small transaction and chunk bounds: a pair's types may fall into different transactions; all land once."""
    store = open_store(neo4j_server.url)
    store.clear()
    store.close()
    from eventkg.graphstore.neo4j.store import Neo4jStore

    store = Neo4jStore(neo4j_server.url, chunk_size=7, tx_rows=25, tx_bytes=1 << 20)
    try:
        n = 40
        names = [f"v{i:03d}" for i in range(n)]
        b = _events(Batch(), *names)
        expected = set()
        types = ["CO_OCCURRENCE", "REASON", "CONDITION"]
        for i in range(n):
            for k, t in enumerate(types[: 1 + i % 3]):
                src, dst = names[i], names[(i * 7 + 3) % n]
                b.add_edge(t, {"src": src, "dst": dst, "count": float(i + k), "sources": ["aser"]})
                expected.add((src, t, dst, float(i + k), ("aser",)))
        table_batch = Batch()  # the same edges again as one Arrow table per type: deduplicated, counted once
        for t in types:
            rows = [e for e in expected if e[1] == t]
            table_batch.add_edge_table(t, pa.table({"src": [r[0] for r in rows], "dst": [r[2] for r in rows],
                                                     "count": [r[3] for r in rows], "sources": ["aser"] * len(rows)}))
        with store.bulk_load():
            res = store.write_batch(b)
            again = store.write_batch(table_batch)
        assert res.created == {"Event": 40, "CO_OCCURRENCE": 40, "REASON": 26, "CONDITION": 13}
        assert sum(again.created.values()) == 0 and sum(again.updated.values()) == 0
        assert _edges(store) == expected
    finally:
        store.close()
