"""The server backend: Neo4j 5 through the official ``neo4j`` driver (Bolt).

Why it looks the way it does:

* Transactions are bounded: **a batch of at most ``TX_ROWS`` rows (20,000) and ``TX_BYTES``
  estimated bytes (16 MB) is one transaction: it lands whole or not at all.** A bigger batch
  (a loader's 200,000-row batch) is written in several such transactions, nodes before edges;
  if one fails, the ones before it stay committed and the one-line error says how many rows
  landed. Every write is an upsert, so writing the batch again (or re-running the ingest)
  completes it and changes nothing that landed. Transient errors are retried for up to 15 s
  without applying a commit twice (:mod:`eventkg.graphstore.neo4j.writes`,
  :mod:`eventkg.graphstore.neo4j.typed_parts`).
* Rows and Arrow tables are typed and deduplicated as the embedded store does it
  (``eventkg.graphstore.tables``). Rows known to be new are CREATEd with their properties
  inline; the others are looked up, the new ones CREATEd, and only the changed ones replaced,
  so re-ingesting a file writes and counts nothing (:mod:`eventkg.graphstore.neo4j.upsert`).
  Known new: a label/type empty when the batch starts, or, inside ``bulk_load()``, empty
  when the session first wrote to it. New edges find their ends by internal node id (ids
  returned by CREATE or looked up once per node, kept for the batch or the ``bulk_load()``
  session) and are written a node pair at a time, every type between the two in one
  statement row (:mod:`eventkg.graphstore.neo4j.node_ids`, :mod:`eventkg.graphstore.neo4j.pairs`;
  ASER 100K/300K on 2 cores: 23.4 s against 39.4 s with string-id index seeks per edge).
* Read-only Cypher runs in a READ access-mode session, so Neo4j itself refuses writes
  (reads: :mod:`eventkg.graphstore.neo4j.reads`).
* Opening parses the URL and its credentials, verifies the connection and creates the
  uniqueness constraints and indexes (:mod:`eventkg.graphstore.neo4j.connect`,
  :mod:`eventkg.graphstore.neo4j.schema`); every failure is a one-line error.
* Install ``neo4j-rust-ext`` beside the driver: it packs Bolt messages several times
  faster than the pure-Python code, which dominates bulk writes.

This module holds the store object: opening and closing, the entry points of the write path,
``clear`` and the Cypher passthrough.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import neo4j
import networkx as nx
from neo4j.exceptions import Neo4jError, ServiceUnavailable

from eventkg.graphstore.base import Batch, GraphStore, StoreError, WriteRefused, WriteResult, validate_batch
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.neo4j import reads
from eventkg.graphstore.neo4j import typed_parts as nb
from eventkg.graphstore.neo4j.connect import connect, one_line, parse_url, unreachable
from eventkg.graphstore.neo4j.node_ids import NodeIds
from eventkg.graphstore.neo4j.schema import INDEXED, schema_statements
from eventkg.graphstore.neo4j.writes import BoundedWrites

__all__ = ["CHUNK", "INDEXED", "Neo4jStore", "TX_BYTES", "TX_ROWS", "parse_url", "schema_statements"]

CHUNK = 5_000  # rows per UNWIND statement
TX_ROWS, TX_BYTES = nb.TX_ROWS, nb.TX_BYTES  # bounds of one write transaction (see neo4j_batches)


#: the label of the nodes that record unfinished ingests (not part of the data model)
INGEST_MARK = "EventKGIngest"


class Neo4jStore(BoundedWrites, GraphStore):
    """A Neo4j 5 database holding the eventkg graph."""

    def __init__(self, url: str, *, chunk_size: int = CHUNK, tx_rows: int = TX_ROWS, tx_bytes: int = TX_BYTES) -> None:
        self._chunk = chunk_size
        self._tx_rows, self._tx_bytes = tx_rows, tx_bytes
        self._keys: dict[str, KeySet | None] | None = None  # inside bulk_load(): see there
        self._ids: dict[str, NodeIds] | None = None  # inside bulk_load(): node ids (neo4j_nodeids)
        conn = connect(url)
        self._driver: neo4j.Driver | None = conn.driver
        self._database, self.url, self._address = conn.database, conn.url, conn.address

    # -- low-level -------------------------------------------------------------------------
    def _session(self, *, write: bool = True, **kw: Any) -> neo4j.Session:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self._database, default_access_mode=mode, **kw)

    def _read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[neo4j.Record]:
        with self._session(write=False) as s:
            return list(s.run(cypher, dict(params or {})))

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def bulk_load(self) -> Iterator[Neo4jStore]:
        """A bulk session: the store assumes it is the only writer (nobody else adds or deletes nodes).

        A label/type that is empty when the session first writes to it gets a key set
        (``eventkg.graphstore.keyset``: fingerprints of the keys this session wrote); rows it
        reports absent are CREATEd without asking the server which exist. Labels/types
        that held rows before use the exact lookup path, as outside a session. The internal
        ids of the nodes the session CREATEd or looked up are kept (``neo4j_nodeids``), so
        later batches' new edges find their ends by id; a deleted node's id may be reused
        by Neo4j, hence the single-writer assumption (``clear()`` and ``query(write=True)``
        drop the ids). Every batch is still written when handed over; nothing is held back.
        """
        if self._keys is not None:  # nested: the outer session rules
            yield self
            return
        self._keys, self._ids = {}, {}
        try:
            yield self
        finally:
            self._keys = self._ids = None

    def write_batch(self, batch: Batch) -> WriteResult:
        """Upsert a batch: one transaction, or several when it is big (see the module docstring)."""
        validate_batch(batch)
        names = [*dict.fromkeys([*batch.nodes, *batch.node_tables]), *dict.fromkeys([*batch.edges, *batch.edge_tables])]
        sources = {**batch.nodes, **batch.edges}
        tables = {**batch.node_tables, **batch.edge_tables}
        typed = {}
        for name in names:
            rows, table = sources.get(name), tables.get(name)
            if rows or (table is not None and table.num_rows):
                typed[name] = nb.typed_table(name, rows, table)
        if not typed:
            return WriteResult()
        self._wrote = True  # a big batch goes in several transactions: one may land before an error
        try:
            with self._session() as session:
                parts = self._split_known(session, typed)
                return self._write_parts(session, parts)
        except StoreError:
            raise
        except ServiceUnavailable as exc:
            raise StoreError(unreachable(self.url, self._address, exc)) from None
        except Neo4jError as exc:
            raise StoreError(f"writing to Neo4j at {self.url}: {one_line(exc.message or exc)}") from None

    def unfinished_ingests(self) -> list[str]:
        rows = self._read(f"MATCH (m:{INGEST_MARK}) RETURN m.what AS what ORDER BY m.started, m.what")
        return [r["what"] for r in rows]

    def _keep_marks(self, marks: list[str]) -> None:
        with self._session() as s:
            s.execute_write(lambda tx: tx.run(
                f"MATCH (m:{INGEST_MARK}) WHERE NOT m.what IN $marks DELETE m "
                f"WITH count(*) AS gone UNWIND $marks AS what MERGE (m:{INGEST_MARK} {{what: what}}) "
                "ON CREATE SET m.started = datetime()", marks=marks).consume())

    def clear(self) -> None:
        """Delete all nodes and edges: one transaction when small, else in batches."""
        if self._keys is not None:
            self._keys, self._ids = {}, {}  # deleted nodes' ids are reused by Neo4j
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
        if write and self._keys is not None:
            # a raw write may add keys the session's key sets do not know, or delete nodes whose ids are then reused
            self._keys, self._ids = {}, {}
        try:
            with self._session(write=write) as s:
                result = s.run(cypher, dict(params or {}))
                return [{k: reads.plain(v) for k, v in rec.items()} for rec in result]
        except Neo4jError as exc:
            code = exc.code or ""
            msg = one_line(exc.message or exc)
            if not write and (code.endswith("AccessMode") or "read access mode" in msg.lower()):
                raise WriteRefused(
                    "query refused: it writes to the graph and the Cypher passthrough is read-only; "
                    "pass --write to allow it"
                ) from None
            raise StoreError(f"Cypher error: {msg}") from None
        except ServiceUnavailable as exc:
            raise StoreError(unreachable(self.url, self._address, exc)) from None

    def counts(self) -> dict[str, dict[str, int]]:
        return reads.counts(self._read)

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return reads.get_nodes(self._read, label, ids)

    def iter_nodes(self, label: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        return reads.iter_nodes(self._read, label, batch_size)

    def iter_edges(self, rel_type: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        return reads.iter_edges(self._driver, self._database, rel_type, batch_size)

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        return reads.neighbourhood(self._read, seeds, hops, rel_types, direction, limit, induced)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        driver = getattr(self, "_driver", None)
        if driver is not None:
            driver.close()
            self._driver = None
