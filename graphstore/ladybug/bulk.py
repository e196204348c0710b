"""The bulk session of the embedded store: what ``bulk_load()`` holds back, what waits, how it is written.

:class:`BulkSession` owns a session's state: new rows held in a
:class:`~eventkg.graphstore.ladybug.spool.TableSpool`, rows whose keys are already held or stored
waiting in a second one, the rel tables held without a key set, the stored ones whose rows all
wait (deferred), the big stored node tables asked of the engine batch by batch (looked up), the
node keys it added and the rows repeating them (merged into the held rows before their COPY), the
digests of what it COPYed. At its end the held tables are written table by
table (nodes first; each from staged Parquet files in as few COPYs as the memory budget allows,
checkpointed and the database reopened so each starts from the same floor), then the waiting rows
are upserted, one pass per table, unless their digest proves them equal to the stored table (a
re-run after a crash); a deferred table's rows that name a node the session added are new without
a lookup.

Invariant: all or nothing. A failure inside the session writes nothing it held, and into a store
that held no node when it began (whose nodes are written early, while the loader reads its edges)
deletes again what was written. What a session remembers of keys grows with what it is sent, not
with what the store holds: a store that holds a big graph is asked, not scanned, unless most of
what is sent is stored already (a re-run whose digests were lost builds the key sets it needs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg import settings
from eventkg.graphstore.base import StoreError, WriteResult
from eventkg.graphstore.digest import EMPTY, TableDigest, table_digest
from eventkg.graphstore.keyset import KeySet, edge_fingerprints, fingerprints
from eventkg.graphstore.ladybug.database import Database
from eventkg.graphstore.ladybug.digest_book import TableDigests
from eventkg.graphstore.ladybug.engine import (
    EDGE_COPY_MARGIN,
    EDGE_POOL_SHARE,
    LOOKUP_CHUNK,
    POOL_SLACK,
    append_margin_bytes,
    append_pool_bytes,
    budget_share,
    buffer_pool_bytes,
    copy_rows,
    count_rows,
    edge_pool_bytes,
    edge_pool_for,
    max_offset,
    node_pool_bytes,
    pool_in_use,
    release_free_memory,
    resident_bytes,
    short_error,
    update_node_groups,
)
from eventkg.graphstore.ladybug.events import EventHook, StoreEvent
from eventkg.graphstore.ladybug.index_parts import index_ranges, split_by_range
from eventkg.graphstore.ladybug.keysets import Fingerprints, KeySets
from eventkg.graphstore.ladybug.spool import Staged, TableSpool, parquet_parts, read_partitions, read_parts
from eventkg.graphstore.ladybug.upsert import (
    SCAN_MAX_NODES,
    existing_edges,
    existing_ids,
    per_source_queries,
    update_by_node_groups,
    upsert,
)
from eventkg.graphstore.ladybug.writer import TableWriter
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import changed_rows, dedupe, key_column, row_schema

# waiting rows (keys seen before: a re-run after a crash) upserted per transaction; a fixed
# part so the re-run's memory does not grow with the table (see spool.read_partitions)
LATE_UPSERT_ROWS = 250_000
STAGE_READ_ROWS = 200_000  # held rows read back at a time while a table is staged for its COPY
EARLY_CHECKPOINT_ROWS = 100_000  # a bulk session checkpoints held nodes once they are written, past this many rows
# edges COPYed into rel tables between checkpoints of a session: what a COPY keeps until the next
# checkpoint grows with the edges it wrote, so a fixed count keeps it flat in graph size
REL_PENDING_EDGES = 1_000_000
# checkpoint right after a COPY into a rel table that already held edges (see BulkSession.flush);
# False gives the earlier rule (the edge budget only), for bench/second_source_bench.py to compare
CHECKPOINT_APPENDS = True


class BulkSession:
    """The bulk session of one :class:`~eventkg.graphstore.ladybug.store.LadybugStore`: what it holds and
    waits for between :meth:`holding` and its end, and how the held tables are written.

    Built from the store's parts: the open ``database`` (checkpoints, buffer pool, row counts),
    its ``digests``, its key sets (``keys``) and the ``writer`` every write goes through; ``notify``
    gets a short message as each held table is written (the store's ``on_bulk_write``), ``emit`` a
    :class:`~eventkg.graphstore.ladybug.events.StoreEvent` once it is (the store's ``on_event``).
    """

    def __init__(self, beside: Path, *, database: Database, digests: TableDigests, keys: KeySets,
                 writer: TableWriter, notify: Callable[[str], None], emit: EventHook | None = None) -> None:
        self._beside = beside  # the database file: the spools' folders go beside it
        self._database = database
        self._digests = digests
        self._keys = keys
        self._writer = writer
        self._notify = notify
        self._emit = emit or (lambda event: None)  # hears each table written (events.StoreEvent)
        self.spool: TableSpool | None = None  # new rows held back (None: no session)
        self._late: TableSpool | None = None  # rows of keys already stored or held, upserted after the flush
        self._repeats: TableSpool | None = None  # rows of node keys this session added, merged before their COPY
        self._unkeyed: set[str] = set()  # rel tables held without a key set (_holds_unkeyed)
        self._appends = 0  # the buffer pool this flush's appends to stored rel tables need (_append_pool)
        self._append_margin = 0  # and what they take beside it
        self._told_keys = False  # the note that the key sets are full was given
        self._deferred: set[str] = set()  # stored rel tables whose rows all wait (defers)
        self._looked_up: set[str] = set()  # stored node tables asked about per batch (looks_up)
        self._new_nodes: dict[str, KeySet] = {}  # node keys this session holds new, when it began non-empty
        self._copied: dict[str, TableDigest] = {}  # this session's held rows COPYed, per table
        self._fresh = False  # the session began with every node table empty
        self.late_result = WriteResult()  # what merging and upserting waiting rows did (read by the ingest report)
        self.late_skipped: dict[str, int] = {}  # waiting rows found equal to the stored table by digest
        self._checked: dict[str, tuple[Path, int, bool]] = {}  # waiting files taken by _append_pool: rows, all stored

    @property
    def active(self) -> bool:
        return self.spool is not None

    def held_rows(self) -> dict[str, int]:
        """Rows held now, per table (empty outside a session)."""
        return dict(self.spool.rows) if self.spool is not None else {}

    @property
    def unkeyed(self) -> frozenset[str]:
        """Rel tables held without a key set (:meth:`_holds_unkeyed`)."""
        return frozenset(self._unkeyed)

    @property
    def deferred(self) -> frozenset[str]:
        """Stored rel tables whose rows all wait for the end of the session (:meth:`defers`)."""
        return frozenset(self._deferred)

    @property
    def looked_up(self) -> frozenset[str]:
        """Stored node tables whose keys are asked of the engine batch by batch (:meth:`looks_up`)."""
        return frozenset(self._looked_up)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Hold new rows in a :class:`~eventkg.graphstore.ladybug.spool.TableSpool` and write them table by
        table when the session ends, each from staged files in as few COPYs as the memory budget
        allows (:meth:`flush`).

        All or nothing: when the caller raises inside the session (a bad row, a whole-file error,
        Ctrl-C), nothing it held is written. Into a store that held no node when the session began,
        the nodes are written as soon as the loader's edges start (while it reads them: they cost
        no wall time then), and a failure afterwards deletes every row again; into a store that
        held nodes, everything waits for the end. A crash (SIGKILL) leaves what was written:
        running the ingest again completes it (the store's ingest mark says so meanwhile).
        A session inside a session, or on a read-only store, holds nothing of its own.
        """
        if self.spool is not None or self._database.read_only:
            yield
            return
        try:
            self.spool = TableSpool(self._beside)
        except OSError:  # no room for the files beside the store: write batch by batch instead
            yield
            return
        self.late_result = WriteResult()
        self._copied, self.late_skipped, self._appends, self._append_margin = {}, {}, 0, 0
        self._fresh = all(max_offset(self._database.conn, label) < 0 for label in NODE_TYPES)
        self._new_nodes = {}
        self._digests.wrote = False
        try:
            yield
        except BaseException:
            self._abandon()
            raise
        self.end()

    def nodes_done(self) -> None:
        """The loader sends no more nodes: into a fresh store, write the held ones now (it reads its
        edges meanwhile); into one that holds nodes, they wait for the end (see :meth:`holding`)."""
        if self.spool is not None and self._fresh:
            for label in NODE_TYPES:  # rebuilt by a scan if a later batch asks (ASER's edges do not:
                self._keys.drop(label)  # their ends are known), 16 B per node freed first
            release_free_memory()
            self.flush(list(NODE_TYPES))

    def end(self) -> None:
        """Write what the session holds (unless the engine failed) and remove its files."""
        spool = self.spool
        if spool is None:  # no session, or close() already ended it
            return
        try:
            if not self._database.failed:
                self.flush()
                # the pool every open store has (or the appends' bigger one): a flush with nothing to write,
                # after lookups that cut it (looks_up), leaves it small
                self._database.set_buffer_pool(max(buffer_pool_bytes(), self._appends))
        except BaseException:
            self._undo_fresh_session()
            raise
        finally:
            self._close_spools(spool)

    def _abandon(self) -> None:
        """The caller failed inside the session: drop what is held, and undo what was written."""
        spool = self.spool
        if spool is None:
            return
        self._close_spools(spool)
        self._keys.clear()  # they hold keys that were never written
        self._undo_fresh_session()

    def _undo_fresh_session(self) -> None:
        """After a failed session into a store that held no node: delete every row written since,
        so the store is again what it was (empty). Else what was written stays (the ingest mark
        tells readers)."""
        if not (self._digests.wrote and self._fresh):
            return
        try:
            self._database.failed = False
            self._database.reopen()  # a failed COPY may have left the connection unusable
            self._writer.delete_everything()
            self._digests.wrote = False
        except Exception:  # noqa: BLE001 - the first error is the one to report
            self._database.failed = True

    def _close_spools(self, spool: TableSpool) -> None:
        self.spool = None
        self._unkeyed.clear()  # written (their key sets rebuilt when needed) or never to be
        self._deferred.clear()
        self._looked_up.clear()
        self._checked.clear()
        self._new_nodes = {}
        spool.close()
        for spool in (self._late, self._repeats):
            if spool is not None:
                spool.close()
        self._late = self._repeats = None

    def _add_keys(self, name: str, h1: np.ndarray, h2: np.ndarray) -> None:
        """Keys written or held: added to the table's key set, unless it is held without one."""
        if name not in self._unkeyed:
            self._keys.add(name, h1, h2)

    def hold_batch(self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table],
                    fps: Mapping[str, Fingerprints]) -> WriteResult | None:
        """Hold a checked batch in the session; None when its keys are too many to remember
        (then what is held has been written, and the caller upserts the batch as usual)."""
        result = WriteResult()
        tables = {**nodes, **edges}
        known: dict[str, np.ndarray] = {}  # per table, the rows whose keys are held or stored (or may be)
        for name in tables:
            if self.defers(name):  # a stored rel table: every row waits for the end
                known[name] = np.ones(tables[name].num_rows, bool)
                continue
            if self.looks_up(name):  # a big stored node table: its rows' keys asked of the engine
                known[name] = self._held_or_stored(name, tables[name], fps[name])
                continue
            keys = self._keys.known(name)
            if self._holds_unkeyed(name, keys):  # a fresh rel table: every row held, repeats merged at its COPY
                known[name] = np.zeros(tables[name].num_rows, bool)
                continue
            if keys is None:  # keys too many to remember: write what is held, then upsert as usual
                if not self._told_keys:
                    self._told_keys = True
                    self._notify(f"note: {name}: the store holds more keys than EVENTKG_KEYSET_MAX="
                                 f"{settings.keyset_max():,} lets it remember, so the rest of this ingest is "
                                 "written batch by batch (slower, and a failure keeps the batches written); "
                                 "raise EVENTKG_KEYSET_MAX above the store's nodes and edges for one bulk session")
                self.flush()
                return None
            present, unsure = keys.lookup(*fps[name])
            known[name] = present | unsure
        self._hold_split(tables, fps, known, result)
        if edges and self._fresh:  # the node phase of a loader is over: write its nodes while it reads on
            self.flush(list(NODE_TYPES))
        return result

    def defers(self, name: str) -> bool:
        """True when every row of the rel table ``name`` waits for the end of this bulk session
        (upserted after the held rows) without a key set: the table held rows when the session
        first saw it, and no key set was built for it yet.

        Why: a key set of a stored rel table is built by a scan of the table, which grows with the
        graph, not with the rows sent (at 10M/30M, 61 s of a second file's ingest). At the end
        the waiting rows are checked by digest (a re-run after a crash sends the stored rows
        again: skipped); else the rows naming a node this session added are new by that alone, and
        only the others are looked up (:meth:`_write_deferred`).
        """
        if name in self._deferred:
            return True
        if self.spool is None or self._fresh or name not in REL_TYPES or name in self._keys or name in self._unkeyed:
            return False
        if not count_rows(self._database.conn, name):
            return False
        self._deferred.add(name)
        return True

    def looks_up(self, name: str) -> bool:
        """True when the node table ``name`` held more than ``SCAN_MAX_NODES`` nodes when this bulk
        session, which began on a non-empty store, first saw it, and has no key set: each batch's
        keys are then looked up in the session's own new keys and asked of the engine
        (:meth:`_held_or_stored`, a keyed lookup of ~3 us per key) instead of scanning the table's
        keys once (which grows with the table, not with the rows sent).

        The engine answers those lookups from its buffer pool while the loader holds its own
        memory (its id map, the batches in flight), so the pool is cut to the share the node
        COPYs get then (``node_pool_bytes``) until the session writes (a re-run after SIGKILL at
        ASER 10M/30M went over the budget with the whole pool filled here; ``docs/performance.md``)."""
        if name in self._looked_up:
            return True
        if self.spool is None or self._fresh or name not in NODE_TYPES or name in self._keys:
            return False
        if count_rows(self._database.conn, name) <= SCAN_MAX_NODES:
            return False
        self._looked_up.add(name)
        self._database.set_buffer_pool(min(self._database.pool_bytes, node_pool_bytes()))
        return True

    def session_keys(self, label: str) -> KeySet | None:
        """For a node table the session looks up (:meth:`looks_up`), the keys it holds new (what
        an endpoint check must not ask the engine about: they are not written yet); else None."""
        return self._new_nodes.setdefault(label, KeySet()) if label in self._looked_up else None

    def _held_or_stored(self, name: str, table: pa.Table, fps: Fingerprints) -> np.ndarray:
        """Mask of the rows of a looked-up node table whose key this session holds (or may: a
        shared first hash) or the engine stores."""
        present, unsure = self._new_nodes.setdefault(name, KeySet()).lookup(*fps)
        known = present | unsure
        ask = np.flatnonzero(~known)
        if len(ask):
            ids = table.column("id").take(pa.array(ask))
            stored = existing_ids(self._database.conn, name, ids.to_pylist(), ["id"], chunk=LOOKUP_CHUNK).column(0)
            known[ask[pc.is_in(ids, value_set=stored).to_numpy(zero_copy_only=False)]] = True
        return known

    def _holds_unkeyed(self, name: str, keys: KeySet | None) -> bool:
        """True when the rel table ``name`` is held without a key set: it held no row when this
        session first held rows of it (its key set, built then, was empty), so none of its rows
        can be stored and each repeated key is merged when the table is COPYed
        (:meth:`_merge_repeats`), counted as the upsert would have counted it.

        Why: a key set costs 16 B per key held for the whole session, and a fresh ingest's rel
        tables hold most of the keys, growing with the graph while nothing else in the session
        does; looking up and inserting each batch's keys costs CPU too (``docs/performance.md``).
        """
        if name in self._unkeyed:
            return True
        if name in REL_TYPES and keys is not None and not len(keys) and name not in self.spool.rows:
            self._unkeyed.add(name)
            return True
        return False

    def _hold(self, tables: Mapping[str, pa.Table], fps: Mapping[str, Fingerprints], result: WriteResult) -> None:
        """Spool new rows (they count as created, and their keys as stored, from now on)."""
        for name, table in tables.items():
            try:  # an unkeyed table's fingerprints wait beside it, for _merge_repeats (hashed once, here)
                self.spool.add(name, table, fps[name] if name in self._unkeyed else None)
            except OSError as exc:  # e.g. a full disk: what is held is still written at the end (this
                # batch's earlier tables included; they are valid rows, and a rerun completes the rest)
                raise StoreError(f"cannot hold rows in {self.spool.folder}: {exc.strerror or exc}") from None
            self._add_keys(name, *fps[name])
            if name in NODE_TYPES and not self._fresh:  # what an edge naming them cannot be stored with
                self._new_nodes.setdefault(name, KeySet()).add(*fps[name])
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
        spool instead, merged into the held table before its COPY (:meth:`_write_held_nodes`).
        """
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
                self._wait(name, table.filter(pa.array(waiting)))
            if again.any():
                self._repeats = self._repeats or TableSpool(self._beside)
                self._wait(name, table.filter(pa.array(again)), self._repeats)
            result.created.setdefault(name, int(new.sum()))
            result.updated.setdefault(name, 0)

    def _repeats_added(self, name: str, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Mask of the rows of the node table ``name`` whose key this session added to a store that
        held nodes (:meth:`_hold`; only a key present, not one sharing a first hash)."""
        added = self._new_nodes.get(name) if name in NODE_TYPES else None
        if added is None or not len(added):
            return np.zeros(len(h1), bool)
        return added.lookup(h1, h2)[0]

    def _wait(self, name: str, table: pa.Table, spool: TableSpool | None = None) -> None:
        """Add rows to a spool of waiting rows (default the one upserted after the flush)."""
        if spool is None:
            self._late = spool = self._late or TableSpool(self._beside)
        try:
            spool.add(name, table)
        except OSError as exc:
            raise StoreError(f"cannot hold rows in {spool.folder}: {exc.strerror or exc}") from None

    def _will_fold(self, name: str) -> bool:
        """True when :meth:`_fold_late` will merge waiting rows into the held table ``name``."""
        return bool(self._late) and name in self._late.rows and not count_rows(self._database.conn, name)

    def _fold_late(self, name: str, held: pa.Table) -> pa.Table:
        """The held rows of ``name`` with its waiting rows merged in, when none of them can be stored.

        When the engine holds no row of the table yet (a fresh ingest), every waiting row repeats
        a held key, so it is merged into the held table in Arrow (later rows win, sources
        unioned, as the upsert would) and the table goes in with its one COPY. Upserting them
        after the COPY instead updates rows spread over the whole table inside one transaction,
        which keeps engine memory until the next checkpoint; merged here they cost less time and
        no engine memory (``docs/performance.md``). A table
        the engine already holds rows of (a re-run) keeps the upsert path.
        """
        if not self._will_fold(name):
            return held
        late = self._late.take(name).cast(held.schema)
        return self._merge_into(name, held, late)

    def _merging_repeats(self, name: str) -> Iterator[pa.Table]:
        """The held rows of an unkeyed rel table (:meth:`_holds_unkeyed`) with each repeated key
        merged into one row, as :meth:`_fold_late` merges waiting rows: later rows win, sources
        unioned, a key whose value changes counted as updated, and the repeats taken off the
        created count (each was counted when it was held).

        Streamed: the rows are read back a part at a time and only the rows of repeated keys are
        kept in memory, so what this holds does not grow with the table but with its repeats
        (16 B of key fingerprints per row, for the moment of the sort, aside)."""
        rows = self.spool.rows[name]
        fps = self.spool.take_keys(name, rows)
        path = self.spool.held_file(name)
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
            self.late_result.created[name] = self.late_result.created.get(name, 0) - late_rows.num_rows
            yield self._merge_late(name, pa.concat_tables(firsts), late_rows)

    def _merge_into(self, name: str, held: pa.Table, late: pa.Table) -> pa.Table:
        """``held`` (one row per key) with the rows ``late`` of some of its keys merged in (:meth:`_merge_late`)."""
        keys = ("id",) if name in NODE_TYPES else ("src", "dst")
        hit = _rows_with_keys(held, late, keys)  # the held first rows of the repeated keys
        merged = self._merge_late(name, held.filter(hit), late)
        return pa.concat_tables([held.filter(pc.invert(hit)), merged])

    def _merge_late(self, name: str, first: pa.Table, late: pa.Table) -> pa.Table:
        """The held rows ``first`` of repeated keys merged with their waiting rows ``late`` (later
        rows win, sources unioned), counting the keys whose stored values change as updated."""
        kind = NODE_TYPES.get(name) or REL_TYPES[name]
        keys = ("id",) if name in NODE_TYPES else ("src", "dst")
        repeats, _ = dedupe(late, keys, kind.properties)
        self.late_result.updated[name] = self.late_result.updated.get(name, 0) + len(changed_rows(repeats, first, keys))
        merged, _ = dedupe(pa.concat_tables([first, late]), keys, kind.properties)
        return merged

    def _apply_late(self, names: Sequence[str]) -> None:
        """Upsert the waiting rows of ``names`` after the held rows, unless they are exactly the rows
        the table held before this session (:meth:`_late_rows_are_stored`): each node table split by
        key into parts of about ``LATE_UPSERT_ROWS`` rows, each part deduplicated and upserted in one
        transaction, then checkpointed and the database reopened."""
        if not self._late and not self._checked:
            return
        for name in [n for n in names if n in self._late.rows or n in self._checked]:
            path, rows, stored = self._checked.pop(name, None) or self._check_late(name)
            try:
                if stored:
                    self.late_skipped[name] = self.late_skipped.get(name, 0) + rows
                    release_free_memory()  # the parts read to digest them (nothing was written)
                    continue
                self._notify(f"merging {name} ({rows:,} rows seen before)")
                if not (name in self._deferred and self._write_deferred(name, path)):
                    self._upsert_late_file(name, path, rows)
            finally:
                path.unlink(missing_ok=True)
            self._emit(StoreEvent("merged", name))
            # the lookups filled the buffer pool with the table's pages: hand them back before
            # the loader's next rows (figures: docs/performance.md)
            self._database.checkpoint_and_release()

    def _check_late(self, name: str) -> tuple[Path, int, bool]:
        """Take the waiting rows of ``name`` from the spool: their file, rows, and whether they are
        exactly the rows the table held before this session (:meth:`_late_rows_are_stored`)."""
        rows = self._late.rows[name]
        path = self._late.held_file(name)
        return path, rows, self._late_rows_are_stored(name, path, rows)

    def _late_rows_are_stored(self, name: str, path: Path, rows: int) -> bool:
        """True when the waiting rows of ``name`` (deduplicated as the upsert would) are exactly
        the rows the table held before this session's COPYs: then every one equals its stored
        row and upserting them changes nothing (a re-run after a crash sends the stored rows again).

        Decided by digests (:mod:`eventkg.graphstore.digest`): the stored table's (kept by the
        COPY path, see ``digest_book``) less this session's COPYed rows', against the waiting
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
        now = self._digests.now(name)
        if now is None or count_rows(self._database.conn, name) != now.rows:
            return None
        return now - self._copied.get(name, EMPTY)

    def _write_deferred(self, name: str, path: Path) -> bool:
        """The waiting rows of a deferred rel table (:meth:`defers`) that are not exactly its stored
        rows, deduplicated: a row naming a node this session added is new (no stored edge can name
        it) and is COPYed (its digest kept, as for held rows); the others are skipped when they are
        the stored rows (by digest), else looked up and upserted, by keyed queries per source when
        they are few next to the table (``upsert.per_source_queries``; the rows found are what the
        upsert compares, each edge asked once), else through the table's key set, built now. False
        when its keys are too many to remember (the caller upserts them all).

        Why: a second file adds mostly new nodes, so most of its edges name one; they cost a hash
        lookup each here, where a key set of the stored table costs a scan of it (figures:
        ``docs/performance.md``)."""
        kind, keys = REL_TYPES[name], ("src", "dst")
        table = next(read_partitions(path, 1, partial(_first_key_hash, keys)))
        table, (h1, h2) = dedupe(table, keys, kind.properties)
        new = self._names_new_node(name, table)
        found: pa.Table | None = None  # the stored edges among the others, when asked per source
        if (ask := np.flatnonzero(~new)).size:
            rows = table.take(pa.array(ask))
            if self._few_sources(name, rows):  # keyed queries per source
                found = existing_edges(self._database.conn, name, rows, chunk=LOOKUP_CHUNK)
                new[ask[~pc.is_in(key_column(rows), value_set=key_column(found)).to_numpy(zero_copy_only=False)]] = True
            else:
                keyset = self._keys.get(name)
                if keyset is None:
                    return False
                present, unsure = keyset.lookup(h1, h2)
                new |= ~(present | unsure)
            rows = None
        stored = self._stored_before_session(name)
        known = table.filter(pa.array(~new))
        if new.any():
            self._copy_held(name, table.filter(pa.array(new)))
            self.late_result.created[name] = self.late_result.created.get(name, 0) + int(new.sum())
            self._add_keys(name, h1[new], h2[new])
        table = None
        if not known.num_rows:
            return True
        if stored is not None and table_digest(known) == stored:  # the stored rows again: nothing to write
            self.late_skipped[name] = self.late_skipped.get(name, 0) + known.num_rows
            return True
        self._keeping_digest_if_unchanged(name, lambda: self._upsert_late(name, known, (h1[~new], h2[~new]), found))
        return True

    def _names_new_node(self, name: str, table: pa.Table) -> np.ndarray:
        """Mask of the edges of ``table`` (a rel table ``name``) whose source or target this session
        added as a new node (present in its new keys; a shared first hash counts as not new)."""
        rel = REL_TYPES[name]
        new = np.zeros(table.num_rows, bool)
        for label, column in ((rel.source, "src"), (rel.target, "dst")):
            if (held := self._new_nodes.get(label)) is not None and len(held):
                new |= held.lookup(*fingerprints(table.column(column)))[0]
        return new

    def _few_sources(self, name: str, rows: pa.Table) -> bool:
        """True when the stored edges among ``rows`` are found faster by keyed queries per source
        than by a key set of the table (see ``upsert.existing_edges``)."""
        return per_source_queries(len(pc.unique(rows.column("src"))), count_rows(self._database.conn, name))

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
        before = self._digests.now(name)
        self._digests.forget([name])
        if not upserts() and before is not None:
            self._digests.note(name, before)

    def _upsert_late(self, name: str, table: pa.Table, fps: Fingerprints, stored: pa.Table | None = None) -> int:
        """Upsert deduplicated waiting rows, counting what it did; returns the rows written
        (created + updated). New rows go in one transaction; changed stored nodes after it, a
        few node groups per transaction (:func:`~eventkg.graphstore.ladybug.upsert.update_by_node_groups`).
        ``stored``: their stored rows when the caller looked them up already (not asked again)."""
        deferred: list[dict[str, Any]] = []
        defer = (lambda _conn, _name, rows: deferred.extend(rows)) if name in NODE_TYPES else None

        def write() -> tuple[int, int, Fingerprints]:
            if stored is None:
                return self._writer.upsert(name, table, fps, defer)
            return upsert(self._database.conn, name, table, fps, None, chunk=LOOKUP_CHUNK, update=defer, stored=stored)

        created, updated, new_fps = self._database.in_transaction(write)
        if deferred:
            update_by_node_groups(lambda: self._database.conn, name, deferred, self._database.in_checkpointed_transaction,
                                  update_node_groups())
        self._add_keys(name, *new_fps)
        for counts, n in ((self.late_result.created, created), (self.late_result.updated, updated)):
            counts[name] = counts.get(name, 0) + n
        self._database.wrote(created + updated)
        if self._database.unflushed_rows >= EARLY_CHECKPOINT_ROWS:
            self._database.checkpoint()
        return created + updated

    # -- writing the held tables -------------------------------------------------------------
    def flush(self, names: Sequence[str] | None = None) -> None:
        """Write the held tables (``names``, default all; nodes first), then upsert their waiting
        rows (:meth:`_apply_late`), keeping the engine's memory bounded by fixed budgets rather
        than by the graph's size. Outside a session, nothing to do.

        Each table goes in from staged Parquet files, one COPY unless the memory budget says more
        (:meth:`_copy_budgeted`); rel tables are checkpointed once ``REL_PENDING_EDGES`` edges
        wait for it. After each checkpoint the database is reopened and freed memory handed back
        (``Database.checkpoint_and_release``), so each COPY starts from the same floor.

        A COPY into a rel table that already held edges is checkpointed at once
        (``CHECKPOINT_APPENDS``): it keeps engine memory in proportion to the nodes the table joins
        until the next checkpoint, however few its edges and wherever they are (ladybug 0.22;
        ``bench/second_source_bench.py``). Counting such tables by their edges let them pile up
        and doubled a second source's peak, in the same time (figures: ``docs/performance.md``).
        """
        if not self.spool and not self._late and not self._repeats:
            return
        appends = self._appends = self._append_pool(names or [*NODE_TYPES, *REL_TYPES])  # before any write
        try:
            order = [n for n in names or [*NODE_TYPES, *REL_TYPES] if n in self.spool.rows]
            pending = 0  # edges COPYed since the last checkpoint
            for done, name in enumerate(order, 1):
                rows = self.spool.rows[name]
                self._notify(f"writing {name} ({done}/{len(order)}, {rows:,} rows)")
                if name in NODE_TYPES:
                    self._database.set_buffer_pool(node_pool_bytes())  # no-op once set (see node_pool_bytes)
                    self._write_held_nodes(name)
                    continue
                if pending and pending + rows > REL_PENDING_EDGES:
                    self._database.checkpoint_and_release()
                    pending = 0
                appending = CHECKPOINT_APPENDS and name not in self._unkeyed and count_rows(self._database.conn, name) > 0
                self._write_held_edges(name)
                pending += rows
                if appending:  # checkpointed at once (see the docstring)
                    self._database.checkpoint_and_release()
                    pending = 0
            if pending:
                self._database.checkpoint_and_release()
            for name in [n for n in names or NODE_TYPES if self._repeats and n in self._repeats.rows]:
                self._wait(name, self._repeats.take(name))  # none held now (an earlier flush wrote them)
            self._database.set_buffer_pool(max(buffer_pool_bytes(), appends))
            self._apply_late(names or [*NODE_TYPES, *REL_TYPES])
            self._notify("")  # done writing
        except BaseException as exc:
            self._database.failed = True
            self._keys.clear()  # they hold keys that were never written
            self._unkeyed.clear()
            self._deferred.clear()
            self._looked_up.clear()
            self._checked.clear()  # their files go with the spool's folder
            self._digests.abandon_pending()  # what was written is not known (their tables' digests are dropped)
            if isinstance(exc, RuntimeError):  # the engine's own errors: one line, as every StoreError
                raise StoreError(f"LadybugDB failed while writing held rows: {short_error(exc)} "
                                 f"(EVENTKG_MEMORY_MB={settings.memory_mb()})") from exc
            raise

    def _append_pool(self, names: Sequence[str]) -> int:
        """The buffer pool the appends among ``names`` need: rel tables with held or waiting rows
        whose stored table holds edges (:func:`~eventkg.graphstore.ladybug.engine.append_pool_bytes`
        of their end labels' nodes, stored and held); 0 when none append. Waiting rows alone that
        are exactly the stored ones append nothing (a re-run's, after a failure: checked here by
        digest, the answer kept for :meth:`_apply_late`).

        Raises a one-line :class:`StoreError` before anything is written when that is more than the
        memory budget lets the engine have (``edge_pool_bytes``), or than the budget leaves beside
        what the COPY and its checkpoint take outside the pool (``append_margin_bytes``, kept for
        :meth:`_before_copy`) and the process's own memory: the engine would fail mid-write with
        its buffer pool full, or the process go over its budget."""
        need, margin, worst = 0, 0, ""
        conn = self._database.conn
        held_rows = self.spool.rows if self.spool else {}
        stored: dict[str, int] = {}  # nodes per label, counted once however many tables join it
        for name in names:
            held = name in held_rows or (self._late is not None and name in self._late.rows)
            if name not in REL_TYPES or not held or not count_rows(conn, name):
                continue
            if name not in held_rows:  # only waiting rows: none appended when they are all stored
                self._checked[name] = self._check_late(name)  # (a re-run's rows, by digest)
                if self._checked[name][2]:
                    continue
            rel = REL_TYPES[name]
            labels = {rel.source, rel.target}
            for label in labels - stored.keys():
                stored[label] = count_rows(conn, label)
            nodes = sum(stored[label] + held_rows.get(label, 0) for label in labels)
            if append_pool_bytes(nodes) > need:
                need, worst = append_pool_bytes(nodes), f"{name} ({nodes:,} {' and '.join(sorted(labels))} nodes)"
                margin = append_margin_bytes(nodes)
        self._append_margin = margin
        if not need:
            return 0
        # beside the pool: what the append's COPY and checkpoint take, and the process's own memory, counted up
        # to the share of the budget the rel COPYs' pool leaves it (a process holding more, say a notebook with
        # models loaded, is over its budget whatever this append does: a small append is not refused for it)
        held = min(self._beside_pool() or 0, budget_share(1 - EDGE_POOL_SHARE))
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

    def _beside_pool(self) -> int | None:
        """What the process holds beside the buffer pool's pages in use (None where not known)."""
        rss = resident_bytes()  # less the pool's pages, which a COPY reuses when the database stays open
        return None if rss is None else rss - pool_in_use(self._database.conn)

    def _write_held_nodes(self, name: str) -> None:
        """COPY a held node table from staged Parquet files, as few COPYs as the memory budget
        allows (rows repeating a waiting key left out, then merged with those and added last; see
        :meth:`_fold_late`), each checkpointed. Waiting rows merged so: every one when the table
        is empty; else the rows repeating a key this session added (:meth:`_hold_split`), merged
        as a fresh table's are, so they cost no update after the COPY (updates go a few node groups
        per transaction, each checkpointed, and a checkpoint of a big stored table is slow). Such a
        row whose key is not held after all (an earlier flush wrote it) waits to be upserted.

        Why not always one: the engine builds a COPY's primary-key index in its buffer pool
        (:func:`~eventkg.graphstore.ladybug.engine.copy_rows`), so past some size one COPY fails.
        Why few, each of one range of that index's hash indexes (:meth:`_copy_by_index_range`):
        each checkpoint rewrites the parts of the index its COPY reached.
        """
        folded = self._late.take(name) if self._will_fold(name) else None
        again = self._repeats.take(name) if self._repeats is not None else None
        if folded is not None and again is not None:
            again = again.cast(folded.schema)
        ids = [t.column("id") for t in (folded, again) if t is not None]
        ids = pa.chunked_array([c for col in ids for c in col.chunks], pa.string()) if ids else None
        schema = next((t.schema for t in (folded, again) if t is not None), None)

        wanted = _id_set(ids) if ids is not None else None

        def parts() -> Iterator[pa.Table]:
            nonlocal again
            firsts = []
            for part in self.spool.slices(name, STAGE_READ_ROWS):
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
                self._wait(name, again.filter(pc.invert(held)))
                again = again.filter(held)
            late = [t for t in (folded, again) if t is not None]
            yield self._merge_late(name, first, pa.concat_tables(late) if len(late) > 1 else late[0])

        self._copy_budgeted(name, parts(), self.spool.rows.get(name, 0) + (len(ids) if ids is not None else 0))
        self._emit(StoreEvent("copied", name))
        self._database.checkpoint_and_release()

    def _write_held_edges(self, name: str) -> None:
        """COPY a held rel table from staged Parquet files (one COPY unless the memory budget says
        more): its waiting rows merged in first (:meth:`_fold_late`), or its repeated keys when it
        was held without a key set (:meth:`_merging_repeats`). An unkeyed table's key set is built
        again from the table if a later write needs it."""
        unkeyed = name in self._unkeyed
        rows = self.spool.rows.get(name, 0)
        if unkeyed:
            parts = self._merging_repeats(name)
        elif self._will_fold(name):
            parts = iter([self._fold_late(name, self.spool.take(name))])
        else:
            parts = self.spool.slices(name, STAGE_READ_ROWS)
        self._copy_budgeted(name, parts, rows)
        if unkeyed:
            self._unkeyed.discard(name)
            self._keys.drop(name)
        self._emit(StoreEvent("copied", name))

    def _copy_budgeted(self, name: str, parts: Iterator[pa.Table], rows: int) -> None:
        """COPY ``parts`` into ``name`` from staged Parquet files of at most the rows one COPY may
        take under the memory budget (:func:`~eventkg.graphstore.ladybug.engine.copy_rows`), each
        but the last followed by a checkpoint; says so first (``notify``) when the table takes more
        than one. A node table's COPYs each take the keys of one range of the engine's hash
        indexes (:meth:`_copy_by_index_range`); a rel table's, its rows in the order held."""
        limit = copy_rows(name, self._database.pool_bytes if name in NODE_TYPES else edge_pool_bytes())
        bounds = index_ranges(rows, limit) if name in NODE_TYPES else None
        copies = len(bounds) - 1 if bounds is not None else -(-rows // limit)
        if copies > 1:
            self._notify(f"note: {name}: {rows:,} rows need {copies} COPYs of at most {limit:,} "
                         f"under EVENTKG_MEMORY_MB={settings.memory_mb()} (raise it for fewer)")
        schema = row_schema(("id",) if name in NODE_TYPES else ("src", "dst"),
                            (NODE_TYPES.get(name) or REL_TYPES[name]).properties)
        if bounds is not None and copies > 1:
            self._copy_by_index_range(name, parts, bounds, limit, schema)
        else:
            self._copy_in_slices(name, parts, limit, schema)

    def _copy_in_slices(self, name: str, parts: Iterator[pa.Table], limit: int, schema: pa.Schema) -> None:
        """COPY ``parts`` into ``name`` in staged files of at most ``limit`` rows, in order, each but
        the last followed by a checkpoint."""
        stage: Staged | None = None
        base: TableDigest | None = None
        try:
            for part in parts:
                while part.num_rows:
                    if stage is None:
                        base = self._writer.digest_base(name)
                        stage = Staged(self.spool.folder / f"{name}.parquet", schema, digest=base is not None)
                    taken = part.slice(0, limit - stage.rows)
                    stage.add(taken)
                    part = part.slice(taken.num_rows)
                    if stage.rows >= limit:
                        self._copy_stage(name, stage, base)
                        stage.discard()
                        stage = None
                        self._database.checkpoint_and_release()
                part = None
            if stage is not None:
                self._copy_stage(name, stage, base)
        finally:
            if stage is not None:
                stage.discard()

    def _copy_by_index_range(self, name: str, parts: Iterator[pa.Table], bounds: np.ndarray, limit: int,
                             schema: pa.Schema) -> None:
        """COPY the node rows ``parts`` into ``name``, one staged file per range of the engine's hash
        indexes between consecutive ``bounds`` (:mod:`~eventkg.graphstore.ladybug.index_parts`),
        each but the last followed by a checkpoint, which then rewrites only that range of the
        table's primary-key index. Every file is staged before the first COPY (the table staged
        twice on disk for that moment). A range that drew more than ``limit`` rows after all goes in
        slices of its own."""
        digest = self._writer.digest_base(name) is not None
        stages = [Staged(self.spool.folder / f"{name}.{i}.parquet", schema, digest=digest)
                  for i in range(len(bounds) - 1)]
        try:
            for part in parts:
                for stage, rows in zip(stages, split_by_range(part, bounds), strict=True):
                    stage.add(rows)
                part = rows = None
            full = [stage for stage in stages if stage.rows]
            for stage in full:  # every writer's buffers freed before the first COPY sizes its pool
                stage.close()
            for i, stage in enumerate(full):
                if i:
                    self._database.checkpoint_and_release()
                if stage.rows > limit:
                    self._copy_in_slices(name, parquet_parts(stage.path), limit, schema)
                else:
                    self._copy_stage(name, stage, self._writer.digest_base(name))
                stage.discard()
        finally:
            for stage in stages:
                stage.discard()

    def _copy_stage(self, name: str, stage: Staged, base: TableDigest | None) -> None:
        """COPY one staged file into ``name`` (its pool sized first), remembering the rows' digest.
        The file is closed before the pool is sized: its writer's buffers would otherwise count as
        memory beside the pool and shrink it (``docs/performance.md``)."""
        stage.close()
        self._before_copy(name)
        copied = self._writer.copy_staged(name, stage, base)
        if copied is not None:
            self._copied[name] = self._copied.get(name, EMPTY) + copied

    def _before_copy(self, name: str) -> None:
        """Hand back what staging freed, then size the pool for a rel COPY to what the budget leaves
        (:func:`~eventkg.graphstore.ladybug.engine.edge_pool_for`); node COPYs keep theirs, which
        :func:`~eventkg.graphstore.ladybug.engine.copy_rows` planned the rows by."""
        release_free_memory()
        if name in REL_TYPES:
            appending = bool(self._appends) and count_rows(self._database.conn, name) > 0
            fit = edge_pool_for(self._beside_pool(), self._append_margin if appending else EDGE_COPY_MARGIN)
            if appending:  # the pool it needs (_append_pool checked that the budget leaves it)
                fit = max(fit, self._appends)
            pool = self._database.pool_bytes
            if pool > fit or pool < fit - POOL_SLACK:  # else keep the open database
                self._database.set_buffer_pool(fit)

    def _copy_held(self, name: str, table: pa.Table) -> None:
        """COPY new rows of a waiting table (its digest kept, as for held rows)."""
        if table.num_rows:
            digest = self._writer.copy_tracked(name, table)
            if digest is not None:
                self._copied[name] = self._copied.get(name, EMPTY) + digest
            self._database.wrote(table.num_rows)


def _first_key_hash(keys: tuple[str, ...], batch: pa.RecordBatch) -> np.ndarray:
    """The first 64-bit fingerprint of each row's key (what :func:`~eventkg.graphstore.ladybug.spool.read_partitions` splits by)."""
    if keys == ("id",):
        return fingerprints(batch.column("id"))[0]
    return edge_fingerprints(batch.column("src"), batch.column("dst"))[0]


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
