"""Reading a Neo4j store: counts, nodes by id, streams of nodes and edges, neighbourhoods.

* Counts come from Neo4j's count store (one ``count()`` branch per label/type), not from scans.
* Nodes are fetched by id with ``UNWIND $ids AS i MATCH (n:Label {id: i})`` in chunks of
  :data:`LOOKUP_CHUNK`: an index seek per id through the label's uniqueness constraint.
* ``iter_nodes`` reads keyset pages in ``id`` order (the constraint's index serves the order);
  ``iter_edges`` is one streaming result pulled ``page_size`` records at a time.
* A neighbourhood is expanded one query per hop, its branches grouped per far label (few
  branches plan fast), then the edges among the held nodes are read per endpoint labels.

Plain functions over ``read`` (runs read-only Cypher and returns the records:
:meth:`Connection.read <eventkg.graphstore.neo4j.connect.Connection.read>`, a READ access-mode
session, so Neo4j itself refuses writes); ``iter_edges`` streams over the connection itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import neo4j
import networkx as nx
from neo4j.graph import Node, Path, Relationship

from eventkg.graphstore.base import PAGE_ROWS, neighbourhood_types
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.neo4j.connect import Connection
from eventkg.graphstore.rows import EdgeRow, NodeRow

LOOKUP_CHUNK = 50_000  # ids per lookup statement

Read = Callable[..., list[neo4j.Record]]  # (cypher, params=None) -> records


def plain(value: Any) -> Any:
    """Driver values -> JSON-friendly values (nodes/rels become property dicts)."""
    if isinstance(value, Node):
        out = {k: plain(v) for k, v in value.items()}
        out["_label"] = next(iter(sorted(value.labels)), None)
        return out
    if isinstance(value, Relationship):
        out = {k: plain(v) for k, v in value.items()}
        out["_type"] = value.type
        out["_src"] = value.start_node.get("id") if value.start_node is not None else None
        out["_dst"] = value.end_node.get("id") if value.end_node is not None else None
        return out
    if isinstance(value, Path):
        return {"_nodes": [plain(n) for n in value.nodes], "_rels": [plain(r) for r in value.relationships]}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    return str(value)  # temporal and spatial values


def counts(read: Read) -> dict[str, dict[str, int]]:
    """Nodes per label and edges per type."""
    # each branch is answered from Neo4j's count store, not by scanning
    parts = [f"MATCH (n:{label}) RETURN 'n' AS k, '{label}' AS name, count(n) AS c" for label in NODE_TYPES]
    parts += [f"MATCH ()-[e:{t}]->() RETURN 'e' AS k, '{t}' AS name, count(e) AS c" for t in REL_TYPES]
    got = {(r["k"], r["name"]): r["c"] for r in read(" UNION ALL ".join(parts))}
    return {
        "nodes": {label: got.get(("n", label), 0) for label in NODE_TYPES},
        "edges": {t: got.get(("e", t), 0) for t in REL_TYPES},
    }


def node_row(label: str, props: Mapping[str, Any]) -> NodeRow:
    """Stored properties -> a row with every declared column (None when absent)."""
    row = {"id": props.get("id"), "sources": list(props.get("sources") or [])}
    row.update({c: props.get(c) for c in NODE_TYPES[label].properties})
    return row


def get_nodes(read: Read, label: str, ids: Sequence[str]) -> dict[str, NodeRow]:
    """Stored nodes of ``label`` by id (ids not stored are left out)."""
    if label not in NODE_TYPES:
        raise StoreError(f"unknown node label {label!r}")
    ids = list(dict.fromkeys(ids))
    out: dict[str, NodeRow] = {}
    for i in range(0, len(ids), LOOKUP_CHUNK):
        for rec in read(
            f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN properties(n) AS p",
            {"ids": ids[i : i + LOOKUP_CHUNK]},
        ):
            out[rec["p"]["id"]] = node_row(label, rec["p"])
    return out


def iter_nodes(read: Read, label: str, page_size: int = PAGE_ROWS) -> Iterator[NodeRow]:
    """Keyset pages in ``id`` order (the constraint's index serves the order)."""
    if label not in NODE_TYPES:
        raise StoreError(f"unknown node label {label!r}")
    after = None
    while True:
        where = "WHERE n.id > $after" if after is not None else "WHERE n.id IS NOT NULL"
        page = read(
            f"MATCH (n:{label}) {where} RETURN properties(n) AS p ORDER BY n.id LIMIT $n",
            {"after": after, "n": page_size},
        )
        for rec in page:
            yield node_row(label, rec["p"])
        if len(page) < page_size:
            return
        after = page[-1]["p"]["id"]


def iter_edges(conn: Connection, rel_type: str, page_size: int = PAGE_ROWS) -> Iterator[EdgeRow]:
    """One streaming result, pulled from the server ``page_size`` records at a time."""
    if rel_type not in REL_TYPES:
        raise StoreError(f"unknown relationship type {rel_type!r}")
    rel = REL_TYPES[rel_type]
    cypher = (
        f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) "
        "RETURN a.id AS src, b.id AS dst, properties(e) AS p"
    )
    with conn.session(write=False, fetch_size=page_size) as s:
        for rec in s.run(cypher):
            p = rec["p"]
            row = {"src": rec["src"], "dst": rec["dst"], "sources": list(p.get("sources") or [])}
            row.update({c: p.get(c) for c in rel.properties})
            yield row


