"""Holding a bulk session's batches: each checked batch split into new rows, held, and rows that wait.

:class:`BatchHolder` takes a batch the store checked, asks :class:`~eventkg.graphstore.ladybug.bulk.planning.SessionPlan`
which of its rows' keys are held or stored (or may be), and spools the new rows in the session's
:class:`~eventkg.graphstore.ladybug.spool.TableSpool` (counted as created, their keys as stored
from then on). The others wait (:class:`~eventkg.graphstore.ladybug.bulk.waiting.WaitingRows`):
in order in a second spool, or, for a node key this session added to a store that held nodes, in
a third one whose rows are merged into the held table before its COPY.

Why: a batch that repeats a key (a duplicate across loader batches, or a re-run after a crash)
does not end the session; later rows still win, as they would batch by batch.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from eventkg import settings
from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug.bulk.held_tables import HeldTables
from eventkg.graphstore.ladybug.bulk.planning import SessionPlan
from eventkg.graphstore.ladybug.bulk.state import SessionState
from eventkg.graphstore.ladybug.bulk.waiting import WaitingRows
from eventkg.graphstore.ladybug.spool import TableSpool, hold_failure
from eventkg.graphstore.ladybug.stored_keys import Fingerprints
from eventkg.graphstore.model import NODE_TYPES


class BatchHolder:
    """The batches of the session in ``state``: planned by ``plan``, the known rows handed to
    ``waiting``, what is held written by ``held`` when keys are too many or a fresh store's
    node phase is over."""

    def __init__(self, state: SessionState, plan: SessionPlan, waiting: WaitingRows, held: HeldTables) -> None:
        self._state = state
        self._plan = plan
        self._waiting = waiting
        self._held = held

    def hold_batch(self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table],
                   fps: Mapping[str, Fingerprints]) -> WriteResult | None:
        """Hold a checked batch in the session; None when its keys are too many to remember
        (then what is held has been written, and the caller upserts the batch as usual)."""
        state, plan = self._state, self._plan
        result = WriteResult()
        tables = {**nodes, **edges}
        known: dict[str, np.ndarray] = {}  # per table, the rows whose keys are held or stored (or may be)
        for name in tables:
            if plan.defers(name):  # a stored rel table: every row waits for the end
                known[name] = np.ones(tables[name].num_rows, bool)
                continue
            if plan.looks_up(name):  # a big stored node table: its rows' keys asked of the engine
                known[name] = plan.held_or_stored(name, tables[name], fps[name])
                continue
            keys = state.keys.known(name)
            if plan.holds_unkeyed(name, keys):  # a fresh rel table: every row held, repeats merged at its COPY
                known[name] = np.zeros(tables[name].num_rows, bool)
                continue
            if keys is None:  # keys too many to remember: write what is held, then upsert as usual
                if not state.told_keys:
                    state.told_keys = True
                    state.notify(f"note: {name}: the store holds more keys than EVENTKG_KEYSET_MAX="
                                 f"{settings.keyset_max():,} lets it remember, so the rest of this ingest is "
                                 "written batch by batch (slower, and a failure keeps the batches written); "
                                 "raise EVENTKG_KEYSET_MAX above the store's nodes and edges for one bulk session")
                self._held.flush()
                return None
            present, unsure = keys.lookup(*fps[name])
            known[name] = present | unsure
        self._hold_split(tables, fps, known, result)
        if edges and state.fresh:  # the node phase of a loader is over: write its nodes while it reads on
            self._held.flush(list(NODE_TYPES))
        return result

    def _hold(self, tables: Mapping[str, pa.Table], fps: Mapping[str, Fingerprints], result: WriteResult) -> None:
        """Spool new rows (they count as created, and their keys as stored, from now on)."""
        state = self._state
        for name, table in tables.items():
            try:  # an unkeyed table's fingerprints wait beside it, for HeldTables._merging_repeats (hashed once, here)
                state.spool.add(name, table, fps[name] if name in state.unkeyed else None)
            except OSError as exc:  # e.g. a full disk: what is held is still written at the end (this
                # batch's earlier tables included; they are valid rows, and a rerun completes the rest)
                raise hold_failure(exc, state.spool.folder, state.beside) from None
            state.add_keys(name, *fps[name])
            if name in NODE_TYPES and not state.fresh:  # what an edge naming them cannot be stored with
                state.new_nodes.setdefault(name, KeySet()).add(*fps[name])
            result.created[name], result.updated[name] = table.num_rows, 0

    def _hold_split(self, tables: Mapping[str, pa.Table], fps: Mapping[str, Fingerprints],
                    known_rows: Mapping[str, np.ndarray], result: WriteResult) -> None:
        """Hold the rows whose keys are new; queue the others to be upserted once the held rows are written.

        A batch that repeats a key held or stored (a duplicate across loader batches, or a
        re-run after a crash) no longer ends the session: its new rows are held as usual and
        its other rows wait, in order, in a second spool. When the held tables are written,
        the waiting rows of each table are upserted in one pass (one lookup or table scan,
        compared column by column), so later rows still win as they would batch by batch.
        Rows repeating a node key this session added to a store that held nodes wait in a third
        spool instead, merged into the held table before its COPY (:meth:`.HeldTables._write_held_nodes`).
        """
        state = self._state
        for name, table in tables.items():
            h1, h2 = fps[name]
            known = known_rows[name]
            if not known.any():
                self._hold({name: table}, {name: (h1, h2)}, result)
                continue
            again = self._repeats_added(name, h1, h2) & known
            new = ~known
            if new.any():
                self._hold({name: table.filter(pa.array(new))}, {name: (h1[new], h2[new])}, result)
            if (waiting := known & ~again).any():
                self._waiting.wait(name, table.filter(pa.array(waiting)))
            if again.any():
                state.repeats = state.repeats or TableSpool(state.beside)
                self._waiting.wait(name, table.filter(pa.array(again)), state.repeats)
            result.created.setdefault(name, int(new.sum()))
            result.updated.setdefault(name, 0)

    def _repeats_added(self, name: str, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Mask of the rows of the node table ``name`` whose key this session added to a store that
        held nodes (:meth:`_hold`; only a key present, not one sharing a first hash)."""
        added = self._state.new_nodes.get(name) if name in NODE_TYPES else None
        if added is None or not len(added):
            return np.zeros(len(h1), bool)
        return added.lookup(h1, h2)[0]
