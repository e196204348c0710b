"""The store's write part: which rows of a batch are known new, and what a bulk session remembers.

Owns :class:`BatchWriter`, which the store holds: it splits each label/type's typed rows
(:mod:`eventkg.graphstore.neo4j.typed_parts`) into rows known to be new, CREATEd without asking, and
rows to look up, and hands them to bounded transactions
(:mod:`eventkg.graphstore.neo4j.transactions`). Known new: a label/type empty when the batch
starts, or, inside a bulk session, empty when the session first wrote to it (a
:class:`~eventkg.graphstore.keyset.KeySet` of what the session wrote answers for it then). The
internal ids of the nodes written or looked up (:mod:`eventkg.graphstore.neo4j.node_ids`) live for
one batch, or for the session, so later edges find their ends by id. Invariant: the session
assumes it is the only writer; whatever may add keys it does not know, or delete nodes whose
ids Neo4j reuses (``clear()``, a raw write), calls :meth:`BatchWriter.forget`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import neo4j
import numpy as np
from neo4j.exceptions import Neo4jError, ServiceUnavailable

from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.neo4j.connect import Connection, one_line
from eventkg.graphstore.neo4j.node_ids import NodeIds
from eventkg.graphstore.neo4j.pair_edges import PairPart, TxPart, pair_parts
from eventkg.graphstore.neo4j.transactions import Limits, Transactions
from eventkg.graphstore.neo4j.typed_parts import Part, Typed, row_bytes
from eventkg.graphstore.neo4j.upsert import empty_kinds


class BatchWriter:
    """Writes typed batches through one connection; remembers what a bulk session wrote."""

    def __init__(self, conn: Connection, limits: Limits) -> None:
        self._conn = conn
        self._txs = Transactions(conn, limits)
        self._keys: dict[str, KeySet | None] | None = None  # in a session: a key set per label/type (None: not empty)
        self._ids: dict[str, NodeIds] | None = None  # in a session: node ids per label

    @contextmanager
    def bulk_session(self) -> Iterator[None]:
        """A bulk session (nested: the outer one rules): key sets and node ids kept across batches."""
        if self._keys is not None:
            yield
            return
        self._keys, self._ids = {}, {}
        try:
            yield
        finally:
            self._keys = self._ids = None

    def forget(self) -> None:
        """Drop the session's key sets and node ids (another write may have changed the store)."""
        if self._keys is not None:
            self._keys, self._ids = {}, {}

    def write(self, typed: Mapping[str, Typed]) -> WriteResult:
        """Upsert the typed rows (labels before types) in bounded transactions; errors are one line."""
        try:
            with self._conn.session() as session:
                return self._write_parts(session, self._split_known(session, typed))
        except StoreError:
            raise
        except ServiceUnavailable as exc:
            raise StoreError(self._conn.unreachable(exc)) from None
        except Neo4jError as exc:
            raise StoreError(f"writing to Neo4j at {self._conn.url}: {one_line(exc.message or exc)}") from None

    def _split_known(self, session: neo4j.Session, typed: Mapping[str, Typed]) -> list[TxPart]:
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
            sizes = row_bytes(table)
            keys = self._keys.get(name) if self._keys is not None else None
            if keys is not None:
                present, unsure = keys.lookup(h1, h2)
                new = ~(present | unsure)
            else:
                new = np.full(len(h1), name in empty)
            if new.all():
                parts.append(Part(name, table, h1, h2, sizes, new=True))
                continue
            for flag, mask in ((True, new), (False, ~new)):
                if mask.any():
                    idx = np.flatnonzero(mask)
                    parts.append(Part(name, table.take(idx), h1[idx], h2[idx], sizes[idx], new=flag))
        out = pair_parts(parts)
        out.sort(key=lambda p: p.is_edge)  # nodes before edges (stable)
        return out

    def _write_parts(self, session: neo4j.Session, parts: list[TxPart]) -> WriteResult:
        """Write the parts in bounded transactions; the keys of what committed join the session's
        key sets even when a later transaction fails. Node ids learnt live for the session, else
        for this batch only."""
        result = WriteResult()
        ids = self._ids if self._ids is not None else {}
        committed: list[TxPart] = []
        try:
            for tx_parts, out in self._txs.commit_all(session, parts, ids):
                result.add(out)
                committed += tx_parts
        finally:
            self._remember(committed)
        return result

    def _remember(self, parts: list[TxPart]) -> None:
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
