"""The open LadybugDB database of a store: its connection, buffer pool, transactions and checkpoints.

:class:`Database` owns the ``ladybug.Database``/``Connection`` pair and reopens it when asked (a
checkpoint followed by a reopening hands back what the engine keeps of the rows it wrote), counts
the rows written since the last CHECKPOINT and since the last reopening, and remembers that a write
failed (then nothing is checkpointed: the WAL is left for recovery at the next open).

Invariant: every CHECKPOINT goes through :meth:`Database.fold_wal`, which then sets the digests it
made durable (:class:`~eventkg.graphstore.ladybug.digest_file.DigestTracker`, rule 2); every commit
stamps the digest book (rule 3). Auto-checkpoints are off: the store checkpoints every
``CHECKPOINT_ROWS`` rows and on close, and reopens past ``REOPEN_ROWS``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.ladybug.digest_file import DigestTracker
from eventkg.graphstore.ladybug.engine import release_failed_statement, release_free_memory, rollback, short_error
from eventkg.graphstore.ladybug.events import EventHook, StoreEvent
from eventkg.graphstore.ladybug.ingest_lock import ingest_lock_holder

LADYBUG_VERSION = "0.22"
CHECKPOINT_ROWS = 5_000_000  # rows written between checkpoints
REOPEN_ROWS = 1_000_000  # rows written between reopenings of the database (see Database.checkpoint)
RECOVERY_WAIT = 30.0  # seconds a read-only opening waits for a running ingest's checkpoint to end

T = TypeVar("T")


def import_ladybug() -> Any:
    """Import the right ``ladybug`` (an unrelated ``ladybug-core`` also installs one)."""
    try:
        import ladybug
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise StoreError("the embedded store needs the 'ladybug' package (pip install ladybug==0.22.0)") from exc
    version = getattr(ladybug, "__version__", "")
    if not hasattr(ladybug, "Database") or not str(version).startswith(LADYBUG_VERSION):
        raise StoreError(
            f"the installed 'ladybug' module ({getattr(ladybug, '__file__', '?')}, version {version or 'unknown'}) "
            f"is not LadybugDB {LADYBUG_VERSION}; uninstall ladybug-core and pip install ladybug==0.22.0"
        )
    return ladybug


class Database:
    """One store file opened in the engine, with ``pool_bytes`` of buffer pool.

    ``conn`` and ``db`` change when the database is reopened: read them at each use, never keep them.
    ``emit`` hears each checkpoint and reopening (:class:`~eventkg.graphstore.ladybug.events.StoreEvent`).
    """

    def __init__(self, url: str, *, read_only: bool, pool_bytes: int, digests: DigestTracker,
                 emit: EventHook | None = None) -> None:
        self.url = url
        self.read_only = read_only
        self.pool_bytes = pool_bytes
        self.digests = digests
        self.emit = emit or (lambda event: None)
        self.failed = False  # a write failed: no checkpoint from now on (the WAL is left for recovery)
        self.unflushed_rows = 0  # rows written since the last CHECKPOINT
        self.rows_since_open = 0  # rows written since the database was last (re)opened
        self.db: Any = None
        self.conn: Any = None
        self.open()

    @property
    def is_open(self) -> bool:
        return self.conn is not None

    def open(self) -> None:
        """Open the file (read-only: see :meth:`_open_read_only` for a file whose recovery is pending)."""
        if self.read_only:
            self._open_read_only()
        else:
            self._open_engine()

    def _open_read_only(self) -> None:
        """Open read-only. The engine refuses a file whose checkpoint recovery is pending: while a
        running ingest checkpoints, the opening is tried again for up to ``RECOVERY_WAIT`` seconds;
        with no ingest running (a write was cut: a full disk, a kill), the file is recovered by one
        read-write opening first, where this user may write it."""
        deadline = time.monotonic() + RECOVERY_WAIT
        while True:
            try:
                self._open_engine()
                return
            except StoreError as exc:
                if "recovery is pending" not in str(exc):
                    raise
                running = ingest_lock_holder(Path(self.url))
                if running and time.monotonic() < deadline:
                    time.sleep(0.25)
                    continue
                if running:
                    raise StoreError(f"cannot open store {self.url}: a running ingest ({running}) is checkpointing "
                                     "it; try again in a moment") from None
                if not os.access(self.url, os.W_OK) or not self._recovered():
                    raise StoreError(f"cannot open store {self.url}: a write into it was cut (a full disk or a kill) "
                                     "and its recovery needs a read-write opening: run the ingest again as a user "
                                     "who may write it") from None

    def _recovered(self) -> bool:
        """Open the file read-write once and close it (the engine's recovery); False if that fails."""
        self.read_only = False
        try:
            self._open_engine()
            self._close_engine()
            return True
        except Exception:  # noqa: BLE001 - the caller says what is left to do
            self._close_engine()
            return False
        finally:
            self.read_only = True

    def _open_engine(self) -> None:
        ladybug = import_ladybug()
        try:
            self.db = ladybug.Database(self.url, read_only=self.read_only, buffer_pool_size=self.pool_bytes)
            self.conn = ladybug.Connection(self.db)
        except RuntimeError as exc:
            raise StoreError(f"cannot open store {self.url}: {short_error(exc)}") from exc
        except (MemoryError, ValueError) as exc:  # a damaged header read as a huge or bad length
            raise StoreError(f"cannot open store {self.url}: the file is damaged (the engine failed reading its "
                             f"header: {short_error(exc)}); restore it from a copy or ingest into a new store") from exc
        if not self.read_only:
            # auto-checkpoints after every big commit rewrite whole rel tables (cost grows
            # with the table); checkpoint every CHECKPOINT_ROWS rows and on close instead.
            self.conn.execute("CALL auto_checkpoint=false")
            self.digests.save()  # the store's files as this process opened them (digest_file rule 3)

    def close(self) -> None:
        """Close the connection and the database (the book stamped as this process left the files)."""
        self._close_engine()
        self.digests.save()  # closing touches the database file

    def recover(self) -> bool:
        """After a failed write, closed: open the file read-write once and close it, which replays or
        rolls back its write-ahead log (a checkpoint a full disk cut leaves one, and a read-only opening
        refuses such a file until a read-write one recovers it). Nothing is raised: a file that still
        cannot be recovered (the disk still full) is recovered by the next read-write opening.

        Returns:
            True when the file was opened and closed again.
        """
        try:
            self.open()
        except Exception:  # noqa: BLE001 - the write's own error is the one reported
            self._close_engine()
            return False
        try:
            self.close()
        except Exception:  # noqa: BLE001 - as above
            return False
        self.failed = False
        return True

    def _close_engine(self) -> None:
        """Close the connection and the engine's database, the failed statement being handled
        first let go of (:func:`~eventkg.graphstore.ladybug.engine.release_failed_statement`)."""
        release_failed_statement()
        conn, db = self.conn, self.db
        if conn is None:  # closed already (a failed opening)
            return
        self.conn = self.db = None
        conn.close()
        db.close()

    def wrote(self, rows: int) -> None:
        """Count ``rows`` written (they wait for the next CHECKPOINT and reopening)."""
        self.unflushed_rows += rows
        self.rows_since_open += rows

    def fold_wal(self) -> None:
        """CHECKPOINT, then set the digests it made durable (digest_file rule 2)."""
        self.conn.execute("CHECKPOINT")
        self.digests.durable()
        self.unflushed_rows = 0
        self.emit(StoreEvent("checkpoint"))

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file; reopen past ``REOPEN_ROWS`` rows written.

        ladybug 0.22 keeps some bytes per row written (COPY) until the database is closed,
        checkpoint or not, whatever the buffer pool size; reopening after a checkpoint frees it
        and costs milliseconds, so a long ingest stays flat (figures: ``docs/performance.md``).
        """
        self.fold_wal()
        if self.rows_since_open >= REOPEN_ROWS:
            self.reopen()

    def checkpoint_and_release(self) -> None:
        """Checkpoint, reopen the database and hand freed memory back (bulk writes only).

        ladybug 0.22 keeps what a COPY built (and the pages it touched, up to the buffer pool)
        until the database is closed; glibc keeps freed heap mapped. Reopening costs
        milliseconds, so each held table starts from the same floor whatever the graph holds.
        """
        self.fold_wal()
        self.reopen()
        release_free_memory()

    def reopen(self, pool_bytes: int | None = None) -> None:
        """Close and open the database again (after a checkpoint), with another buffer pool size if given."""
        if pool_bytes is not None:
            self.pool_bytes = pool_bytes
        self._close_engine()
        self.open()
        self.rows_since_open = 0
        self.emit(StoreEvent("reopen"))

    def switch_mode(self, *, read_only: bool) -> None:
        """Open the file again read-only, or read-write again (the write-ahead log folded before a
        read-write opening closes). After a failed opening the next switch still opens the file."""
        if read_only == self.read_only and self.is_open:
            return
        if self.is_open and not self.read_only:
            self.fold_wal()
        self.read_only = read_only
        self.reopen()

    def set_buffer_pool(self, pool_bytes: int) -> None:
        """Checkpoint and reopen with ``pool_bytes`` of page cache, unless it is the size in use."""
        if pool_bytes != self.pool_bytes and not self.read_only and not self.failed:
            self.checkpoint()
            self.reopen(pool_bytes)

    def in_transaction(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction (rolled back if it raises), the database file stamped after."""
        self.conn.execute("BEGIN TRANSACTION")
        try:
            out = work()
        except BaseException:
            rollback(self.conn)
            raise
        self.conn.execute("COMMIT")
        self.digests.stamp()
        return out

    def in_checkpointed_transaction(self, work: Callable[[], Any]) -> None:
        """``work()`` in a transaction of its own, then a checkpoint that hands its memory back."""
        self.in_transaction(work)
        self.checkpoint_and_release()