def neighbourhood(
    read: Read,
    seeds: Sequence[str],
    hops: int = 1,
    rel_types: Sequence[str] | None = None,
    direction: str = "both",
    limit: int | None = None,
    induced: bool = True,
) -> nx.MultiDiGraph:
    """See :meth:`eventkg.graphstore.base.GraphStore.neighbourhood`."""
    types = neighbourhood_types(rel_types, direction)
    held = _labels_of(read, list(dict.fromkeys(seeds)))  # id -> label
    frontier = dict(held)
    for _ in range(hops):
        if not frontier:
            break
        found = _expand(read, frontier, types, direction, set(held), limit)
        held.update(found)
        frontier = found
    g = nx.MultiDiGraph()
    by_label: dict[str, list[str]] = {}
    for nid, label in held.items():
        by_label.setdefault(label, []).append(nid)
    for label, ids in by_label.items():
        for nid, row in get_nodes(read, label, ids).items():
            g.add_node(nid, label=label, **{k: v for k, v in row.items() if v is not None})
    _add_edges_among(read, g, by_label, types)
    if not induced:  # keep the edges a walk of <= hops steps traverses
        outer = set(frontier)
        g.remove_edges_from([(u, v, k) for u, v, k in g.edges(keys=True) if u in outer and v in outer])
    return g


def _labels_of(read: Read, ids: Sequence[str]) -> dict[str, str]:
    """Which label each existing id has (ids are unique across labels by construction)."""
    if not ids:
        return {}
    branches = " UNION ALL ".join(
        f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id AS id, '{label}' AS label" for label in NODE_TYPES
    )
    found = {r["id"]: r["label"] for r in read(branches, {"ids": list(ids)})}
    return {i: found[i] for i in ids if i in found}


def _expand(
    read: Read, frontier: Mapping[str, str], types: Sequence[str], direction: str, seen: set[str], limit: int | None
) -> dict[str, str]:
    """New neighbours (id -> label) of ``frontier`` over ``types``, at most ``limit``, by id."""
    branches = []
    params: dict[str, Any] = {"seen": sorted(seen)}
    by_label: dict[str, list[str]] = {}
    for nid, label in frontier.items():
        by_label.setdefault(label, []).append(nid)
    for label, ids in by_label.items():
        params[f"ids_{label}"] = ids
        for outgoing in {"out": (True,), "in": (False,), "both": (True, False)}[direction]:
            # one branch per far label, its types joined: few branches plan fast
            by_far: dict[str, list[str]] = {}
            for t in types:
                rel = REL_TYPES[t]
                if (rel.source if outgoing else rel.target) == label:
                    by_far.setdefault(rel.target if outgoing else rel.source, []).append(t)
            for far, group in by_far.items():
                arrow = f"-[:{'|'.join(group)}]->" if outgoing else f"<-[:{'|'.join(group)}]-"
                branches.append(
                    f"MATCH (a:{label}){arrow}(b:{far}) WHERE a.id IN $ids_{label} AND NOT b.id IN $seen "
                    f"RETURN DISTINCT b.id AS id, '{far}' AS label"
                )
    if not branches:
        return {}
    cypher = "CALL { " + " UNION ".join(branches) + " } RETURN id, label ORDER BY id"
    if limit is not None:
        cypher += " LIMIT $limit"
        params["limit"] = limit
    return {r["id"]: r["label"] for r in read(cypher, params)}


def _add_edges_among(read: Read, g: nx.MultiDiGraph, by_label: Mapping[str, list[str]], types: Sequence[str]) -> None:
    """Every edge of ``types`` whose two endpoints are held, grouped per endpoint labels."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for t in types:
        rel = REL_TYPES[t]
        if rel.source in by_label and rel.target in by_label:
            pairs.setdefault((rel.source, rel.target), []).append(t)
    for (src, dst), group in pairs.items():
        cypher = (
            f"MATCH (a:{src})-[e:{'|'.join(group)}]->(b:{dst}) WHERE a.id IN $a AND b.id IN $b "
            "RETURN a.id AS src, b.id AS dst, type(e) AS t, properties(e) AS p"
        )
        for rec in read(cypher, {"a": by_label[src], "b": by_label[dst]}):
            g.add_edge(rec["src"], rec["dst"], key=rec["t"], type=rec["t"], **rec["p"])
