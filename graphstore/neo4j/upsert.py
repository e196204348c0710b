"""The statements one Neo4j transaction runs for one label/type: CREATE the new rows, look the
others up, replace the changed ones.

Owns the per-label/type Cypher of the write path and how statements are sent
(:func:`run_chunks`: ``UNWIND $rows`` of :data:`CHUNK` rows as positional lists, the next one
sent before the previous result is read). Endpoints are matched with their label, so the
uniqueness constraint on ``id`` (:mod:`eventkg.graphstore.neo4j.schema`) makes each lookup an
index seek. Invariant: a row whose merge with the stored one (``base.merge_props``, as in the
embedded backend) changes nothing is neither written nor counted; Neo4j has no null properties,
so nulls are stripped; an edge whose endpoint is not stored raises :class:`MissingEndpointError`
naming it. New edges a node pair at a time are :mod:`eventkg.graphstore.neo4j.pair_edges`; which rows
are known new, and the transactions, are :mod:`eventkg.graphstore.neo4j.writer` and
:mod:`eventkg.graphstore.neo4j.transactions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

import neo4j
import numpy as np

from eventkg.graphstore.base import WriteResult, merge_props
from eventkg.graphstore.errors import MissingEndpointError, StoreError
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.neo4j.node_ids import TxIds
from eventkg.graphstore.neo4j.typed_parts import Part

CHUNK = 5_000  # rows per UNWIND statement


def _strip(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as stored: nulls dropped (Neo4j has no null properties), sources a list."""
    out = {k: v for k, v in row.items() if v is not None}
    out["sources"] = list(row.get("sources") or [])
    return out


def _insert_cypher(name: str) -> str:
    """CREATE of rows sent as lists: ``[id, sources, props...]`` or ``[src, dst, sources, props...]``.

    Properties are set inside CREATE (a null one is simply not set), which avoids a later
    SET on a relationship created in the same transaction (Neo4j 5 resolves that by
    scanning the transaction's new relationships: quadratic in the chunk size).
    """
    if name in NODE_TYPES:
        cols = ["id", "sources", *NODE_TYPES[name].properties]
        props = ", ".join(f"`{c}`: r[{i}]" for i, c in enumerate(cols))
        return f"UNWIND $rows AS r CREATE (n:{name} {{{props}}}) RETURN id(n) AS i"
    rel = REL_TYPES[name]
    cols = ["sources", *rel.properties]
    props = ", ".join(f"`{c}`: r[{i + 2}]" for i, c in enumerate(cols))
    return (
        f"UNWIND $rows AS r MATCH (a:{rel.source} {{id: r[0]}}) MATCH (b:{rel.target} {{id: r[1]}}) "
        f"CREATE (a)-[e:{name} {{{props}}}]->(b) RETURN count(*) AS n"
    )


def _node_cyphers(label: str) -> dict[str, str]:
    """Existing-row lookup and replace statements for one label."""
    return {
        "lookup": f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN properties(n) AS p",
        "replace": f"UNWIND $rows AS r MATCH (n:{label} {{id: r.id}}) SET n = r",
    }


def _edge_cyphers(rtype: str) -> dict[str, str]:
    """Lookup (existing edge / missing endpoint per row) and replace for one type."""
    rel = REL_TYPES[rtype]
    ends = f"MATCH (a:{rel.source} {{id: r.src}}) MATCH (b:{rel.target} {{id: r.dst}})"
    return {
        "lookup": (
            "UNWIND range(0, size($keys) - 1) AS i WITH i, $keys[i] AS k "
            f"OPTIONAL MATCH (a:{rel.source} {{id: k[0]}}) OPTIONAL MATCH (b:{rel.target} {{id: k[1]}}) "
            f"OPTIONAL MATCH (a)-[e:{rtype}]->(b) WITH i, a, b, e WHERE a IS NULL OR b IS NULL OR e IS NOT NULL "
            "RETURN i, a IS NULL AS no_src, b IS NULL AS no_dst, properties(e) AS p"
        ),
        # r.p: the edge's full merged properties (sources included, nulls stripped)
        "replace": f"UNWIND $rows AS r {ends} MATCH (a)-[e:{rtype}]->(b) SET e = r.p",
    }


def _diff(rows: list[dict], stored: list[dict | None], keys: Sequence[str] = ()) -> tuple[list[dict], list[dict]]:
    """Split merged batch rows into new ones and changed ones (as full stored rows).

    ``stored[i]`` holds the stored properties of row i's node/edge, or None; a row whose
    merge with the stored version (base.merge_props) changes nothing is dropped. ``keys``
    are row columns that are not stored as properties (an edge's ``src``/``dst``).
    """
    new, changed = [], []
    for row, old in zip(rows, stored, strict=True):
        if old is None:
            new.append(_strip(row))
            continue
        old = dict(old, sources=list(old.get("sources") or []))
        merged = _strip(merge_props(old, {k: v for k, v in row.items() if k not in keys}))
        if merged != old:
            changed.append(merged | {k: row[k] for k in keys})
    return new, changed


def _edge_param(row: Mapping[str, Any]) -> dict[str, Any]:
    """An edge row as sent to Cypher: endpoints apart from the properties it stores."""
    return {"src": row["src"], "dst": row["dst"], "p": {k: v for k, v in row.items() if k not in ("src", "dst")}}


