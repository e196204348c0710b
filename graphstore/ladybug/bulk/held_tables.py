"""Writing a bulk session's held tables: table by table, nodes first, then their waiting rows.

:class:`HeldTables` writes what the session holds when it ends (or, into a fresh store, its nodes
as soon as the loader's edges start): each table from its held rows, with the rows that repeat a
held key merged in first (a fresh table's waiting rows, a node key this session added, an unkeyed
rel table's repeats), through :class:`~eventkg.graphstore.ladybug.bulk.staged_copies.StagedCopies`;
rel tables checkpointed once enough edges wait for it, or at once after an append to a stored one.
Then the waiting rows are settled (:class:`~eventkg.graphstore.ladybug.bulk.waiting.WaitingRows`).

Why table by table and checkpointed: what a COPY keeps in the engine until the next checkpoint
grows with what it wrote, so fixed budgets, not the graph's size, bound the engine's memory.
Invariant: the appends' buffer pool is checked against the memory budget before anything is
written; a failure while writing marks the database failed and forgets every key set and pending
digest (they may name rows that were never written).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg import settings
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.keyset import KeySet, edge_fingerprints, fingerprints
from eventkg.graphstore.ladybug.bulk.staged_copies import StagedCopies
from eventkg.graphstore.ladybug.bulk.state import SessionState
from eventkg.graphstore.ladybug.bulk.waiting import WaitingRows
from eventkg.graphstore.ladybug.engine import (
    EDGE_POOL_SHARE,
    append_margin_bytes,
    append_pool_bytes,
    budget_share,
    buffer_pool_bytes,
    count_rows,
    edge_pool_bytes,
    node_pool_bytes,
    write_failure,
)
from eventkg.graphstore.ladybug.events import StoreEvent
from eventkg.graphstore.ladybug.spool import read_parts
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

STAGE_READ_ROWS = 200_000  # held rows read back at a time while a table is staged for its COPY
# edges COPYed into rel tables between checkpoints of a session: what a COPY keeps until the next
# checkpoint grows with the edges it wrote, so a fixed count keeps it flat in graph size
REL_PENDING_EDGES = 1_000_000
# checkpoint right after a COPY into a rel table that already held edges (see HeldTables.flush);
# False gives the earlier rule (the edge budget only), for bench/second_source_bench.py to compare
CHECKPOINT_APPENDS = True


class HeldTables:
    """The held tables of the session in ``state``, written through ``copies``; their waiting rows
    merged or settled by ``waiting``."""

    def __init__(self, state: SessionState, waiting: WaitingRows, copies: StagedCopies) -> None:
        self._state = state
        self._waiting = waiting
        self._copies = copies

    def flush(self, names: Sequence[str] | None = None) -> None:
        """Write the held tables (``names``, default all; nodes first), then upsert their waiting
        rows (:meth:`.WaitingRows.apply_late`), keeping the engine's memory bounded by fixed budgets rather
        than by the graph's size. Outside a session, nothing to do.

        Each table goes in from staged Parquet files, one COPY unless the memory budget says more
        (:meth:`.StagedCopies.copy_budgeted`); rel tables are checkpointed once ``REL_PENDING_EDGES`` edges
        wait for it. After each checkpoint the database is reopened and freed memory handed back
        (``Database.checkpoint_and_release``), so each COPY starts from the same floor.

        A COPY into a rel table that already held edges is checkpointed at once
        (``CHECKPOINT_APPENDS``): it keeps engine memory in proportion to the nodes the table joins
        until the next checkpoint, however few its edges and wherever they are (ladybug 0.22;
        ``bench/second_source_bench.py``). Counting such tables by their edges let them pile up
        and doubled a second source's peak, in the same time (figures: ``docs/performance.md``).
        """
        state = self._state
        database = state.database
        if not state.spool and not state.late and not state.repeats:
            return
        appends = state.appends = self._append_pool(names or [*NODE_TYPES, *REL_TYPES])  # before any write
        try:
            order = [n for n in names or [*NODE_TYPES, *REL_TYPES] if n in state.spool.rows]
            pending = 0  # edges COPYed since the last checkpoint
            for done, name in enumerate(order, 1):
                rows = state.spool.rows[name]
                state.notify(f"writing {name} ({done}/{len(order)}, {rows:,} rows)")
                if name in NODE_TYPES:
                    database.set_buffer_pool(node_pool_bytes())  # no-op once set (see node_pool_bytes)
                    self._write_held_nodes(name)
                    continue
                if pending and pending + rows > REL_PENDING_EDGES:
                    database.checkpoint_and_release()
                    pending = 0
                appending = CHECKPOINT_APPENDS and name not in state.unkeyed and count_rows(database.conn, name) > 0
                self._write_held_edges(name)
                pending += rows
                if appending:  # checkpointed at once (see the docstring)
                    database.checkpoint_and_release()
                    pending = 0
            if pending:
                database.checkpoint_and_release()
            for name in [n for n in names or NODE_TYPES if state.repeats and n in state.repeats.rows]:
                self._waiting.wait(name, state.repeats.take(name))  # none held now (an earlier flush wrote them)
            database.set_buffer_pool(max(buffer_pool_bytes(), appends))
            self._waiting.apply_late(names or [*NODE_TYPES, *REL_TYPES])
            state.notify("")  # done writing
        except BaseException as exc:
            database.failed = True
            state.keys.clear()  # they hold keys that were never written
            state.unkeyed.clear()
            state.deferred.clear()
            state.looked_up.clear()
            state.checked.clear()  # their files go with the spool's folder
            state.digests.abandon_pending()  # what was written is not known (their tables' digests are dropped)
            if isinstance(exc, RuntimeError | OSError):  # the engine's own errors, a full disk: one line
                raise write_failure(exc, state.beside, "writing held rows") from exc
            raise

    def _append_pool(self, names: Sequence[str]) -> int:
        """The buffer pool the appends among ``names`` need: rel tables with held or waiting rows
        whose stored table holds edges (:func:`~eventkg.graphstore.ladybug.engine.append_pool_bytes`
        of their end labels' nodes, stored and held); 0 when none append. Waiting rows alone that
        are exactly the stored ones append nothing (a re-run's, after a failure: checked here by
        digest, the answer kept for :meth:`.WaitingRows.apply_late`).

        Raises a one-line :class:`StoreError` before anything is written when that is more than the
        memory budget lets the engine have (``edge_pool_bytes``), or than the budget leaves beside
        what the COPY and its checkpoint take outside the pool (``append_margin_bytes``, kept for
        :meth:`.StagedCopies._before_copy`) and the process's own memory: the engine would fail mid-write with
        its buffer pool full, or the process go over its budget."""
        state = self._state
        need, margin, worst = 0, 0, ""
        conn = state.database.conn
        held_rows = state.spool.rows if state.spool else {}
        stored: dict[str, int] = {}  # nodes per label, counted once however many tables join it
        for name in names:
            held = name in held_rows or (state.late is not None and name in state.late.rows)
            if name not in REL_TYPES or not held or not count_rows(conn, name):
                continue
            if name not in held_rows:  # only waiting rows: none appended when they are all stored
                state.checked[name] = self._waiting.check_late(name)  # (a re-run's rows, by digest)
                if state.checked[name][2]:
                    continue
            rel = REL_TYPES[name]
            labels = {rel.source, rel.target}
            for label in labels - stored.keys():
                stored[label] = count_rows(conn, label)
            nodes = sum(stored[label] + held_rows.get(label, 0) for label in labels)
            if append_pool_bytes(nodes) > need:
                need, worst = append_pool_bytes(nodes), f"{name} ({nodes:,} {' and '.join(sorted(labels))} nodes)"
                margin = append_margin_bytes(nodes)
        state.append_margin = margin
        if not need:
            return 0
        # beside the pool: what the append's COPY and checkpoint take, and the process's own memory, counted up
        # to the share of the budget the rel COPYs' pool leaves it (a process holding more, say a notebook with
        # models loaded, is over its budget whatever this append does: a small append is not refused for it)
        held = min(self._copies.beside_pool() or 0, budget_share(1 - EDGE_POOL_SHARE))
        beside = held + margin
        cap = min(edge_pool_bytes(), settings.memory_mb() * 2**20 - beside)
        if need > cap:
            mib = 2**20
            least = max(need / EDGE_POOL_SHARE, need + beside) / mib
            raise StoreError(
                f"adding edges to the stored {worst} needs ~{need // mib:,} MiB of engine memory and ~{beside // mib:,} "
                f"MiB beside it, more than EVENTKG_MEMORY_MB={settings.memory_mb()} gives; nothing was written: "
                f"set EVENTKG_MEMORY_MB to at least {-(-least // 512) * 512:.0f} and run the ingest again")
        return need

    def _write_held_nodes(self, name: str) -> None:
        """COPY a held node table from staged Parquet files, as few COPYs as the memory budget
        allows (rows repeating a waiting key left out, then merged with those and added last; see
        :meth:`.WaitingRows.fold_late`), each checkpointed. Waiting rows merged so: every one when the table
        is empty; else the rows repeating a key this session added (:meth:`.BatchHolder._hold_split`), merged
        as a fresh table's are, so they cost no update after the COPY (updates go a few node groups
        per transaction, each checkpointed, and a checkpoint of a big stored table is slow). Such a
        row whose key is not held after all (an earlier flush wrote it) waits to be upserted.

        Why not always one: the engine builds a COPY's primary-key index in its buffer pool
        (:func:`~eventkg.graphstore.ladybug.engine.copy_rows`), so past some size one COPY fails.
        Why few, each of one range of that index's hash indexes (:meth:`.StagedCopies._copy_by_index_range`):
        each checkpoint rewrites the parts of the index its COPY reached.
        """
        state = self._state
        folded = state.late.take(name) if self._waiting.will_fold(name) else None
        again = state.repeats.take(name) if state.repeats is not None else None
        if folded is not None and again is not None:
            again = again.cast(folded.schema)
        ids = [t.column("id") for t in (folded, again) if t is not None]
        ids = pa.chunked_array([c for col in ids for c in col.chunks], pa.string()) if ids else None
        schema = next((t.schema for t in (folded, again) if t is not None), None)

        wanted = _id_set(ids) if ids is not None else None

        def parts() -> Iterator[pa.Table]:
            nonlocal again
            firsts = []
            for part in state.spool.slices(name, STAGE_READ_ROWS):
                if ids is not None:
                    part = part.cast(schema) if part.schema != schema else part
                    hit = _among(part.column("id"), ids, wanted)
                    firsts.append(part.filter(hit))
                    part = part.filter(pc.invert(hit))
                yield part
            if ids is None:
                return
            first = pa.concat_tables(firsts) if firsts else schema.empty_table()
            if again is not None:
                held = pc.is_in(again.column("id"), value_set=first.column("id"))
                self._waiting.wait(name, again.filter(pc.invert(held)))
                again = again.filter(held)
            late = [t for t in (folded, again) if t is not None]
            yield self._waiting.merge_late(name, first, pa.concat_tables(late) if len(late) > 1 else late[0])

        self._copies.copy_budgeted(name, parts(), state.spool.rows.get(name, 0) + (len(ids) if ids is not None else 0))
        state.emit(StoreEvent("copied", name))
        state.database.checkpoint_and_release()

    def _write_held_edges(self, name: str) -> None:
        """COPY a held rel table from staged Parquet files (one COPY unless the memory budget says
        more): its waiting rows merged in first (:meth:`.WaitingRows.fold_late`), or its repeated keys when it
        was held without a key set (:meth:`_merging_repeats`). An unkeyed table's key set is built
        again from the table if a later write needs it."""
        state = self._state
        unkeyed = name in state.unkeyed
        rows = state.spool.rows.get(name, 0)
        if unkeyed:
            parts = self._merging_repeats(name)
        elif self._waiting.will_fold(name):
            parts = iter([self._waiting.fold_late(name, state.spool.take(name))])
        else:
            parts = state.spool.slices(name, STAGE_READ_ROWS)
        self._copies.copy_budgeted(name, parts, rows)
        if unkeyed:
            state.unkeyed.discard(name)
            state.keys.drop(name)
        state.emit(StoreEvent("copied", name))

    def _merging_repeats(self, name: str) -> Iterator[pa.Table]:
        """The held rows of an unkeyed rel table (:meth:`.SessionPlan.holds_unkeyed`) with each repeated key
        merged into one row, as :meth:`.WaitingRows.fold_late` merges waiting rows: later rows win, sources
        unioned, a key whose value changes counted as updated, and the repeats taken off the
        created count (each was counted when it was held).

        Streamed: the rows are read back a part at a time and only the rows of repeated keys are
        kept in memory, so what this holds does not grow with the table but with its repeats
        (16 B of key fingerprints per row, for the moment of the sort, aside)."""
        state = self._state
        rows = state.spool.rows[name]
        fps = state.spool.take_keys(name, rows)
        path = state.spool.held_file(name)
        try:
            if fps is None:  # not all hashed while held: hash the file's keys now
                parts = [edge_fingerprints(t.column("src"), t.column("dst")) for t in read_parts(path, STAGE_READ_ROWS)]
                fps = (np.concatenate([h1 for h1, _ in parts]), np.concatenate([h2 for _, h2 in parts]))
                parts = None
            first, later = _repeat_masks(*fps)
            fps = None
            firsts, lates, offset = [], [], 0
            for part in read_parts(path, STAGE_READ_ROWS):
                f, late = first[offset : offset + part.num_rows], later[offset : offset + part.num_rows]
                offset += part.num_rows
                if f.any() or late.any():
                    firsts.append(part.filter(pa.array(f)))
                    lates.append(part.filter(pa.array(late)))
                    part = part.filter(pa.array(~(f | late)))
                yield part
                part = None
        finally:
            path.unlink(missing_ok=True)
        if lates:
            late_rows = pa.concat_tables(lates)
            created = state.late_result.created
            created[name] = created.get(name, 0) - late_rows.num_rows
            yield self._waiting.merge_late(name, pa.concat_tables(firsts), late_rows)


def _id_set(ids: pa.ChunkedArray) -> KeySet:
    """The fingerprints of ``ids``, asked by :func:`_among` for each staged slice."""
    keys = KeySet()
    keys.add(*fingerprints(ids))
    return keys


def _among(column: pa.ChunkedArray | pa.Array, ids: pa.ChunkedArray, keys: KeySet) -> pa.Array:
    """Mask of the ids of ``column`` that are among ``ids``, looked up in their fingerprints
    ``keys`` (:func:`_id_set`, built once per table): ``pc.is_in`` hashes its whole value set at
    each call, which made staging a table slice by slice quadratic in its repeated keys.
    Fingerprints that only share a first hash are settled by comparing the ids themselves."""
    present, unsure = keys.lookup(*fingerprints(column))
    if unsure.any():
        rows = np.flatnonzero(unsure)
        exact = pc.is_in(pc.take(column, pa.array(rows)), value_set=ids).to_numpy(zero_copy_only=False)
        present[rows[exact]] = True
    return pa.array(present)


def _repeat_masks(h1: np.ndarray, h2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the rows whose key fingerprint (h1, h2) a later row repeats (each such key's first
    row), and of the rows repeating an earlier row's key."""
    order = np.argsort(h1, kind="stable")  # rows of one key stay in the order held
    s1, s2 = h1[order], h2[order]
    if ((s1[1:] == s1[:-1]) & (s2[1:] != s2[:-1])).any():  # keys sharing a first hash: order by both
        order = np.lexsort((h2, h1))
        s1, s2 = h1[order], h2[order]
    same = (s1[1:] == s1[:-1]) & (s2[1:] == s2[:-1])  # sorted row i + 1 repeats row i
    later = np.zeros(len(order), bool)
    later[order[1:][same]] = True
    first = np.zeros(len(order), bool)
    first[order[:-1][same & ~np.concatenate(([False], same[:-1]))]] = True
    return first, later
