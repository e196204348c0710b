"""The server backend: Neo4j 5 through the official ``neo4j`` driver (Bolt).

Owns :class:`Neo4jStore`, an object composed of parts that each have one job: a
:class:`~eventkg.graphstore.neo4j.connect.Connection` (sessions, read-only queries, one-line
connection errors; opening it creates the schema, :mod:`eventkg.graphstore.neo4j.schema`), a
:class:`~eventkg.graphstore.neo4j.writer.BatchWriter` (which rows are known new, the bulk
session, bounded retried transactions) and the read functions of
:mod:`eventkg.graphstore.neo4j.reads`. The store itself keeps the contract's entry points, the
ingest marks and each source's ingest folder (nodes labelled :data:`INGEST_MARK` and
:data:`INGEST_ORIGIN`, outside the data model: counts, stats and exports read only the model's
labels), ``clear`` (which removes them too) and the Cypher passthrough. Invariants: a batch of
at most ``transactions.TX_ROWS`` rows and ``TX_BYTES`` estimated bytes lands whole or not at all
(a bigger one in several transactions, see :mod:`eventkg.graphstore.neo4j.transactions`); read-only Cypher runs in a READ access-mode session,
so Neo4j itself refuses writes; every failure is a one-line :class:`StoreError`. Install
``neo4j-rust-ext`` beside the driver: it packs Bolt messages faster than the pure-Python code.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import networkx as nx
from neo4j.exceptions import Neo4jError, ServiceUnavailable

from eventkg.graphstore.base import PAGE_ROWS, Batch, GraphStore, WriteResult, validate_batch
from eventkg.graphstore.errors import StoreError, WriteRefused
from eventkg.graphstore.neo4j import reads
from eventkg.graphstore.neo4j.connect import Connection, connect, one_line
from eventkg.graphstore.neo4j.transactions import TX_BYTES, TX_ROWS, Limits
from eventkg.graphstore.neo4j.typed_parts import typed_batch
from eventkg.graphstore.neo4j.upsert import CHUNK
from eventkg.graphstore.neo4j.writer import BatchWriter
from eventkg.graphstore.rows import EdgeRow, NodeRow

__all__ = ["INGEST_MARK", "INGEST_ORIGIN", "Neo4jStore"]

#: the label of the nodes that record unfinished ingests (not part of the data model)
INGEST_MARK = "EventKGIngest"
#: the label of the nodes that record the folder each source was last ingested from (not part of the data model)
INGEST_ORIGIN = "EventKGOrigin"
#: at most this many nodes are deleted by ``clear`` in one transaction; more go in batches of :data:`CLEAR_BATCH`
CLEAR_AT_ONCE = 50_000
CLEAR_BATCH = 10_000


class Neo4jStore(GraphStore):
    """A Neo4j 5 database holding the eventkg graph.

    ``chunk_size`` rows go in one statement; ``tx_rows`` and ``tx_bytes`` bound one transaction.
    """

    def __init__(self, url: str, *, chunk_size: int = CHUNK, tx_rows: int = TX_ROWS, tx_bytes: int = TX_BYTES) -> None:
        self._conn: Connection = connect(url)
        self.url = self._conn.url
        self._writer = BatchWriter(self._conn, Limits(rows=tx_rows, bytes=tx_bytes, chunk=chunk_size))

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def bulk_load(self) -> Iterator[Neo4jStore]:
        """A bulk session: the store assumes it is the only writer (nobody else adds or deletes nodes).

        A label/type that is empty when the session first writes to it gets a key set
        (``eventkg.graphstore.keyset``: fingerprints of the keys this session wrote); rows it
        reports absent are CREATEd without asking the server which exist. Labels/types
        that held rows before use the exact lookup path, as outside a session. The internal
        ids of the nodes the session CREATEd or looked up are kept (``node_ids``), so later
        batches' new edges find their ends by id; a deleted node's id may be reused by Neo4j,
        hence the single-writer assumption (``clear()`` and ``query(write=True)`` drop the
        ids). Every batch is still written when handed over; nothing is held back.
        """
        with self._writer.bulk_session():
            yield self

    def write_batch(self, batch: Batch) -> WriteResult:
        """Upsert a batch: one transaction, or several when it is big (see the module docstring)."""
        validate_batch(batch)
        typed = typed_batch(batch)
        if not typed:
            return WriteResult()
        self._wrote = True  # a big batch goes in several transactions: one may land before an error
        return self._writer.write(typed)

    def unfinished_ingests(self) -> list[str]:
        rows = self._conn.read(f"MATCH (m:{INGEST_MARK}) RETURN m.what AS what ORDER BY m.started, m.what")
        return [r["what"] for r in rows]

    def _keep_marks(self, marks: list[str]) -> None:
        with self._conn.session() as s:
            s.execute_write(lambda tx: tx.run(
                f"MATCH (m:{INGEST_MARK}) WHERE NOT m.what IN $marks DELETE m "
                f"WITH count(*) AS gone UNWIND $marks AS what MERGE (m:{INGEST_MARK} {{what: what}}) "
                "ON CREATE SET m.started = datetime()", marks=marks).consume())

    def ingest_origins(self) -> dict[str, str]:
        rows = self._conn.read(f"MATCH (o:{INGEST_ORIGIN}) RETURN o.source AS source, o.folder AS folder")
        return {r["source"]: r["folder"] for r in rows}

    def _keep_origins(self, origins: dict[str, str]) -> None:
        pairs = [{"source": k, "folder": v} for k, v in origins.items()]
        with self._conn.session() as s:
            s.execute_write(lambda tx: tx.run(
                f"MATCH (o:{INGEST_ORIGIN}) DELETE o WITH count(*) AS gone "
                f"UNWIND $pairs AS p CREATE (:{INGEST_ORIGIN} {{source: p.source, folder: p.folder}})",
                pairs=pairs).consume())

    def clear(self) -> None:
        """Delete all nodes and edges: one transaction when small, else in batches."""
        self._writer.forget()  # deleted nodes' ids are reused by Neo4j
        total = self._conn.read("MATCH (n) RETURN count(n) AS c")[0]["c"]
        if total == 0:
            return
        with self._conn.session() as s:
            if total <= CLEAR_AT_ONCE:
                s.execute_write(lambda tx: tx.run("MATCH (n) DETACH DELETE n").consume())
            else:  # CALL ... IN TRANSACTIONS needs an auto-commit transaction
                s.run(f"MATCH (n) CALL {{ WITH n DETACH DELETE n }} IN TRANSACTIONS OF {CLEAR_BATCH} ROWS").consume()

    # -- reading ---------------------------------------------------------------------------
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        if write:
            # a raw write may add keys the session's key sets do not know, or delete nodes whose ids are then reused
            self._writer.forget()
        try:
            with self._conn.session(write=write) as s:
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
            raise StoreError(self._conn.unreachable(exc)) from None

    def counts(self) -> dict[str, dict[str, int]]:
        return reads.counts(self._conn.read)

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, NodeRow]:
        return reads.get_nodes(self._conn.read, label, ids)

    def iter_nodes(self, label: str, page_size: int = PAGE_ROWS) -> Iterator[NodeRow]:
        return reads.iter_nodes(self._conn.read, label, page_size)

    def iter_edges(self, rel_type: str, page_size: int = PAGE_ROWS) -> Iterator[EdgeRow]:
        return reads.iter_edges(self._conn, rel_type, page_size)

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        return reads.neighbourhood(self._conn.read, seeds, hops, rel_types, direction, limit, induced)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        self._conn.close()
