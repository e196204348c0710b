"""The server backend: Neo4j 5 through the official ``neo4j`` driver (Bolt).

Why it looks the way it does:

* A batch is one explicit write transaction, sent as ``UNWIND $rows`` statements of
  5,000 rows. Endpoints are matched with their label so the uniqueness constraint on
  ``id`` (created on open) makes each lookup an index seek; an unlabelled MATCH scans.
* Upserts look up which rows exist (skipped when the label/type is still empty), CREATE
  the new ones with their properties inline, and replace only the rows whose merge
  (``base.merge_props``, as in the embedded backend) changes something, so re-ingesting a
  file writes and counts nothing. Neo4j has no null properties: nulls are stripped.
* Arrow tables in a batch (``Batch.node_tables``/``edge_tables``) are typed as the
  embedded store types them (``graphstore.tables.conform_table``), then take the row path:
  Bolt sends Python values either way.
* Read-only Cypher runs in a READ access-mode session, so Neo4j itself refuses writes.
* Install ``neo4j-rust-ext`` beside the driver: it packs Bolt messages several times
  faster than the pure-Python code, which dominates bulk writes.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

import neo4j
import networkx as nx
from neo4j.exceptions import AuthError, ConfigurationError, Neo4jError, ServiceUnavailable
from neo4j.graph import Node, Path, Relationship

from graphstore.base import (
    Batch,
    GraphStore,
    MissingEndpointError,
    StoreError,
    WriteRefused,
    WriteResult,
    merge_props,
    merge_rows,
    neighbourhood_types,
    table_rows,
    validate_batch,
)
from graphstore.model import NODE_TYPES, REL_TYPES

# The driver logs routing failures and server notifications as warnings; without this
# handler Python's last-resort handler would print them under every CLI command. An app
# that configures logging still receives them.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

CHUNK = 5_000  # rows per UNWIND statement (Neo4j's per-transaction state grows per statement)
LOOKUP_CHUNK = 50_000  # ids per lookup statement
CONNECT_TIMEOUT = 5.0  # seconds to wait for a TCP connection
#: Label -> property with a (non-unique) range index, beside the unique ``id`` of every label.
INDEXED = {
    "Event": ["text"],
    "Concept": ["name"],
    "Argument": ["text", "id_string"],
    "Statement": ["text"],
    "Premise": ["text"],
    "Question": ["qid"],
}


def schema_statements() -> list[tuple[str, str]]:
    """(name, DDL) of the uniqueness constraints and indexes the store declares."""
    stmts = [
        (
            f"{label.lower()}_id",
            f"CREATE CONSTRAINT {label.lower()}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE",
        )
        for label in NODE_TYPES
    ]
    for label, props in INDEXED.items():
        for prop in props:
            name = f"{label.lower()}_{prop}"
            stmts.append((name, f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"))
    return stmts


def _strip(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as stored: nulls dropped (Neo4j has no null properties), sources a list."""
    out = {k: v for k, v in row.items() if v is not None}
    out["sources"] = list(row.get("sources") or [])
    return out


def _inline(props: Sequence[str]) -> str:
    """``{sources: r.sources, text: r.text, ...}``: properties set as part of CREATE.

    Setting them inside CREATE (nulls are skipped) avoids a later SET on a relationship
    created in the same transaction, which Neo4j 5 resolves by scanning the
    transaction's new relationships (quadratic in the chunk size).
    """
    return "{" + ", ".join(f"`{p}`: r.`{p}`" for p in ["sources", *props]) + "}"


def _node_cyphers(label: str) -> dict[str, str]:
    """Existing-row lookup, insert and replace statements for one label."""
    props = _inline(["id", *NODE_TYPES[label].properties])
    return {
        "lookup": f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN properties(n) AS p",
        "insert": f"UNWIND $rows AS r CREATE (n:{label} {props})",
        "replace": f"UNWIND $rows AS r MATCH (n:{label} {{id: r.id}}) SET n = r",
    }


