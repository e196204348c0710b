"""Neo4j's internal node ids of the nodes a writer knows, so edges find their ends by id.

Why: an edge CREATE that finds its ends with ``MATCH (a:Event {id: r[0]})`` does an index
seek on a string per end; ``MATCH (a) WHERE id(a) = r[0]`` is a NodeByIdSeek, a direct record
read (figures: ``docs/performance.md``, "Figures moved from docstrings (Neo4j)").

A :class:`NodeIds` maps node-key fingerprints (:mod:`eventkg.graphstore.keyset`) to the node
id, in sorted numpy arrays: no Python object per node. It is filled from the ids that CREATE returns and from batched lookups of the ends it
does not know (one row per distinct id). Internal ids are only stable while nothing deletes
nodes (Neo4j reuses a deleted node's id): a map lives for one batch, or for a
``bulk_load()`` session, which assumes no other writer; ``clear()`` and a raw write through
``query(write=True)`` drop it.

:class:`TxIds` is one transaction's view: ids learnt inside it are kept apart and join the
session's map only when the transaction commits (a rolled-back CREATE frees its ids).
"""

from __future__ import annotations

import neo4j
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.keyset import fingerprints, search

MISSING = -1  # an id no node has


class NodeIds:
    """Node-key fingerprints -> Neo4j node id, sorted by the first hash."""

    def __init__(self) -> None:
        self.h1 = np.empty(0, np.uint64)
        self.h2 = np.empty(0, np.uint64)
        self.ids = np.empty(0, np.int64)

    def __len__(self) -> int:
        return len(self.h1)

    def find(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """The node id of each key, :data:`MISSING` where the map does not hold it for sure."""
        out = np.full(len(h1), MISSING, np.int64)
        if not len(self.h1) or not len(h1):
            return out
        pos = np.minimum(search(self.h1, h1), len(self.h1) - 1)
        hit = (self.h1[pos] == h1) & (self.h2[pos] == h2)
        out[hit] = self.ids[pos[hit]]
        return out

    def add(self, h1: np.ndarray, h2: np.ndarray, ids: np.ndarray) -> None:
        if not len(h1):
            return
        order = np.argsort(h1, kind="stable")
        h1, h2, ids = h1[order], h2[order], np.asarray(ids, np.int64)[order]
        pos = search(self.h1, h1)
        self.h1 = np.insert(self.h1, pos, h1)
        self.h2 = np.insert(self.h2, pos, h2)
        self.ids = np.insert(self.ids, pos, ids)

    def merge(self, other: NodeIds) -> None:
        self.add(other.h1, other.h2, other.ids)


class TxIds:
    """Node ids as one transaction sees them: the session's map plus what this transaction learnt."""

    def __init__(self, session_ids: dict[str, NodeIds]) -> None:
        self._session = session_ids
        self._new: dict[str, NodeIds] = {}

    def learn(self, label: str, h1: np.ndarray, h2: np.ndarray, ids: np.ndarray) -> None:
        """Ids this transaction learnt (nodes it CREATEd, or looked up), by key fingerprint."""
        self._new.setdefault(label, NodeIds()).add(h1, h2, ids)

    def commit(self) -> None:
        """The transaction committed: what it learnt joins the session's map."""
        for label, ids in self._new.items():
            self._session.setdefault(label, NodeIds()).merge(ids)
        self._new = {}

    def resolve(self, tx: neo4j.Transaction, label: str, keys: pa.Array) -> np.ndarray:
        """The node id of each string key of ``label`` (:data:`MISSING` where no such node is stored).

        Keys the maps do not hold are looked up in one statement (each distinct key once)
        and remembered for the rest of the transaction.
        """
        h1, h2 = fingerprints(keys)
        out = self._session.get(label, NodeIds()).find(h1, h2)
        unknown = out == MISSING
        if unknown.any():
            out[unknown] = self._new.get(label, NodeIds()).find(h1[unknown], h2[unknown])
            unknown = out == MISSING
        if not unknown.any():
            return out
        rows = np.flatnonzero(unknown)
        wanted = pc.unique(keys.take(pa.array(rows)))
        q = f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN i AS k, id(n) AS n"
        found = {rec[0]: rec[1] for rec in tx.run(q, ids=wanted.to_pylist())}
        if found:
            fk = pa.array(list(found), pa.string())
            f1, f2 = fingerprints(fk)
            self.learn(label, f1, f2, np.fromiter(found.values(), np.int64, len(found)))
            out[rows] = self._new[label].find(h1[rows], h2[rows])
        return out
