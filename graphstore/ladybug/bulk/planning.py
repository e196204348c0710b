"""How a bulk session learns which rows of a batch it already knows, table by table.

:class:`SessionPlan` decides, the first time the session sees a table, how its keys are known:
a stored rel table's rows all wait for the end of the session (deferred), a big stored node
table's keys are asked of the engine batch by batch (looked up), a rel table that held no row is
held without a key set (unkeyed); every other table has a key set
(:class:`~eventkg.graphstore.ladybug.stored_keys.StoredKeys`).

Why: a key set of a stored table is built by a scan of it, which grows with the graph, not with
the rows sent. Invariant: what a session remembers of keys grows with what it is sent, not with
what the store holds: a store that holds a big graph is asked, not scanned, unless most of what
is sent is stored already (a re-run whose digests were lost builds the key sets it needs).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug.bulk.state import SessionState
from eventkg.graphstore.ladybug.engine import LOOKUP_CHUNK, count_rows, node_pool_bytes
from eventkg.graphstore.ladybug.stored_keys import Fingerprints
from eventkg.graphstore.ladybug.upsert import SCAN_MAX_NODES, existing_ids
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES


class SessionPlan:
    """Which tables of the session in ``state`` are deferred, looked up or held unkeyed; it
    changes ``state.deferred``, ``state.looked_up``, ``state.unkeyed`` and the buffer pool."""

    def __init__(self, state: SessionState) -> None:
        self._state = state

    def defers(self, name: str) -> bool:
        """True when every row of the rel table ``name`` waits for the end of this bulk session
        (upserted after the held rows) without a key set: the table held rows when the session
        first saw it, and no key set was built for it yet.

        Why: a key set of a stored rel table is built by a scan of the table, which grows with the
        graph, not with the rows sent (at 10M/30M, 61 s of a second file's ingest). At the end
        the waiting rows are checked by digest (a re-run after a crash sends the stored rows
        again: skipped); else the rows naming a node this session added are new by that alone, and
        only the others are looked up (:meth:`.WaitingRows._write_deferred`).
        """
        state = self._state
        if name in state.deferred:
            return True
        if state.spool is None or state.fresh or name not in REL_TYPES or name in state.keys or name in state.unkeyed:
            return False
        if not count_rows(state.database.conn, name):
            return False
        state.deferred.add(name)
        return True

    def looks_up(self, name: str) -> bool:
        """True when the node table ``name`` held more than ``SCAN_MAX_NODES`` nodes when this bulk
        session, which began on a non-empty store, first saw it, and has no key set: each batch's
        keys are then looked up in the session's own new keys and asked of the engine
        (:meth:`held_or_stored`, a keyed lookup of ~3 us per key) instead of scanning the table's
        keys once (which grows with the table, not with the rows sent).

        The engine answers those lookups from its buffer pool while the loader holds its own
        memory (its id map, the batches in flight), so the pool is cut to the share the node
        COPYs get then (``node_pool_bytes``) until the session writes (a re-run after SIGKILL at
        ASER 10M/30M went over the budget with the whole pool filled here; ``docs/performance.md``)."""
        state = self._state
        if name in state.looked_up:
            return True
        if state.spool is None or state.fresh or name not in NODE_TYPES or name in state.keys:
            return False
        if count_rows(state.database.conn, name) <= SCAN_MAX_NODES:
            return False
        state.looked_up.add(name)
        state.database.set_buffer_pool(min(state.database.pool_bytes, node_pool_bytes()))
        return True

    def session_keys(self, label: str) -> KeySet | None:
        """For a node table the session looks up (:meth:`looks_up`), the keys it holds new (what
        an endpoint check must not ask the engine about: they are not written yet); else None."""
        state = self._state
        return state.new_nodes.setdefault(label, KeySet()) if label in state.looked_up else None

    def held_or_stored(self, name: str, table: pa.Table, fps: Fingerprints) -> np.ndarray:
        """Mask of the rows of a looked-up node table whose key this session holds (or may: a
        shared first hash) or the engine stores."""
        state = self._state
        present, unsure = state.new_nodes.setdefault(name, KeySet()).lookup(*fps)
        known = present | unsure
        ask = np.flatnonzero(~known)
        if len(ask):
            ids = table.column("id").take(pa.array(ask))
            stored = existing_ids(state.database.conn, name, ids.to_pylist(), ["id"], chunk=LOOKUP_CHUNK).column(0)
            known[ask[pc.is_in(ids, value_set=stored).to_numpy(zero_copy_only=False)]] = True
        return known

    def holds_unkeyed(self, name: str, keys: KeySet | None) -> bool:
        """True when the rel table ``name`` is held without a key set: it held no row when this
        session first held rows of it (its key set, built then, was empty), so none of its rows
        can be stored and each repeated key is merged when the table is COPYed
        (:meth:`.HeldTables._merging_repeats`), counted as the upsert would have counted it.

        Why: a key set costs 16 B per key held for the whole session, and a fresh ingest's rel
        tables hold most of the keys, growing with the graph while nothing else in the session
        does; looking up and inserting each batch's keys costs CPU too (``docs/performance.md``).
        """
        state = self._state
        if name in state.unkeyed:
            return True
        if name in REL_TYPES and keys is not None and not len(keys) and name not in state.spool.rows:
            state.unkeyed.add(name)
            return True
        return False
