"""The waiting rows of a bulk session: rows whose keys were already held or stored when they came.

:class:`WaitingRows` keeps them in a second spool, in order, and settles them once the held rows
are written: merged in Arrow into a held table the engine holds no row of yet (later rows win,
sources unioned, as the upsert would), else upserted, one pass per table, unless their digest
proves them equal to the stored table (a re-run after a crash). A deferred table's rows
(:meth:`.SessionPlan.defers`) that name a node the session added are new without a lookup.

Invariant: a digest describes only rows the table holds: the waiting rows COPYed as new add
theirs to it, an upsert drops it first and keeps it again only when it wrote nothing, and the
rows' digest is compared against the stored table's as it stood before this session's COPYs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.digest import EMPTY, TableDigest, table_digest
from eventkg.graphstore.keyset import edge_fingerprints, fingerprints
from eventkg.graphstore.ladybug.bulk.state import SessionState
from eventkg.graphstore.ladybug.engine import LOOKUP_CHUNK, count_rows, release_free_memory, update_node_groups
from eventkg.graphstore.ladybug.events import StoreEvent
from eventkg.graphstore.ladybug.spool import TableSpool, hold_failure, read_partitions
from eventkg.graphstore.ladybug.stored_keys import Fingerprints
from eventkg.graphstore.ladybug.upsert import existing_edges, per_source_queries, update_by_node_groups, upsert
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import changed_rows, dedupe, key_column

# waiting rows (keys seen before: a re-run after a crash) upserted per transaction; a fixed
# part so the re-run's memory does not grow with the table (see spool.read_partitions)
LATE_UPSERT_ROWS = 250_000
EARLY_CHECKPOINT_ROWS = 100_000  # a bulk session checkpoints held nodes once they are written, past this many rows


class WaitingRows:
    """The waiting rows of the session in ``state``: ``state.late`` (and ``state.repeats``), merged
    or upserted, their outcome counted in ``state.late_result`` and ``state.late_skipped``."""

    def __init__(self, state: SessionState) -> None:
        self._state = state

    def wait(self, name: str, table: pa.Table, spool: TableSpool | None = None) -> None:
        """Add rows to a spool of waiting rows (default the one upserted after the flush)."""
        state = self._state
        if spool is None:
            state.late = spool = state.late or TableSpool(state.beside)
        try:
            spool.add(name, table)
        except OSError as exc:
            raise hold_failure(exc, spool.folder, state.beside) from None

    def will_fold(self, name: str) -> bool:
        """True when :meth:`fold_late` will merge waiting rows into the held table ``name``."""
        state = self._state
        return bool(state.late) and name in state.late.rows and not count_rows(state.database.conn, name)

    def fold_late(self, name: str, held: pa.Table) -> pa.Table:
        """The held rows of ``name`` with its waiting rows merged in, when none of them can be stored.

        When the engine holds no row of the table yet (a fresh ingest), every waiting row repeats
        a held key, so it is merged into the held table in Arrow (later rows win, sources
        unioned, as the upsert would) and the table goes in with its one COPY. Upserting them
        after the COPY instead updates rows spread over the whole table inside one transaction,
        which keeps engine memory until the next checkpoint; merged here they cost less time and
        no engine memory (``docs/performance.md``). A table
        the engine already holds rows of (a re-run) keeps the upsert path.
        """
        if not self.will_fold(name):
            return held
        late = self._state.late.take(name).cast(held.schema)
        return self._merge_into(name, held, late)

    def _merge_into(self, name: str, held: pa.Table, late: pa.Table) -> pa.Table:
        """``held`` (one row per key) with the rows ``late`` of some of its keys merged in (:meth:`merge_late`)."""
        keys = ("id",) if name in NODE_TYPES else ("src", "dst")
        hit = _rows_with_keys(held, late, keys)  # the held first rows of the repeated keys
        merged = self.merge_late(name, held.filter(hit), late)
        return pa.concat_tables([held.filter(pc.invert(hit)), merged])

    def merge_late(self, name: str, first: pa.Table, late: pa.Table) -> pa.Table:
        """The held rows ``first`` of repeated keys merged with their waiting rows ``late`` (later
        rows win, sources unioned), counting the keys whose stored values change as updated."""
        kind = NODE_TYPES.get(name) or REL_TYPES[name]
        keys = ("id",) if name in NODE_TYPES else ("src", "dst")
        repeats, _ = dedupe(late, keys, kind.properties)
        updated = self._state.late_result.updated
        updated[name] = updated.get(name, 0) + len(changed_rows(repeats, first, keys))
        merged, _ = dedupe(pa.concat_tables([first, late]), keys, kind.properties)
        return merged

    def apply_late(self, names: Sequence[str]) -> None:
        """Upsert the waiting rows of ``names`` after the held rows, unless they are exactly the rows
        the table held before this session (:meth:`_late_rows_are_stored`): each node table split by
        key into parts of about ``LATE_UPSERT_ROWS`` rows, each part deduplicated and upserted in one
        transaction, then checkpointed and the database reopened."""
        state = self._state
        if not state.late and not state.checked:
            return
        for name in [n for n in names if n in state.late.rows or n in state.checked]:
            path, rows, stored = state.checked.pop(name, None) or self.check_late(name)
            try:
                if stored:
                    state.late_skipped[name] = state.late_skipped.get(name, 0) + rows
                    release_free_memory()  # the parts read to digest them (nothing was written)
                    continue
                state.notify(f"merging {name} ({rows:,} rows seen before)")
                if not (name in state.deferred and self._write_deferred(name, path)):
                    self._upsert_late_file(name, path, rows)
            finally:
                path.unlink(missing_ok=True)
            state.emit(StoreEvent("merged", name))
            # the lookups filled the buffer pool with the table's pages: hand them back before
            # the loader's next rows (figures: docs/performance.md)
            state.database.checkpoint_and_release()

    def check_late(self, name: str) -> tuple[Path, int, bool]:
        """Take the waiting rows of ``name`` from the spool: their file, rows, and whether they are
        exactly the rows the table held before this session (:meth:`_late_rows_are_stored`)."""
        late = self._state.late
        rows = late.rows[name]
        path = late.held_file(name)
        return path, rows, self._late_rows_are_stored(name, path, rows)

    def _late_rows_are_stored(self, name: str, path: Path, rows: int) -> bool:
        """True when the waiting rows of ``name`` (deduplicated as the upsert would) are exactly
        the rows the table held before this session's COPYs: then every one equals its stored
        row and upserting them changes nothing (a re-run after a crash sends the stored rows again).

        Decided by digests (:mod:`eventkg.graphstore.digest`): the stored table's (kept by the
        COPY path, see ``digest_file``) less this session's COPYed rows', against the waiting
        rows', computed a part at a time. Any doubt (no digest, another row count) says False.
        Why: upserting rows that are all equal (keyed lookups, reading stored edges, comparing)
        was half of a re-run's time (``docs/performance.md``).
        """
        expected = self._stored_before_session(name)
        if expected is None or not 0 < expected.rows <= rows:
            return False
        kind = NODE_TYPES.get(name) or REL_TYPES[name]
        keys = ("id",) if name in NODE_TYPES else ("src", "dst")
        waiting = EMPTY
        for part in read_partitions(path, -(-rows // LATE_UPSERT_ROWS), partial(_first_key_hash, keys)):
            part, _ = dedupe(part, keys, kind.properties)
            waiting += table_digest(part)
            part = None
            if waiting.rows > expected.rows:
                return False
        return waiting == expected

    def _stored_before_session(self, name: str) -> TableDigest | None:
        """The digest of the rows ``name`` held before this session's COPYs, or None when unknown
        (no digest, or the engine's row count is not the digest's: a write the digest missed)."""
        state = self._state
        now = state.digests.now(name)
        if now is None or count_rows(state.database.conn, name) != now.rows:
            return None
        return now - state.copied.get(name, EMPTY)

    def _write_deferred(self, name: str, path: Path) -> bool:
        """The waiting rows of a deferred rel table (:meth:`.SessionPlan.defers`) that are not exactly its stored
        rows, deduplicated: a row naming a node this session added is new (no stored edge can name
        it) and is COPYed (its digest kept, as for held rows); the others are skipped when they are
        the stored rows (by digest), else looked up and upserted, by keyed queries per source when
        they are few next to the table (``upsert.per_source_queries``; the rows found are what the
        upsert compares, each edge asked once), else through the table's key set, built now. False
        when its keys are too many to remember (the caller upserts them all).

        Why: a second file adds mostly new nodes, so most of its edges name one; they cost a hash
        lookup each here, where a key set of the stored table costs a scan of it (figures:
        ``docs/performance.md``)."""
        state = self._state
        kind, keys = REL_TYPES[name], ("src", "dst")
        table = next(read_partitions(path, 1, partial(_first_key_hash, keys)))
        table, (h1, h2) = dedupe(table, keys, kind.properties)
        new = self._names_new_node(name, table)
        found: pa.Table | None = None  # the stored edges among the others, when asked per source
        if (ask := np.flatnonzero(~new)).size:
            rows = table.take(pa.array(ask))
            if self._few_sources(name, rows):  # keyed queries per source
                found = existing_edges(state.database.conn, name, rows, chunk=LOOKUP_CHUNK)
                new[ask[~pc.is_in(key_column(rows), value_set=key_column(found)).to_numpy(zero_copy_only=False)]] = True
            else:
                keyset = state.keys.get(name)
                if keyset is None:
                    return False
                present, unsure = keyset.lookup(h1, h2)
                new |= ~(present | unsure)
            rows = None
        stored = self._stored_before_session(name)
        known = table.filter(pa.array(~new))
        if new.any():
            self._copy_held(name, table.filter(pa.array(new)))
            state.late_result.created[name] = state.late_result.created.get(name, 0) + int(new.sum())
            state.add_keys(name, h1[new], h2[new])
        table = None
        if not known.num_rows:
            return True
        if stored is not None and table_digest(known) == stored:  # the stored rows again: nothing to write
            state.late_skipped[name] = state.late_skipped.get(name, 0) + known.num_rows
            return True
        self._keeping_digest_if_unchanged(name, lambda: self._upsert_late(name, known, (h1[~new], h2[~new]), found))
        return True

    def _names_new_node(self, name: str, table: pa.Table) -> np.ndarray:
        """Mask of the edges of ``table`` (a rel table ``name``) whose source or target this session
        added as a new node (present in its new keys; a shared first hash counts as not new)."""
        rel = REL_TYPES[name]
        new = np.zeros(table.num_rows, bool)
        for label, column in ((rel.source, "src"), (rel.target, "dst")):
            if (held := self._state.new_nodes.get(label)) is not None and len(held):
                new |= held.lookup(*fingerprints(table.column(column)))[0]
        return new

    def _few_sources(self, name: str, rows: pa.Table) -> bool:
        """True when the stored edges among ``rows`` are found faster by keyed queries per source
        than by a key set of the table (see ``upsert.existing_edges``)."""
        return per_source_queries(len(pc.unique(rows.column("src"))), count_rows(self._state.database.conn, name))

    def _upsert_late_file(self, name: str, path: Path, rows: int) -> None:
        """Upsert a table's waiting rows (its held file) in parts; a table left unchanged keeps its digest."""
        kind = NODE_TYPES.get(name) or REL_TYPES[name]
        keys = ("id",) if name in NODE_TYPES else ("src", "dst")

        def upsert_parts() -> int:
            changed = 0
            # node tables in parts (found by keyed lookups, see SCAN_MAX_NODES); a rel table's
            # stored edges are found by one scan of it per part, so it stays whole
            parts = -(-rows // LATE_UPSERT_ROWS) if name in NODE_TYPES else 1
            for table in read_partitions(path, parts, partial(_first_key_hash, keys)):
                table, fps = dedupe(table, keys, kind.properties)
                changed += self._upsert_late(name, table, fps)
                table = None
            return changed

        self._keeping_digest_if_unchanged(name, upsert_parts)

    def _keeping_digest_if_unchanged(self, name: str, upserts: Callable[[], int]) -> None:
        """Run ``upserts`` (returns the rows it wrote) with the digest of ``name`` dropped first; when
        it wrote nothing the table is as it was, so its digest (if known) is kept again."""
        digests = self._state.digests
        before = digests.now(name)
        digests.forget([name])
        if not upserts() and before is not None:
            digests.note(name, before)

    def _upsert_late(self, name: str, table: pa.Table, fps: Fingerprints, stored: pa.Table | None = None) -> int:
        """Upsert deduplicated waiting rows, counting what it did; returns the rows written
        (created + updated). New rows go in one transaction; changed stored nodes after it, a
        few node groups per transaction (:func:`~eventkg.graphstore.ladybug.upsert.update_by_node_groups`).
        ``stored``: their stored rows when the caller looked them up already (not asked again)."""
        state = self._state
        database = state.database
        deferred: list[dict[str, Any]] = []
        defer = (lambda _conn, _name, rows: deferred.extend(rows)) if name in NODE_TYPES else None

        def write() -> tuple[int, int, Fingerprints]:
            if stored is None:
                return state.writer.upsert(name, table, fps, defer)
            return upsert(database.conn, name, table, fps, None, chunk=LOOKUP_CHUNK, update=defer, stored=stored)

        created, updated, new_fps = database.in_transaction(write)
        if deferred:
            update_by_node_groups(lambda: database.conn, name, deferred, database.in_checkpointed_transaction,
                                  update_node_groups())
        state.add_keys(name, *new_fps)
        for counts, n in ((state.late_result.created, created), (state.late_result.updated, updated)):
            counts[name] = counts.get(name, 0) + n
        database.wrote(created + updated)
        if database.unflushed_rows >= EARLY_CHECKPOINT_ROWS:
            database.checkpoint()
        return created + updated

    def _copy_held(self, name: str, table: pa.Table) -> None:
        """COPY new rows of a waiting table (its digest kept, as for held rows)."""
        state = self._state
        if table.num_rows:
            digest = state.writer.copy_tracked(name, table)
            if digest is not None:
                state.copied[name] = state.copied.get(name, EMPTY) + digest
            state.database.wrote(table.num_rows)


def _first_key_hash(keys: tuple[str, ...], batch: pa.RecordBatch) -> np.ndarray:
    """The first 64-bit fingerprint of each row's key (what :func:`~eventkg.graphstore.ladybug.spool.read_partitions` splits by)."""
    if keys == ("id",):
        return fingerprints(batch.column("id"))[0]
    return edge_fingerprints(batch.column("src"), batch.column("dst"))[0]


def _rows_with_keys(table: pa.Table, wanted: pa.Table, keys: tuple[str, ...]) -> pa.Array:
    """Mask of the rows of ``table`` whose key is one of ``wanted``'s (edges: sources first, so
    the joined src/dst keys are built only for the few candidate rows)."""
    if keys == ("id",):
        return pc.is_in(table.column("id"), value_set=wanted.column("id"))
    cand = np.flatnonzero(pc.is_in(table.column("src"), value_set=pc.unique(wanted.column("src"))).to_numpy(
        zero_copy_only=False))
    mask = np.zeros(table.num_rows, bool)
    if len(cand):
        found = pc.is_in(key_column(table.take(pa.array(cand))), value_set=key_column(wanted))
        mask[cand[found.to_numpy(zero_copy_only=False)]] = True
    return pa.array(mask)
