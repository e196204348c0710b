"""Bounded write transactions: a batch's parts cut into transactions, each committed with retries.

Why: Neo4j holds a transaction's whole state on its heap and refuses one past
``dbms.memory.transaction.total.max`` (a share of the heap), so a loader's batch cannot be one
transaction. Owns the cut (:func:`plan`: at most :attr:`Limits.rows` rows and :attr:`Limits.bytes`
estimated bytes per transaction, :data:`TX_ROWS` and :data:`TX_BYTES` by default, nodes before
edges; a row bigger than the byte bound goes alone), what one transaction runs (:func:`write_tx`)
and committing it (:class:`Transactions`). Invariants: a transaction lands whole or not at all;
a failure names how many of the batch's rows earlier transactions wrote (every write is an upsert,
so writing the batch again completes it); transient errors are retried for up to
:data:`RETRY_SECONDS`, a retry looking every row up so a commit whose outcome was lost is never
applied twice; a transaction the server refuses for want of memory is retried in halves, down to
one row, and a single row too big is a one-line error naming it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import neo4j
import numpy as np
from neo4j.exceptions import DriverError, IncompleteCommit, Neo4jError, ServiceUnavailable, SessionExpired

from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.neo4j.connect import Connection, one_line
from eventkg.graphstore.neo4j.node_ids import NodeIds, TxIds
from eventkg.graphstore.neo4j.pair_edges import PairPart, TxPart, create_pairs
from eventkg.graphstore.neo4j.upsert import CHUNK, create_nodes, upsert

TX_ROWS = 20_000  # most rows per transaction
TX_BYTES = 16 << 20  # most estimated bytes per transaction (Neo4j's state is a few times this)
RETRY_SECONDS = 15.0  # how long transient errors are retried


@dataclass(frozen=True)
class Limits:
    """The bounds of one write transaction and the rows per statement inside it."""

    rows: int = TX_ROWS
    bytes: int = TX_BYTES
    chunk: int = CHUNK


def plan(parts: Sequence[TxPart], tx_rows: int = TX_ROWS, tx_bytes: int = TX_BYTES) -> list[list[TxPart]]:
    """Cut the parts (in order) into transactions of <= ``tx_rows`` rows and <= ``tx_bytes`` bytes."""
    txs: list[list[TxPart]] = []
    current: list[TxPart] = []
    rows = size = 0
    for part in parts:
        start = 0
        cum = np.cumsum(part.row_bytes)
        while start < len(part):
            room_rows = tx_rows - rows
            base = cum[start - 1] if start else 0
            fits = int(np.searchsorted(cum, base + (tx_bytes - size), side="right")) - start
            take = min(room_rows, fits, len(part) - start)
            if take <= 0:
                if current:  # this transaction is full: start the next one
                    txs.append(current)
                    current, rows, size = [], 0, 0
                    continue
                take = 1  # one row bigger than a whole transaction goes alone
            current.append(part.slice(start, start + take) if take < len(part) else part)
            rows += take
            size += int(cum[start + take - 1] - base)
            start += take
    if current:
        txs.append(current)
    return txs


def halves(parts: Sequence[TxPart]) -> Iterator[list[TxPart]]:
    """A transaction's parts split into two of about half the rows each (for a retry in smaller pieces)."""
    half = count_rows(parts) // 2
    first: list[TxPart] = []
    second: list[TxPart] = []
    seen = 0
    for part in parts:
        if seen >= half:
            second.append(part)
        elif seen + len(part) <= half:
            first.append(part)
        else:
            cut = half - seen
            first.append(part.slice(0, cut))
            second.append(part.slice(cut, len(part)))
        seen += len(part)
    yield first
    yield second


def count_rows(parts: Sequence[TxPart]) -> int:
    return sum(map(len, parts))