def create_nodes(tx: neo4j.Transaction, part: Part, chunk_size: int, ids: TxIds) -> int:
    """CREATE a part's nodes (all new) and note the internal id each got (UNWIND returns them in row order)."""
    rows = part.tuples()
    got = [i for chunk in run_chunks(tx, _insert_cypher(part.name), rows, chunk_size, lambda res, _: res.value(0))
           for i in chunk]
    if len(got) != len(rows):  # cannot happen: CREATE yields one row per input row
        raise StoreError(f"Neo4j created {len(got):,} {part.name} nodes of {len(rows):,}")
    ids.learn(part.name, part.h1, part.h2, np.array(got, np.int64))
    return len(got)


def create(tx: neo4j.Transaction, name: str, rows: list[tuple], chunk_size: int) -> int:
    """CREATE rows (all new); an edge whose endpoint is missing raises MissingEndpointError."""
    return sum(run_chunks(tx, _insert_cypher(name), rows, chunk_size, partial(_created, tx, name)))


def _created(tx: neo4j.Transaction, name: str, res: neo4j.Result, chunk: list[tuple]) -> int:
    if name in NODE_TYPES:
        return res.consume().counters.nodes_created
    if res.single(strict=True)["n"] != len(chunk):
        raise MissingEndpointError(missing_endpoint(tx, name, [{"src": r[0], "dst": r[1]} for r in chunk]))
    return res.consume().counters.relationships_created


def upsert(tx: neo4j.Transaction, name: str, rows: list[dict], chunk_size: int) -> WriteResult:
    """Look rows up, CREATE the new ones, replace the changed ones (exact, any state)."""
    result = WriteResult()
    edge = name in REL_TYPES
    q = _edge_cyphers(name) if edge else _node_cyphers(name)
    cols = ["src", "dst"] if edge else ["id"]
    cols += ["sources", *(REL_TYPES[name] if edge else NODE_TYPES[name]).properties]
    for i in range(0, len(rows), chunk_size):
        chunk = rows[i : i + chunk_size]
        if edge:
            old = {}
            for rec in tx.run(q["lookup"], keys=[[r["src"], r["dst"]] for r in chunk]):
                if rec["no_src"] or rec["no_dst"]:
                    raise MissingEndpointError(missing_message(name, chunk[rec["i"]], rec["no_src"]))
                old[rec["i"]] = rec["p"]
            new, changed = _diff(chunk, [old.get(n) for n in range(len(chunk))], ("src", "dst"))
        else:
            old = {rec["p"]["id"]: rec["p"] for rec in tx.run(q["lookup"], ids=[r["id"] for r in chunk])}
            new, changed = _diff(chunk, [old.get(r["id"]) for r in chunk])
        created = create(tx, name, [tuple(r.get(c) for c in cols) for r in new], chunk_size) if new else 0
        if changed:
            rows_param = [_edge_param(r) for r in changed] if edge else changed
            tx.run(q["replace"], rows=rows_param).consume()
        result.add(WriteResult({name: created}, {name: len(changed)}))
    return result


def empty_kinds(tx: neo4j.ManagedTransaction, labels: list[str], types: list[str]) -> set[str]:
    """Which of the labels/types hold nothing yet (answered from the count store).

    ``WITH count(..) AS c`` first: ``RETURN 'X' AS k, count(n)`` groups by the literal and
    returns no row at all when nothing matches, so an empty label looked non-empty.
    """
    parts = [f"MATCH (n:{label}) WITH count(n) AS c RETURN '{label}' AS k, c" for label in labels]
    parts += [f"MATCH ()-[e:{t}]->() WITH count(e) AS c RETURN '{t}' AS k, c" for t in types]
    return {rec["k"] for rec in tx.run(" UNION ALL ".join(parts)) if rec["c"] == 0}


def missing_endpoint(tx: neo4j.ManagedTransaction, rtype: str, rows: list[dict]) -> str:
    """The message naming one endpoint of ``rows`` that is not in the store."""
    rel = REL_TYPES[rtype]
    for label, col in ((rel.source, "src"), (rel.target, "dst")):
        ids = list({r[col] for r in rows})
        found = {
            rec["id"] for rec in tx.run(f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN n.id AS id", ids=ids)
        }
        for row in rows:
            if row[col] not in found:
                return missing_message(rtype, row, col == "src")
    return f"{rtype} edge refers to a node that is not in the store"


def missing_message(rtype: str, row: Mapping[str, Any], src_missing: bool) -> str:
    """The one line naming the end of an edge row (``src``/``dst``) that is not in the store."""
    rel = REL_TYPES[rtype]
    label, nid = (rel.source, row["src"]) if src_missing else (rel.target, row["dst"])
    return f"{rtype} edge refers to a node that is not in the store: {label} {nid!r}"


_T = TypeVar("_T")


def run_chunks(tx: neo4j.Transaction, query: str, rows: list, chunk_size: int,
               read: Callable[[neo4j.Result, list], _T]) -> list[_T]:
    """``query`` over ``rows`` in statements of ``chunk_size`` rows (``$rows``), each sent before the
    previous one's result is read, so the server runs one while the next is packed; ``read``
    turns each statement's result (and the rows it was given) into a value, in order."""
    out: list[_T] = []
    pending: tuple[neo4j.Result, list] | None = None
    for i in range(0, len(rows), chunk_size):
        chunk = rows[i : i + chunk_size]
        if pending is not None:
            out.append(read(*pending))
        pending = (tx.run(query, rows=chunk), chunk)
    if pending is not None:
        out.append(read(*pending))
    return out
