"""Reading a LadybugDB store: the Cypher passthrough, counts, nodes by id, streams, neighbourhoods.

Plain functions over a ``ladybug.Connection``; :class:`~eventkg.graphstore.ladybug.store.LadybugStore`
writes what a bulk session holds before calling them.

* ``UNWIND $ids AS i MATCH (n:Label {id: i})`` uses the primary-key index, while
  ``WHERE n.id IN $ids`` scans, so nodes are fetched by id in chunks of keyed lookups.
* Neighbourhoods expand one keyed query per node: ``UNWIND`` over ids in a relationship
  pattern is planned as a scan of the rel tables (the costs: ``docs/performance.md``).
* ``sources`` is stored as one comma-joined STRING and read back as a list
  (see :func:`eventkg.graphstore.tables.decoded`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import networkx as nx

from eventkg.graphstore.base import neighbourhood_types
from eventkg.graphstore.errors import StoreError, WriteRefused
from eventkg.graphstore.ladybug.engine import fetch_rows, fetch_tuples, rollback, short_error
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.rows import EdgeRow, NodeRow
from eventkg.graphstore.tables import decoded

#: statements that write files (or load code) even inside a read-only transaction, at a statement's start
_FILE_WRITING = re.compile(r"^\s*(COPY\b|EXPORT\b|IMPORT\b|INSTALL\b|UPDATE\s+EXTENSION\b|ATTACH\b|DETACH\b"
                           r"|LOAD\s+(?!FROM\b|WITH\b))", re.IGNORECASE)
_LITERALS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.DOTALL)


def refuse_file_writes(cypher: str) -> None:
    """Refuse, for the read-only passthrough, a statement the engine runs in a read-only transaction
    although it writes files or loads code: ``COPY ... TO``, ``EXPORT DATABASE``, ``IMPORT DATABASE``,
    ``INSTALL``/``LOAD`` an extension, ``ATTACH`` (string literals and comments are not read).

    Raises:
        WriteRefused: One line naming the statement's first word.
    """
    for statement in _LITERALS.sub("''", cypher).split(";"):
        found = _FILE_WRITING.match(statement)
        if found:
            word = found.group(1).split()[0].upper()
            raise WriteRefused(f"query refused: {word} writes files or changes the database outside the graph, and "
                               "the Cypher passthrough is read-only; pass --write to allow it")


def run_query(conn: Any, cypher: str, params: Mapping[str, Any] | None, write: bool) -> list[dict[str, Any]]:
    """Run raw Cypher (inside a read-only transaction unless ``write``, statements that write files
    refused then: :func:`refuse_file_writes`); rows as JSON-friendly dicts."""
    if not write:
        refuse_file_writes(cypher)
    try:
        if write:
            return [plain_row(r) for r in fetch_rows(conn, cypher, params)]
        conn.execute("BEGIN TRANSACTION READ ONLY")
        try:
            return [plain_row(r) for r in fetch_rows(conn, cypher, params)]
        finally:
            rollback(conn)
    except RuntimeError as exc:
        msg = short_error(exc)
        if "read-only" in msg or "read only" in msg:
            raise WriteRefused(
                "query refused: it writes to the graph and the Cypher passthrough is read-only; pass --write to allow it"
            ) from exc
        raise StoreError(f"Cypher error: {msg}") from exc


def counts(conn: Any) -> dict[str, dict[str, int]]:
    """Rows per node label and per relationship type."""
    nodes = {label: fetch_tuples(conn, f"MATCH (n:{label}) RETURN count(*)")[0][0] for label in NODE_TYPES}
    edges = {t: fetch_tuples(conn, f"MATCH ()-[e:{t}]->() RETURN count(*)")[0][0] for t in REL_TYPES}
    return {"nodes": nodes, "edges": edges}


def get_nodes(conn: Any, label: str, ids: Sequence[str], *, props: bool, chunk: int) -> dict[str, NodeRow]:
    """The stored nodes among ``ids`` (keyed lookups, ``chunk`` ids per statement), by id."""
    cols = ["id", "sources", *NODE_TYPES[label].properties] if props else ["id"]
    ret = ", ".join(f"n.`{c}`" for c in cols)
    out: dict[str, NodeRow] = {}
    ids = list(ids)
    for i in range(0, len(ids), chunk):
        for vals in fetch_tuples(
            conn, f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN {ret}", {"ids": ids[i : i + chunk]}
        ):
            out[vals[0]] = decoded(dict(zip(cols, vals, strict=True)))
    return out


def iter_nodes(conn: Any, label: str, page_size: int) -> Iterator[NodeRow]:
    """Every node of a label, streamed."""
    cols = ["id", "sources", *NODE_TYPES[label].properties]
    ret = ", ".join(f"n.`{c}` AS `{c}`" for c in cols)
    yield from _stream(conn, f"MATCH (n:{label}) RETURN {ret}", page_size)


def iter_edges(conn: Any, rel_type: str, page_size: int) -> Iterator[EdgeRow]:
    """Every edge of a type (``src``, ``dst`` and its properties), streamed."""
    rel = REL_TYPES[rel_type]
    ret = ", ".join(f"e.`{c}` AS `{c}`" for c in ["sources", *rel.properties])
    yield from _stream(
        conn,
        f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) RETURN a.id AS src, b.id AS dst, {ret}",
        page_size,
    )


def _stream(conn: Any, cypher: str, page_size: int) -> Iterator[dict[str, Any]]:
    result = conn.execute(cypher)
    cols = result.get_column_names()
    while result.has_next():
        for _ in range(page_size):
            if not result.has_next():
                break
            yield decoded(dict(zip(cols, result.get_next(), strict=True)))


def neighbourhood(
    conn: Any,
    seeds: Sequence[str],
    hops: int,
    rel_types: Sequence[str] | None,
    direction: str,
    limit: int | None,
    induced: bool,
    *,
    chunk: int,
) -> nx.MultiDiGraph:
    """The nodes within ``hops`` of ``seeds`` and the edges among them (see ``GraphStore.neighbourhood``)."""
    types = neighbourhood_types(rel_types, direction)
    g = nx.MultiDiGraph()
    labels = _labels_of(conn, seeds, chunk)
    for nid, label in labels.items():
        g.add_node(nid, label=label)
    frontier = dict(labels)
    for _ in range(hops):
        found = _adjacent(conn, frontier, types, direction, g)
        nxt = {n: lab for n, lab in found.items() if n not in labels}
        if limit is not None:
            nxt = dict(list(nxt.items())[:limit])
        labels.update(nxt)
        for nid, label in nxt.items():
            g.add_node(nid, label=label)
        frontier = nxt
        if not frontier:
            break
    # edges among the outermost nodes, and drop edges to nodes cut by the limit
    if induced:
        _adjacent(conn, frontier, types, "both", g, closing=True)
    g.remove_nodes_from([n for n in list(g.nodes) if n not in labels])
    by_label: dict[str, list[str]] = {}
    for nid, label in labels.items():
        by_label.setdefault(label, []).append(nid)
    for label, ids in by_label.items():
        for nid, props in get_nodes(conn, label, ids, props=True, chunk=chunk).items():
            g.nodes[nid].update({k: v for k, v in props.items() if v is not None})
    return g


def _labels_of(conn: Any, ids: Sequence[str], chunk: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for label in NODE_TYPES:
        missing = [i for i in ids if i not in out]
        if not missing:
            break
        for nid in get_nodes(conn, label, missing, props=False, chunk=chunk):
            out[nid] = label
    return out


def _adjacent(
    conn: Any,
    frontier: Mapping[str, str],
    types: Sequence[str],
    direction: str,
    g: nx.MultiDiGraph,
    closing: bool = False,
) -> dict[str, str]:
    """Add edges of ``types`` touching ``frontier`` to ``g``; return the nodes at their far ends."""
    found: dict[str, str] = {}
    if not frontier:
        return found
    by_label: dict[str, list[str]] = {}
    for nid, label in frontier.items():
        by_label.setdefault(label, []).append(nid)
    arrow = {"out": "-[e:{t}]->", "in": "<-[e:{t}]-", "both": "-[e:{t}]-"}[direction]
    for label, ids in by_label.items():
        group = [t for t in types if label in (REL_TYPES[t].source, REL_TYPES[t].target)]
        if not group:
            continue
        # one keyed query per node: ~0.1 ms each, where an UNWIND over the ids is planned
        # as a scan of the rel tables (~300 ms on a 1M-edge store)
        query = f"MATCH (a:{label} {{id: $id}}){arrow.format(t='|'.join(group))}(b) RETURN ID(a), b.id, label(b), e"
        for nid in ids:
            for a_internal, b, blabel, e in fetch_tuples(conn, query, {"id": nid}):
                etype = e["_LABEL"]
                if etype not in group:
                    continue
                declared = REL_TYPES[etype].properties.keys() | {"sources"}
                props = decoded({k: v for k, v in e.items() if k in declared and v is not None})
                src, dst = (nid, b) if e["_SRC"] == a_internal else (b, nid)
                if closing and b not in g:
                    continue  # the closing pass only keeps edges among held nodes
                g.add_edge(src, dst, key=etype, type=etype, **props)
                found[b] = blabel
    return found


def plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Engine values -> JSON-friendly values (nodes and rels become property dicts; the engine's
    ``Decimal``, which ``sum()`` of integers and INT128 give, an ``int`` or a ``float`` as Neo4j's are)."""
    return {k: _plain(v) for k, v in row.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        if "_LABEL" in value:
            out = {k: _plain(v) for k, v in value.items() if not k.startswith("_")}
            out["_label" if "_SRC" not in value else "_type"] = value["_LABEL"]
            return out
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value.is_finite() and value.as_tuple().exponent >= 0 else float(value)
    return value
