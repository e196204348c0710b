"""How a batch reaches Neo4j: which rows are known new, bounded transactions, retries.

* Transactions are bounded (:mod:`eventkg.graphstore.neo4j.typed_parts`): Neo4j holds a
  transaction's state on its heap and refuses one past ``dbms.memory.transaction.total.max``
  (70% of a 512 MB default heap). **A batch of at most ``TX_ROWS`` rows (20,000) and
  ``TX_BYTES`` estimated bytes (16 MB) is one transaction: it lands whole or not at all.** A
  bigger batch is written in several such transactions, nodes before edges; if one fails, the
  ones before it stay committed and the one-line error says how many rows landed. Every write
  is an upsert, so writing the batch again completes it and changes nothing that landed. A
  transaction that still runs out of server memory is retried in halves, down to one row; a
  single row too big for the server is a one-line error naming it.
* Transient errors (a leader switch, a dropped connection, a deadlock) are retried for up to
  :data:`RETRY_SECONDS`. A retried transaction looks every row up before writing, so a commit
  whose outcome was lost is never applied twice.
* Known new: a label/type empty when the batch starts, or, inside ``bulk_load()``, empty when
  the session first wrote to it (a :class:`~eventkg.graphstore.keyset.KeySet` of what the
  session wrote answers for it then; the session assumes no other writer).
* New edges of the same label pair and properties go as one part a node pair at a time,
  their ends found by internal node id (:mod:`eventkg.graphstore.neo4j.pairs`); the ids a
  transaction learns join the batch's (or the ``bulk_load()`` session's) map only once it
  commits (:mod:`eventkg.graphstore.neo4j.node_ids`).

:class:`BoundedWrites` is a mixin of :class:`~eventkg.graphstore.neo4j.store.Neo4jStore`; it
relies on the store's ``url``, ``_address``, ``_chunk``, ``_tx_rows``, ``_tx_bytes`` and
``_keys``. What one transaction runs is in :mod:`eventkg.graphstore.neo4j.upsert`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import neo4j
import numpy as np
from neo4j.exceptions import DriverError, IncompleteCommit, Neo4jError, ServiceUnavailable, SessionExpired

from eventkg.graphstore.base import StoreError, WriteResult
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.neo4j import typed_parts as nb
from eventkg.graphstore.neo4j.connect import one_line, unreachable
from eventkg.graphstore.neo4j.node_ids import NodeIds, TxIds
from eventkg.graphstore.neo4j.pairs import PairPart, pair_parts
from eventkg.graphstore.neo4j.upsert import empty_kinds, write_tx

RETRY_SECONDS = 15.0  # how long transient errors are retried


def _out_of_memory(exc: BaseException) -> bool:
    """Neo4j refused a transaction for want of (transaction) memory."""
    code = getattr(exc, "code", None) or ""
    return "MemoryPoolOutOfMemoryError" in code or "OutOfMemory" in code


class BoundedWrites:
    """Writing typed parts of a batch in bounded, retried transactions (see the module docstring)."""

    url: str
    _address: tuple[str, int]
    _chunk: int
    _tx_rows: int
    _tx_bytes: int
    _keys: dict[str, KeySet | None] | None  # inside bulk_load(): a key set per label/type, None outside
    _ids: dict[str, NodeIds] | None  # inside bulk_load(): node ids per label (neo4j_nodeids), None outside

    def _split_known(self, session: neo4j.Session, typed: Mapping[str, tuple]) -> list[nb.Part | PairPart]:
        """Each name's rows as a part of rows known to be new and a part to look up (nodes first;
        the new edges of each label pair merged into one PairPart)."""
        empty: set[str] = set()
        unknown = [n for n in typed if self._keys is None or n not in self._keys]
        if unknown:
            empty = session.execute_read(empty_kinds, [n for n in unknown if n in NODE_TYPES],
                                         [n for n in unknown if n in REL_TYPES])
            if self._keys is not None:
                for name in unknown:
                    self._keys[name] = KeySet() if name in empty else None
        parts = []
        for name, (table, (h1, h2)) in typed.items():
            sizes = nb.row_bytes(table)
            keys = self._keys.get(name) if self._keys is not None else None
            if keys is not None:
                present, unsure = keys.lookup(h1, h2)
                new = ~(present | unsure)
            else:
                new = np.full(len(h1), name in empty)
            if new.all():
                parts.append(nb.Part(name, table, h1, h2, sizes, new=True))
                continue
            for flag, mask in ((True, new), (False, ~new)):
                if mask.any():
                    idx = np.flatnonzero(mask)
                    parts.append(nb.Part(name, table.take(idx), h1[idx], h2[idx], sizes[idx], new=flag))
        parts = pair_parts(parts)
        parts.sort(key=lambda p: p.is_edge)  # nodes before edges (stable)
        return parts

    def _write_parts(self, session: neo4j.Session, parts: list[nb.Part | PairPart]) -> WriteResult:
        """Write the parts in bounded transactions; a failure names what already landed.

        Node ids learnt live for the ``bulk_load()`` session, else for this batch only."""
        result = WriteResult()
        ids = self._ids if self._ids is not None else {}
        txs = nb.plan(parts, self._tx_rows, self._tx_bytes)
        total = nb.count_rows(parts)
        done = 0
        committed: list[nb.Part] = []
        try:
            for tx_parts in txs:
                result.add(self._commit(session, tx_parts, done, total, ids))
                done += nb.count_rows(tx_parts)
                committed += tx_parts
        finally:
            self._remember(committed)
        return result

    def _remember(self, parts: list[nb.Part | PairPart]) -> None:
        """Add the keys of committed rows known new to the session's key sets (once per batch)."""
        if self._keys is None:
            return
        grouped: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for part in parts:
            keys = part.keys_by_type() if isinstance(part, PairPart) else [(part.name, part.h1, part.h2)]
            for name, h1, h2 in keys:
                if part.new and self._keys.get(name) is not None:
                    grouped.setdefault(name, []).append((h1, h2))
        for name, group in grouped.items():
            self._keys[name].add(np.concatenate([h1 for h1, _ in group]), np.concatenate([h2 for _, h2 in group]))

    def _commit(self, session: neo4j.Session, tx_parts: list[nb.Part | PairPart], done: int, total: int,
                ids: dict[str, NodeIds]) -> WriteResult:
        """One bounded transaction of a batch; errors say how much of the batch landed before."""
        try:
            return self._run_tx(session, tx_parts, ids)
        except StoreError as exc:
            if done:
                raise type(exc)(f"{exc} ({done:,} of this batch's {total:,} rows were written in earlier "
                                "transactions; writing the batch again completes it)") from None
            raise
        except (Neo4jError, DriverError) as exc:
            if isinstance(exc, ServiceUnavailable | SessionExpired):
                msg = unreachable(self.url, self._address, exc)
            else:
                msg = f"writing to Neo4j at {self.url}: {one_line(getattr(exc, 'message', None) or exc)}"
            if done:
                msg += (f" ({done:,} of this batch's {total:,} rows were written in earlier transactions; "
                        "writing the batch again completes it)")
            raise StoreError(msg) from None

    def _run_tx(self, session: neo4j.Session, parts: list[nb.Part | PairPart], ids: dict[str, NodeIds]) -> WriteResult:
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
                    out = write_tx(tx, parts, self._chunk, blind=attempt == 1, ids=tx_ids)
                    tx.commit()
                tx_ids.commit()
                return out
            except (Neo4jError, DriverError) as exc:
                if _out_of_memory(exc):
                    if nb.count_rows(parts) > 1:
                        out = WriteResult()
                        for half in nb.halves(parts):
                            out.add(self._run_tx(session, half, ids))
                        return out
                    part = parts[0]
                    raise StoreError(
                        f"writing to Neo4j at {self.url}: {part.name} {part.key_of(0)} alone exceeds the server's "
                        f"transaction memory (~{int(part.row_bytes[0]):,} bytes; the server says: "
                        f"{one_line(getattr(exc, 'message', None) or exc)})"
                    ) from None
                retry = isinstance(exc, IncompleteCommit) or (hasattr(exc, "is_retryable") and exc.is_retryable())
                if not retry or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay *= 2
