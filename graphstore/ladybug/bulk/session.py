"""The bulk session's facade: the one object :class:`~eventkg.graphstore.ladybug.store.LadybugStore` uses.

:class:`BulkSession` owns a session's life: it begins (:meth:`BulkSession.holding`), hands each
batch to its parts, writes what they hold at its end, and undoes what it wrote when it fails.
The parts share one :class:`~eventkg.graphstore.ladybug.bulk.state.SessionState`: planning
(:class:`~eventkg.graphstore.ladybug.bulk.planning.SessionPlan`), holding batches
(:class:`~eventkg.graphstore.ladybug.bulk.holding.BatchHolder`), writing held tables
(:class:`~eventkg.graphstore.ladybug.bulk.held_tables.HeldTables` through
:class:`~eventkg.graphstore.ladybug.bulk.staged_copies.StagedCopies`) and settling waiting rows
(:class:`~eventkg.graphstore.ladybug.bulk.waiting.WaitingRows`).

Invariant: all or nothing. A failure inside the session writes nothing it held, and into a store
that held no node when it began (whose nodes are written early, while the loader reads its edges)
deletes again what was written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import pyarrow as pa

from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug.bulk.held_tables import HeldTables
from eventkg.graphstore.ladybug.bulk.holding import BatchHolder
from eventkg.graphstore.ladybug.bulk.planning import SessionPlan
from eventkg.graphstore.ladybug.bulk.staged_copies import StagedCopies
from eventkg.graphstore.ladybug.bulk.state import SessionState
from eventkg.graphstore.ladybug.bulk.waiting import WaitingRows
from eventkg.graphstore.ladybug.database import Database
from eventkg.graphstore.ladybug.digest_file import DigestTracker
from eventkg.graphstore.ladybug.engine import buffer_pool_bytes, max_offset, release_free_memory
from eventkg.graphstore.ladybug.events import EventHook
from eventkg.graphstore.ladybug.spool import TableSpool
from eventkg.graphstore.ladybug.stored_keys import Fingerprints, StoredKeys
from eventkg.graphstore.ladybug.writer import TableWriter
from eventkg.graphstore.model import NODE_TYPES


class BulkSession:
    """The bulk session of one :class:`~eventkg.graphstore.ladybug.store.LadybugStore`: what it holds and
    waits for between :meth:`holding` and its end, and how the held tables are written.

    Built from the store's parts: the open ``database`` (checkpoints, buffer pool, row counts),
    its ``digests``, its key sets (``keys``) and the ``writer`` every write goes through; ``notify``
    gets a short message as each held table is written (the store's ``on_bulk_write``), ``emit`` a
    :class:`~eventkg.graphstore.ladybug.events.StoreEvent` once it is (the store's ``on_event``).
    """

    def __init__(self, beside: Path, *, database: Database, digests: DigestTracker, keys: StoredKeys,
                 writer: TableWriter, notify: Callable[[str], None], emit: EventHook | None = None) -> None:
        self._state = state = SessionState(beside, database, digests, keys, writer, notify,
                                           emit or (lambda event: None))
        self._plan = SessionPlan(state)
        self._waiting = WaitingRows(state)
        self._held = HeldTables(state, self._waiting, StagedCopies(state))
        self._holder = BatchHolder(state, self._plan, self._waiting, self._held)

    @property
    def spool(self) -> TableSpool | None:
        """New rows held back (None: no session)."""
        return self._state.spool

    @property
    def late_result(self) -> WriteResult:
        """What merging and upserting waiting rows did (read by the ingest report)."""
        return self._state.late_result

    @late_result.setter
    def late_result(self, value: WriteResult) -> None:
        self._state.late_result = value

    @property
    def late_skipped(self) -> dict[str, int]:
        """Waiting rows found equal to the stored table by digest, per table."""
        return self._state.late_skipped

    @property
    def active(self) -> bool:
        return self._state.spool is not None

    def held_rows(self) -> dict[str, int]:
        """Rows held now, per table (empty outside a session)."""
        spool = self._state.spool
        return dict(spool.rows) if spool is not None else {}

    @property
    def unkeyed(self) -> frozenset[str]:
        """Rel tables held without a key set (:meth:`.SessionPlan.holds_unkeyed`)."""
        return frozenset(self._state.unkeyed)

    @property
    def deferred(self) -> frozenset[str]:
        """Stored rel tables whose rows all wait for the end of the session (:meth:`defers`)."""
        return frozenset(self._state.deferred)

    @property
    def looked_up(self) -> frozenset[str]:
        """Stored node tables whose keys are asked of the engine batch by batch (:meth:`looks_up`)."""
        return frozenset(self._state.looked_up)

    def defers(self, name: str) -> bool:
        """True when every row of the rel table ``name`` waits for the end of this session
        (:meth:`.SessionPlan.defers`)."""
        return self._plan.defers(name)

    def looks_up(self, name: str) -> bool:
        """True when the keys of the node table ``name`` are asked of the engine batch by batch
        (:meth:`.SessionPlan.looks_up`)."""
        return self._plan.looks_up(name)

    def session_keys(self, label: str) -> KeySet | None:
        """For a node table the session looks up, the keys it holds new; else None
        (:meth:`.SessionPlan.session_keys`)."""
        return self._plan.session_keys(label)

    def hold_batch(self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table],
                   fps: Mapping[str, Fingerprints]) -> WriteResult | None:
        """Hold a checked batch in the session; None when its keys are too many to remember
        (then what is held has been written, and the caller upserts the batch as usual;
        :meth:`.BatchHolder.hold_batch`)."""
        return self._holder.hold_batch(nodes, edges, fps)

    def flush(self, names: Sequence[str] | None = None) -> None:
        """Write the held tables (``names``, default all; nodes first), then settle their waiting
        rows (:meth:`.HeldTables.flush`). Outside a session, nothing to do."""
        self._held.flush(names)

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
        state = self._state
        if state.spool is not None or state.database.read_only:
            yield
            return
        try:
            state.spool = TableSpool(state.beside)
        except OSError:  # no room for the files beside the store: write batch by batch instead
            yield
            return
        state.late_result = WriteResult()
        state.copied, state.late_skipped, state.appends, state.append_margin = {}, {}, 0, 0
        state.fresh = all(max_offset(state.database.conn, label) < 0 for label in NODE_TYPES)
        state.new_nodes = {}
        state.digests.wrote = False
        try:
            yield
        except BaseException:
            self._abandon()
            raise
        self.end()

    def nodes_done(self) -> None:
        """The loader sends no more nodes: into a fresh store, write the held ones now (it reads its
        edges meanwhile); into one that holds nodes, they wait for the end (see :meth:`holding`)."""
        state = self._state
        if state.spool is not None and state.fresh:
            for label in NODE_TYPES:  # rebuilt by a scan if a later batch asks (ASER's edges do not:
                state.keys.drop(label)  # their ends are known), 16 B per node freed first
            release_free_memory()
            self.flush(list(NODE_TYPES))

    def end(self) -> None:
        """Write what the session holds (unless the engine failed) and remove its files."""
        state = self._state
        spool = state.spool
        if spool is None:  # no session, or close() already ended it
            return
        try:
            if not state.database.failed:
                self.flush()
                # the pool every open store has (or the appends' bigger one): a flush with nothing to write,
                # after lookups that cut it (looks_up), leaves it small
                state.database.set_buffer_pool(max(buffer_pool_bytes(), state.appends))
        except BaseException:
            self._undo_fresh_session()
            raise
        finally:
            self._close_spools(spool)

    def _abandon(self) -> None:
        """The caller failed inside the session: drop what is held, and undo what was written."""
        spool = self._state.spool
        if spool is None:
            return
        self._close_spools(spool)
        self._state.keys.clear()  # they hold keys that were never written
        self._undo_fresh_session()

    def _undo_fresh_session(self) -> None:
        """After a failed session into a store that held no node: delete every row written since,
        so the store is again what it was (empty). Else what was written stays (the ingest mark
        tells readers)."""
        state = self._state
        if not (state.digests.wrote and state.fresh):
            return
        try:
            state.database.failed = False
            state.database.reopen()  # a failed COPY may have left the connection unusable
            state.writer.delete_everything()
            state.digests.wrote = False
        except Exception:  # noqa: BLE001 - the first error is the one to report
            state.database.failed = True

    def _close_spools(self, spool: TableSpool) -> None:
        state = self._state
        state.spool = None
        state.unkeyed.clear()  # written (their key sets rebuilt when needed) or never to be
        state.deferred.clear()
        state.looked_up.clear()
        state.checked.clear()
        state.new_nodes = {}
        spools = [spool, state.late, state.repeats]
        state.late = state.repeats = None
        for each in spools:  # each closed and removed even when another fails
            if each is not None:
                with suppress(Exception):
                    each.close()
