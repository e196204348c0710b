"""Columnar reads of a store for whole-graph query work: Arrow batches, not one dict per row.

Building a vector index over a million events or an adjacency over millions of edges must
not stream one Python tuple per row (``GraphStore.iter_nodes`` / ``iter_edges``). This
module reads the columns it needs as ``pyarrow`` tables:

* LadybugDB: one read-only Cypher query whose result is taken with ``get_as_arrow``
  (the engine hands over whole column chunks, as the store itself does for its keyed
  lookups in ``graphstore/ladybug_store.py``);
* Neo4j: keyset pages ordered by ``id`` (nodes) or one streamed result pulled
  ``batch_size`` records at a time (edges), each page turned into one Arrow batch;
* any other :class:`~eventkg.graphstore.base.GraphStore`: its ``iter_nodes`` / ``iter_edges``,
  batched.

Only the graph store's public query surface is used, except on LadybugDB, where the
store's connection is asked for Arrow directly inside a read-only transaction (the
store's ``query`` returns Python rows).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.base import GraphStore, StoreError
from eventkg.graphstore.model import REL_TYPES

BATCH = 200_000

#: numeric edge property that ranks a neighbour (how often ASER saw the pair), per type
WEIGHT_PROPERTY = {name: ("weight" if "weight" in rel.properties else "count" if "count" in rel.properties else None)
                   for name, rel in REL_TYPES.items()}


def _ladybug_conn(store: GraphStore) -> Any | None:
    """The LadybugDB connection of an embedded store, else None."""
    from eventkg.graphstore.ladybug_store import LadybugStore

    return getattr(store, "_conn", None) if isinstance(store, LadybugStore) else None


def _ladybug_arrow(conn: Any, cypher: str, params: dict[str, Any] | None = None) -> pa.Table:
    conn.execute("BEGIN TRANSACTION READ ONLY")
    try:
        return conn.execute(cypher, dict(params or {})).get_as_arrow(BATCH)
    except RuntimeError as exc:
        raise StoreError(f"columnar read failed: {str(exc).strip().splitlines()[0]}") from exc
    finally:
        conn.execute("ROLLBACK")


def _is_neo4j(store: GraphStore) -> bool:
    from eventkg.graphstore.open import NEO4J_SCHEMES

    return str(getattr(store, "url", "")).startswith(NEO4J_SCHEMES)


def event_texts(store: GraphStore, level: str | None = None, batch_size: int = BATCH) -> pa.Table:
    """``(id, text)`` of the Event nodes of ``level`` (None: all) with a non-empty text.

    Row order is the store's; callers that need a stable order sort by ``id``.
    """
    where = "e.text IS NOT NULL AND e.text <> ''" + (" AND e.level = $level" if level else "")
    params = {"level": level} if level else {}
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    conn = _ladybug_conn(store)
    if conn is not None:
        t = _ladybug_arrow(conn, f"MATCH (e:Event) WHERE {where} RETURN e.id AS id, e.text AS text", params)
        return t.rename_columns(["id", "text"]).cast(schema)
    if _is_neo4j(store):
        batches, after = [], None
        while True:
            page = store.query(
                f"MATCH (e:Event) WHERE {where} AND ($after IS NULL OR e.id > $after) "
                "RETURN e.id AS id, e.text AS text ORDER BY e.id LIMIT $n",
                {**params, "after": after, "n": batch_size},
            )
            if page:
                batches.append(pa.RecordBatch.from_pylist(page, schema=schema))
            if len(page) < batch_size:
                return pa.Table.from_batches(batches, schema=schema)
            after = page[-1]["id"]
    ids: list[str] = []
    texts: list[str] = []
    for row in store.iter_nodes("Event", batch_size):
        if row.get("text") and (level is None or row.get("level") == level):
            ids.append(row["id"])
            texts.append(row["text"])
    return pa.table({"id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string())})


def event_nodes(store: GraphStore, batch_size: int = BATCH) -> pa.Table:
    """``(id, text, level)`` of every Event node (text and level null where unset), store order."""
    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("level", pa.string())])
    cypher = "MATCH (e:Event) RETURN e.id AS id, e.text AS text, e.level AS level"
    conn = _ladybug_conn(store)
    if conn is not None:
        return _ladybug_arrow(conn, cypher).rename_columns(["id", "text", "level"]).cast(schema)
    if _is_neo4j(store):
        batches, after = [], None
        while True:
            page = store.query(
                "MATCH (e:Event) WHERE $after IS NULL OR e.id > $after "
                "RETURN e.id AS id, e.text AS text, e.level AS level ORDER BY e.id LIMIT $n",
                {"after": after, "n": batch_size},
            )
            if page:
                batches.append(pa.RecordBatch.from_pylist(page, schema=schema))
            if len(page) < batch_size:
                return pa.Table.from_batches(batches, schema=schema)
            after = page[-1]["id"]
    batches = _row_batches(store.iter_nodes("Event", batch_size), ("id", "text", "level"), schema, batch_size)
    return pa.Table.from_batches(list(batches), schema=schema)


def event_graph_columns(store: GraphStore, rel_types: Sequence[str]) -> tuple[pa.Table, dict[str, pa.Table]]:
    """The Event nodes ``(key, id, text, level)`` and, per type, edges ``(src, dst)`` as node keys.

    A key is an int64 naming a node within this one read: LadybugDB's own node offset
    (``offset(ID(n))``: no id strings leave the engine for the edges, 1.0 s for 860K edges
    where the id-string read takes 2.2 s), elsewhere the node's row in the node table (the
    edges' id strings looked up with ``pyarrow.compute.index_in``). Edges whose ends are not
    Event nodes are dropped.
    """
    conn = _ladybug_conn(store)
    node_schema = pa.schema([("key", pa.int64()), ("id", pa.string()), ("text", pa.string()), ("level", pa.string())])
    edge_schema = pa.schema([("src", pa.int64()), ("dst", pa.int64())])
    if conn is not None:
        nodes = _ladybug_arrow(conn, "MATCH (e:Event) RETURN offset(ID(e)) AS key, e.id AS id, e.text AS text, "
                                     "e.level AS level").rename_columns(node_schema.names).cast(node_schema)
        out = {}
        for t in rel_types:
            rel = REL_TYPES[t]
            out[t] = _ladybug_arrow(conn, f"MATCH (a:{rel.source})-[e:{t}]->(b:{rel.target}) "
                                          "RETURN offset(ID(a)) AS src, offset(ID(b)) AS dst"
                                    ).rename_columns(edge_schema.names).cast(edge_schema)
        return nodes, out
    table = event_nodes(store)
    ids = table.column("id").combine_chunks()
    nodes = pa.table({"key": pa.array(range(len(ids)), pa.int64()), "id": ids, "text": table.column("text"),
                      "level": table.column("level")}, schema=node_schema)
    out = {}
    for t in rel_types:
        e = edges(store, t)
        src = pc.index_in(e.column("src"), value_set=ids)
        dst = pc.index_in(e.column("dst"), value_set=ids)
        both = pa.table({"src": src, "dst": dst}).filter(pc.and_(pc.is_valid(src), pc.is_valid(dst)))
        out[t] = both.cast(edge_schema)
    return nodes, out


def event_frequencies(store: GraphStore) -> pa.Table:
    """``(id, frequency)`` of every Event node (frequency null where unknown)."""
    conn = _ladybug_conn(store)
    if conn is not None:
        t = _ladybug_arrow(conn, "MATCH (e:Event) RETURN e.id AS id, e.frequency AS frequency")
        return t.rename_columns(["id", "frequency"]).cast(pa.schema([("id", pa.string()), ("frequency", pa.float64())]))
    rows = store.query("MATCH (e:Event) RETURN e.id AS id, e.frequency AS frequency") if _is_neo4j(store) else [
        {"id": r["id"], "frequency": r.get("frequency")} for r in store.iter_nodes("Event")
    ]
    return pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.string()), ("frequency", pa.float64())]))


def edges(store: GraphStore, rel_type: str, batch_size: int = BATCH) -> pa.Table:
    """``(src, dst, weight)`` of every edge of ``rel_type`` (weight = its count/weight, or null)."""
    rel = REL_TYPES[rel_type]
    prop = WEIGHT_PROPERTY[rel_type]
    weight = f"e.{prop}" if prop else "CAST(NULL AS DOUBLE)"
    schema = pa.schema([("src", pa.string()), ("dst", pa.string()), ("weight", pa.float64())])
    cypher = f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) RETURN a.id AS src, b.id AS dst, {weight} AS weight"
    conn = _ladybug_conn(store)
    if conn is not None:
        return _ladybug_arrow(conn, cypher).rename_columns(["src", "dst", "weight"]).cast(schema)
    batches = _row_batches(store.iter_edges(rel_type, batch_size), ("src", "dst", prop), schema, batch_size)
    return pa.Table.from_batches(list(batches), schema=schema)


def _row_batches(rows: Iterator[dict[str, Any]], cols: Sequence[str | None], schema: pa.Schema,
                 size: int) -> Iterator[pa.RecordBatch]:
    cur: list[list[Any]] = [[] for _ in cols]
    for row in rows:
        for i, c in enumerate(cols):
            cur[i].append(row.get(c) if c else None)
        if len(cur[0]) >= size:
            yield pa.RecordBatch.from_arrays([pa.array(v, f.type) for v, f in zip(cur, schema, strict=True)], schema=schema)
            cur = [[] for _ in cols]
    if cur[0]:
        yield pa.RecordBatch.from_arrays([pa.array(v, f.type) for v, f in zip(cur, schema, strict=True)], schema=schema)


def edge_counts(store: GraphStore, rel_types: Sequence[str]) -> dict[str, int]:
    """Edges per type (one ``count(*)`` each)."""
    out = {}
    for t in rel_types:
        rel = REL_TYPES[t]
        out[t] = int(store.query(f"MATCH (:{rel.source})-[e:{t}]->(:{rel.target}) RETURN count(*) AS n")[0]["n"])
    return out