def _edge_cyphers(rtype: str) -> dict[str, str]:
    """Lookup (existing edge / missing endpoint per row), insert and replace for one type."""
    rel = REL_TYPES[rtype]
    ends = f"MATCH (a:{rel.source} {{id: r.src}}) MATCH (b:{rel.target} {{id: r.dst}})"
    return {
        "lookup": (
            "UNWIND range(0, size($keys) - 1) AS i WITH i, $keys[i] AS k "
            f"OPTIONAL MATCH (a:{rel.source} {{id: k[0]}}) OPTIONAL MATCH (b:{rel.target} {{id: k[1]}}) "
            f"OPTIONAL MATCH (a)-[e:{rtype}]->(b) WITH i, a, b, e WHERE a IS NULL OR b IS NULL OR e IS NOT NULL "
            "RETURN i, a IS NULL AS no_src, b IS NULL AS no_dst, properties(e) AS p"
        ),
        "insert": f"UNWIND $rows AS r {ends} CREATE (a)-[e:{rtype} {_inline(rel.properties)}]->(b) RETURN count(*) AS n",
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


def _with_tables(rows: Mapping[str, list[dict]], tables: Mapping[str, Any]) -> dict[str, list[dict]]:
    """A batch's rows plus its Arrow tables turned into rows (after them), per label/type.

    Bolt sends Python values anyway, so tables take the row path here, typed first as in
    the embedded store (a column that does not fit its declared type is refused alike).
    """
    from graphstore.tables import conform_table

    out = {name: list(r) for name, r in rows.items()}
    for name, table in tables.items():
        kind = NODE_TYPES.get(name) or REL_TYPES[name]
        typed = conform_table(name, table, ("id",) if name in NODE_TYPES else ("src", "dst"), kind.properties)
        for i in range(0, typed.num_rows, LOOKUP_CHUNK):
            out.setdefault(name, []).extend(table_rows(typed.slice(i, LOOKUP_CHUNK)))
    return out


def _edge_param(row: Mapping[str, Any]) -> dict[str, Any]:
    """An edge row as sent to Cypher: endpoints apart from the properties it stores."""
    return {"src": row["src"], "dst": row["dst"], "p": {k: v for k, v in row.items() if k not in ("src", "dst")}}


def _reason(exc: BaseException, address: tuple[str, int] | None = None) -> str:
    """The root cause of a connection error, on one line (e.g. ``Connection refused``).

    Routing drivers hide the socket error behind "Unable to retrieve routing information",
    so the address is probed once with a plain TCP connect to name the real cause.
    """
    if address is not None:
        try:
            socket.create_connection(address, timeout=CONNECT_TIMEOUT).close()
        except OSError as probe:
            return probe.strerror or str(probe) or type(probe).__name__
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _plain(value: Any) -> Any:
    """Driver values -> JSON-friendly values (nodes/rels become property dicts)."""
    if isinstance(value, Node):
        out = {k: _plain(v) for k, v in value.items()}
        out["_label"] = next(iter(sorted(value.labels)), None)
        return out
    if isinstance(value, Relationship):
        out = {k: _plain(v) for k, v in value.items()}
        out["_type"] = value.type
        out["_src"] = value.start_node.get("id") if value.start_node is not None else None
        out["_dst"] = value.end_node.get("id") if value.end_node is not None else None
        return out
    if isinstance(value, Path):
        return {"_nodes": [_plain(n) for n in value.nodes], "_rels": [_plain(r) for r in value.relationships]}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    return str(value)  # temporal and spatial values


def parse_url(url: str) -> tuple[str, tuple[str, str] | None, str | None, str]:
    """``neo4j://[user:pass@]host[:port][/database]`` -> (driver URL, auth, database, shown URL).

    Credentials come from the URL, else ``NEO4J_USER``/``NEO4J_PASSWORD`` (user ``neo4j``
    when only a password is set), else none. The shown URL never contains the password.
    """
    parts: SplitResult = urlsplit(url)
    if not parts.hostname:
        raise StoreError(f"store URL {url!r}: no host (expected neo4j://[user:pass@]host:port[/database])")
    try:
        port = parts.port or 7687
    except ValueError as exc:
        raise StoreError(f"store URL {url!r}: bad port") from exc
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    driver_url = f"{parts.scheme}://{host}:{port}" + (f"?{parts.query}" if parts.query else "")
    user = unquote(parts.username) if parts.username else os.environ.get("NEO4J_USER")
    password = unquote(parts.password) if parts.password is not None else os.environ.get("NEO4J_PASSWORD")
    auth = None
    if user or password:
        auth = (user or "neo4j", password or "")
    database = unquote(parts.path.strip("/")) or None
    shown = f"{parts.scheme}://" + (f"{user}@" if parts.username else "") + f"{host}:{port}"
    shown += f"/{database}" if database else ""
    return driver_url, auth, database, shown


def _address(driver_url: str) -> tuple[str, int]:
    parts = urlsplit(driver_url)
    return parts.hostname or "localhost", parts.port or 7687


class Neo4jStore(GraphStore):
    """A Neo4j 5 database holding the eventkg graph."""

    def __init__(self, url: str, *, chunk_size: int = CHUNK) -> None:
        driver_url, auth, self._database, self.url = parse_url(url)
        self._address = _address(driver_url)
        self._user = auth[0] if auth else None
        self._chunk = chunk_size
        try:
            self._driver = neo4j.GraphDatabase.driver(
                driver_url,
                auth=auth,
                connection_timeout=CONNECT_TIMEOUT,
                max_transaction_retry_time=10.0,
                notifications_min_severity="OFF",  # "unknown rel type" etc. for every empty type
            )
        except (ConfigurationError, ValueError) as exc:
            raise StoreError(f"store URL {self.url}: {_one_line(exc)}") from exc
        try:
            self._driver.verify_connectivity()
            self._ensure_schema()
        except AuthError as exc:
            self._driver.close()
            if not self._user:
                raise StoreError(
                    f"Neo4j at {self.url} needs credentials: put them in the URL (neo4j://user:password@host:port) "
                    "or set NEO4J_USER and NEO4J_PASSWORD"
                ) from None
            raise StoreError(
                f"Neo4j at {self.url} refused user {self._user!r}: {_one_line(exc.message or exc)}"
            ) from None
        except (ServiceUnavailable, OSError) as exc:
            self._driver.close()
            raise StoreError(f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}") from None
        except Neo4jError as exc:
            self._driver.close()
            raise StoreError(f"Neo4j at {self.url}: {_one_line(exc.message or exc)}") from None

    # -- low-level -------------------------------------------------------------------------
    def _session(self, *, write: bool = True, **kw: Any) -> neo4j.Session:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self._database, default_access_mode=mode, **kw)

    def _read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[neo4j.Record]:
        with self._session(write=False) as s:
            return list(s.run(cypher, dict(params or {})))

    def _ensure_schema(self) -> None:
        """Create the missing constraints/indexes (once per database, not on every open)."""
        with self._session() as s:
            have = {r["name"] for r in s.run("SHOW CONSTRAINTS YIELD name")}
            have |= {r["name"] for r in s.run("SHOW INDEXES YIELD name")}
            todo = [ddl for name, ddl in schema_statements() if name not in have]
            for ddl in todo:
                s.run(ddl).consume()
            if todo:
                s.run("CALL db.awaitIndexes(300)").consume()

    # -- writing ---------------------------------------------------------------------------
    def write_batch(self, batch: Batch) -> WriteResult:
        validate_batch(batch)
        node_rows, edge_rows = _with_tables(batch.nodes, batch.node_tables), _with_tables(batch.edges, batch.edge_tables)
        nodes = {label: list(merge_rows(rows, ("id",)).values()) for label, rows in node_rows.items() if rows}
        edges = {t: list(merge_rows(rows, ("src", "dst")).values()) for t, rows in edge_rows.items() if rows}
        if not nodes and not edges:
            return WriteResult()
        try:
            with self._session() as s:
                return s.execute_write(self._write_tx, nodes, edges)
        except StoreError:
            raise
        except ServiceUnavailable as exc:
            raise StoreError(f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}") from None
        except Neo4jError as exc:
            raise StoreError(f"writing to Neo4j at {self.url}: {_one_line(exc.message or exc)}") from None

    def _write_tx(
        self, tx: neo4j.ManagedTransaction, nodes: dict[str, list[dict]], edges: dict[str, list[dict]]
    ) -> WriteResult:
        """Nodes, then edges, chunk by chunk: look up what exists, CREATE the new rows, replace
        the changed ones (merged in Python with base.merge_props, like the embedded backend).

        A label/type that is empty when the batch starts skips the lookup: its rows are all
        new (rows are unique within a batch). CREATE after a lookup assumes one writer at a
        time, the same rule the embedded store has; the uniqueness constraints still
        reject a duplicate node from a concurrent writer.
        """
        result = WriteResult()
        empty = self._empty_kinds(tx, list(nodes), list(edges))
        for label, rows in nodes.items():
            q = _node_cyphers(label)
            for i in range(0, len(rows), self._chunk):
                chunk = rows[i : i + self._chunk]
                old = (
                    {}
                    if label in empty
                    else {rec["p"]["id"]: rec["p"] for rec in tx.run(q["lookup"], ids=[r["id"] for r in chunk])}
                )
                new, changed = _diff(chunk, [old.get(r["id"]) for r in chunk])
                created = tx.run(q["insert"], rows=new).consume().counters.nodes_created if new else 0
                if changed:
                    tx.run(q["replace"], rows=changed).consume()
                result.add(WriteResult({label: created}, {label: len(changed)}))
        for rtype, rows in edges.items():
            q = _edge_cyphers(rtype)
            for i in range(0, len(rows), self._chunk):
                chunk = rows[i : i + self._chunk]
                old = {}
                if rtype not in empty:
                    for rec in tx.run(q["lookup"], keys=[[r["src"], r["dst"]] for r in chunk]):
                        if rec["no_src"] or rec["no_dst"]:
                            raise MissingEndpointError(self._missing_message(rtype, chunk[rec["i"]], rec["no_src"]))
                        old[rec["i"]] = rec["p"]
                new, changed = _diff(chunk, [old.get(n) for n in range(len(chunk))], ("src", "dst"))
                created = 0
                if new:
                    res = tx.run(q["insert"], rows=new)
                    if res.single(strict=True)["n"] != len(new):
                        raise MissingEndpointError(self._missing_endpoint(tx, rtype, new))
                    created = res.consume().counters.relationships_created
                if changed:
                    tx.run(q["replace"], rows=[_edge_param(r) for r in changed]).consume()
                result.add(WriteResult({rtype: created}, {rtype: len(changed)}))
        return result

    @staticmethod
    def _empty_kinds(tx: neo4j.ManagedTransaction, labels: list[str], types: list[str]) -> set[str]:
        """Which of the labels/types hold nothing yet (answered from the count store)."""
        parts = [f"MATCH (n:{label}) RETURN '{label}' AS k, count(n) AS c" for label in labels]
        parts += [f"MATCH ()-[e:{t}]->() RETURN '{t}' AS k, count(e) AS c" for t in types]
        return {rec["k"] for rec in tx.run(" UNION ALL ".join(parts)) if rec["c"] == 0}

    @staticmethod
    def _missing_message(rtype: str, row: Mapping[str, Any], src_missing: bool) -> str:
        rel = REL_TYPES[rtype]
        label, nid = (rel.source, row["src"]) if src_missing else (rel.target, row["dst"])
        return f"{rtype} edge refers to a node that is not in the store: {label} {nid!r}"

    @classmethod
    def _missing_endpoint(cls, tx: neo4j.ManagedTransaction, rtype: str, rows: list[dict]) -> str:
        """The message naming one endpoint of ``rows`` that is not in the store."""
        rel = REL_TYPES[rtype]
        for label, col in ((rel.source, "src"), (rel.target, "dst")):
            ids = list({r[col] for r in rows})
            found = {
                rec["id"] for rec in tx.run(f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN n.id AS id", ids=ids)
            }
            for row in rows:
                if row[col] not in found:
                    return cls._missing_message(rtype, row, col == "src")
        return f"{rtype} edge refers to a node that is not in the store"

    def clear(self) -> None:
        """Delete all nodes and edges: one transaction when small, else in batches."""
        total = self._read("MATCH (n) RETURN count(n) AS c")[0]["c"]
        if total == 0:
            return
        with self._session() as s:
            if total <= 50_000:
                s.execute_write(lambda tx: tx.run("MATCH (n) DETACH DELETE n").consume())
            else:  # CALL ... IN TRANSACTIONS needs an auto-commit transaction
                s.run("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()

    # -- reading ---------------------------------------------------------------------------
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        try:
            with self._session(write=write) as s:
                result = s.run(cypher, dict(params or {}))
                return [{k: _plain(v) for k, v in rec.items()} for rec in result]
        except Neo4jError as exc:
            code = exc.code or ""
            msg = _one_line(exc.message or exc)
            if not write and (code.endswith("AccessMode") or "read access mode" in msg.lower()):
                raise WriteRefused(
                    "query refused: it writes to the graph and the Cypher passthrough is read-only; "
                    "pass --write to allow it"
                ) from None
            raise StoreError(f"Cypher error: {msg}") from None
        except ServiceUnavailable as exc:
            raise StoreError(f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}") from None

    def counts(self) -> dict[str, dict[str, int]]:
        # each branch is answered from Neo4j's count store, not by scanning
        parts = [f"MATCH (n:{label}) RETURN 'n' AS k, '{label}' AS name, count(n) AS c" for label in NODE_TYPES]
        parts += [f"MATCH ()-[e:{t}]->() RETURN 'e' AS k, '{t}' AS name, count(e) AS c" for t in REL_TYPES]
        got = {(r["k"], r["name"]): r["c"] for r in self._read(" UNION ALL ".join(parts))}
        return {
            "nodes": {label: got.get(("n", label), 0) for label in NODE_TYPES},
            "edges": {t: got.get(("e", t), 0) for t in REL_TYPES},
        }

    @staticmethod
    def _node_row(label: str, props: Mapping[str, Any]) -> dict[str, Any]:
        """Stored properties -> a row with every declared column (None when absent)."""
        row = {"id": props.get("id"), "sources": list(props.get("sources") or [])}
        row.update({c: props.get(c) for c in NODE_TYPES[label].properties})
        return row

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if label not in NODE_TYPES:
            raise StoreError(f"unknown node label {label!r}")
        ids = list(dict.fromkeys(ids))
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), LOOKUP_CHUNK):
            for rec in self._read(
                f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN properties(n) AS p",
                {"ids": ids[i : i + LOOKUP_CHUNK]},
            ):
                out[rec["p"]["id"]] = self._node_row(label, rec["p"])
        return out

    def iter_nodes(self, label: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        """Keyset pages in ``id`` order (the constraint's index serves the order)."""
        if label not in NODE_TYPES:
            raise StoreError(f"unknown node label {label!r}")
        after = None
        while True:
            where = "WHERE n.id > $after" if after is not None else "WHERE n.id IS NOT NULL"
            page = self._read(
                f"MATCH (n:{label}) {where} RETURN properties(n) AS p ORDER BY n.id LIMIT $n",
                {"after": after, "n": batch_size},
            )
            for rec in page:
                yield self._node_row(label, rec["p"])
            if len(page) < batch_size:
                return
            after = page[-1]["p"]["id"]

    def iter_edges(self, rel_type: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        """One streaming result, pulled from the server ``batch_size`` records at a time."""
        if rel_type not in REL_TYPES:
            raise StoreError(f"unknown relationship type {rel_type!r}")
        rel = REL_TYPES[rel_type]
        cypher = (
            f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) "
            "RETURN a.id AS src, b.id AS dst, properties(e) AS p"
        )
        with self._session(write=False, fetch_size=batch_size) as s:
            for rec in s.run(cypher):
                p = rec["p"]
                row = {"src": rec["src"], "dst": rec["dst"], "sources": list(p.get("sources") or [])}
                row.update({c: p.get(c) for c in rel.properties})
                yield row

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        types = neighbourhood_types(rel_types, direction)
        held = self._labels_of(list(dict.fromkeys(seeds)))  # id -> label
        frontier = dict(held)
        for _ in range(hops):
            if not frontier:
                break
            found = self._expand(frontier, types, direction, set(held), limit)
            held.update(found)
            frontier = found
        g = nx.MultiDiGraph()
        by_label: dict[str, list[str]] = {}
        for nid, label in held.items():
            by_label.setdefault(label, []).append(nid)
        for label, ids in by_label.items():
            for nid, row in self.get_nodes(label, ids).items():
                g.add_node(nid, label=label, **{k: v for k, v in row.items() if v is not None})
        self._add_edges_among(g, by_label, types)
        if not induced:  # keep the edges a walk of <= hops steps traverses
            outer = set(frontier)
            g.remove_edges_from([(u, v, k) for u, v, k in g.edges(keys=True) if u in outer and v in outer])
        return g

    def _labels_of(self, ids: Sequence[str]) -> dict[str, str]:
        """Which label each existing id has (ids are unique across labels by construction)."""
        if not ids:
            return {}
        branches = " UNION ALL ".join(
            f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id AS id, '{label}' AS label" for label in NODE_TYPES
        )
        found = {r["id"]: r["label"] for r in self._read(branches, {"ids": list(ids)})}
        return {i: found[i] for i in ids if i in found}

    def _expand(
        self, frontier: Mapping[str, str], types: Sequence[str], direction: str, seen: set[str], limit: int | None
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
        return {r["id"]: r["label"] for r in self._read(cypher, params)}

    def _add_edges_among(self, g: nx.MultiDiGraph, by_label: Mapping[str, list[str]], types: Sequence[str]) -> None:
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
            for rec in self._read(cypher, {"a": by_label[src], "b": by_label[dst]}):
                g.add_edge(rec["src"], rec["dst"], key=rec["t"], type=rec["t"], **rec["p"])

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        driver = getattr(self, "_driver", None)
        if driver is not None:
            driver.close()
            self._driver = None