def write_tx(tx: neo4j.Transaction, parts: Sequence[TxPart], chunk_size: int, *, blind: bool,
             ids: TxIds) -> WriteResult:
    """Nodes, then edges: rows known new are CREATEd (new nodes' ids go to ``ids``, new edges
    find their ends by id a node pair at a time, :mod:`eventkg.graphstore.neo4j.pair_edges`); the
    others, and every row when not ``blind`` (a retry), are upserted
    (:mod:`eventkg.graphstore.neo4j.upsert`)."""
    result = WriteResult()
    for part in parts:
        if part.new and blind and isinstance(part, PairPart):
            result.add(create_pairs(tx, part, chunk_size, ids))
        elif part.new and blind and not part.is_edge:
            created = create_nodes(tx, part, chunk_size, ids)
            result.add(WriteResult({part.name: created}, {part.name: 0}))
        else:
            for typed in part.by_type() if isinstance(part, PairPart) else [part]:
                result.add(upsert(tx, typed.name, typed.dicts(), chunk_size))
    return result


def _out_of_memory(exc: BaseException) -> bool:
    """Neo4j refused a transaction for want of (transaction) memory."""
    code = getattr(exc, "code", None) or ""
    return "MemoryPoolOutOfMemoryError" in code or "OutOfMemory" in code


class Transactions:
    """Commits a batch's parts in bounded transactions through one connection."""

    def __init__(self, conn: Connection, limits: Limits) -> None:
        self._conn = conn
        self._limits = limits

    def commit_all(self, session: neo4j.Session, parts: Sequence[TxPart],
                   ids: dict[str, NodeIds]) -> Iterator[tuple[list[TxPart], WriteResult]]:
        """Each transaction's parts and result once it committed; the node ids a transaction
        learnt join ``ids`` when it commits. A failure raises a one-line :class:`StoreError`
        saying how many of the batch's rows landed before it."""
        total, done = count_rows(parts), 0
        for tx_parts in plan(parts, self._limits.rows, self._limits.bytes):
            try:
                out = self._run_tx(session, tx_parts, ids)
            except StoreError as exc:
                if done:
                    raise type(exc)(f"{exc}{_landed(done, total)}") from None
                raise
            except (Neo4jError, DriverError) as exc:
                if isinstance(exc, ServiceUnavailable | SessionExpired):
                    msg = self._conn.unreachable(exc)
                else:
                    msg = f"writing to Neo4j at {self._conn.url}: {one_line(getattr(exc, 'message', None) or exc)}"
                raise StoreError(f"{msg}{_landed(done, total)}") from None
            yield tx_parts, out
            done += count_rows(tx_parts)

    def _run_tx(self, session: neo4j.Session, parts: list[TxPart], ids: dict[str, NodeIds]) -> WriteResult:
        """One transaction, retried on transient errors; split in halves when Neo4j runs out of
        transaction memory (a single row that still does not fit is a one-line StoreError).

        A retry (attempt > 1) looks every row up instead of CREATEing the rows known new: a
        commit whose outcome was lost may have landed, and the lookup makes the retry write
        nothing twice.
        """
        delay, deadline, attempt = 0.2, time.monotonic() + RETRY_SECONDS, 0
        while True:
            attempt += 1
            try:
                tx_ids = TxIds(ids)
                with session.begin_transaction() as tx:
                    out = write_tx(tx, parts, self._limits.chunk, blind=attempt == 1, ids=tx_ids)
                    tx.commit()
                tx_ids.commit()
                return out
            except (Neo4jError, DriverError) as exc:
                if _out_of_memory(exc):
                    return self._in_halves(session, parts, ids, exc)
                retry = isinstance(exc, IncompleteCommit) or (hasattr(exc, "is_retryable") and exc.is_retryable())
                if not retry or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay *= 2

    def _in_halves(self, session: neo4j.Session, parts: list[TxPart], ids: dict[str, NodeIds],
                   exc: Neo4jError | DriverError) -> WriteResult:
        """The transaction the server refused for want of memory, as two of half the rows each."""
        if count_rows(parts) > 1:
            out = WriteResult()
            for half in halves(parts):
                out.add(self._run_tx(session, half, ids))
            return out
        part = parts[0]
        raise StoreError(
            f"writing to Neo4j at {self._conn.url}: {part.name} {part.key_of(0)} alone exceeds the server's "
            f"transaction memory (~{int(part.row_bytes[0]):,} bytes; the server says: "
            f"{one_line(getattr(exc, 'message', None) or exc)})"
        ) from None


def _landed(done: int, total: int) -> str:
    """What an error adds when earlier transactions of the batch committed."""
    if not done:
        return ""
    return (f" ({done:,} of this batch's {total:,} rows were written in earlier transactions; "
            "writing the batch again completes it)")
