"""The embedded backend's store object: LadybugDB (the maintained fork of Kùzu), a single-file Cypher database.

:class:`LadybugStore` implements :class:`~eventkg.graphstore.base.GraphStore` by composing parts,
each with its own job and state: the open database (:class:`~eventkg.graphstore.ladybug.database.Database`:
connection, buffer pool, transactions, checkpoints), the tables' digests
(:class:`~eventkg.graphstore.ladybug.digest_file.DigestTracker`), the key sets
(:class:`~eventkg.graphstore.ladybug.stored_keys.StoredKeys`), the writer every write goes through
(:class:`~eventkg.graphstore.ladybug.writer.TableWriter`) and the bulk session
(:class:`~eventkg.graphstore.ladybug.bulk.BulkSession`). Reads are plain functions
(:mod:`eventkg.graphstore.ladybug.reads`). Writes never use MERGE: new rows are COPYed from typed
Arrow tables, stored rows updated only when something changed (:mod:`eventkg.graphstore.ladybug.upsert`).

Invariant: only one read-write process opens a database file, and every write goes through this
object's parts, so the key sets and the digest book describe exactly what the file holds; a read
writes what a bulk session holds first. Beside the file, outside the data model (no ``MATCH`` sees
them): ``<store>.ingests``, the unfinished ingests, and ``<store>.origins``, each source's last
ingest folder, small JSON files replaced atomically.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx

from eventkg import settings
from eventkg.graphstore.atomic import atomic_file
from eventkg.graphstore.base import PAGE_ROWS, Batch, GraphStore, WriteResult, validate_batch
from eventkg.graphstore.digest import EMPTY
from eventkg.graphstore.errors import StoreError, WriteRefused
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug import reads
from eventkg.graphstore.ladybug.bulk import BulkSession
from eventkg.graphstore.ladybug.database import CHECKPOINT_ROWS, Database
from eventkg.graphstore.ladybug.digest_file import DigestBook, DigestTracker
from eventkg.graphstore.ladybug.engine import (
    LOOKUP_CHUNK,
    buffer_pool_bytes,
    check_store_path,
    declare_schema,
    write_failure,
)
from eventkg.graphstore.ladybug.events import EventHook, StoreEvent, StoreState
from eventkg.graphstore.ladybug.ingest_lock import hold_ingest_lock, ingest_lock_holder, release_ingest_lock
from eventkg.graphstore.ladybug.stored_keys import Fingerprints, StoredKeys
from eventkg.graphstore.ladybug.upsert import check_endpoints, typed_tables
from eventkg.graphstore.ladybug.writer import TableWriter
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.rows import EdgeRow, NodeRow

__all__ = ["LadybugStore"]


class LadybugStore(GraphStore):
    """A LadybugDB database file holding the eventkg schema.

    Args:
        path: The database file (created with the schema if absent).
        read_only: Open an existing file for reading only (a new store is created read-write first).
        on_event: Called with a :class:`~eventkg.graphstore.ladybug.events.StoreEvent` at each step of
            a write (a table's digest dropped, a held table written, a checkpoint, a reopening); also
            settable as ``on_event``.

    Raises:
        StoreError: The path cannot hold a store, or the engine cannot open it.
    """

    def __init__(self, path: str, *, read_only: bool = False, on_event: EventHook | None = None) -> None:
        self.on_event = on_event
        p = Path(path).expanduser()
        self.url = str(p)
        check_store_path(p, read_only=read_only)
        existed = p.exists()
        read_only = read_only and existed  # a new store is created read-write first
        self.read_only = read_only
        # tables' digests (no book when read-only: nothing to keep); loaded before the database is
        # opened, whose recovery may change its files (see digest_file's rule 3)
        self._digests = DigestTracker(None if read_only else DigestBook.load(p), emit=self._emit)
        keyset_max = settings.keyset_max()  # read before opening: a bad value is an error of this open
        self._database = Database(self.url, read_only=read_only, pool_bytes=buffer_pool_bytes(), digests=self._digests,
                                  emit=self._emit)
        self._keys = StoredKeys(self._database, keyset_max)
        self._writer = TableWriter(self._database, self._digests, self._keys, notify=self._notify)
        self._session = BulkSession(p, database=self._database, digests=self._digests, keys=self._keys,
                                    writer=self._writer, notify=self._notify, emit=self._emit)
        if not read_only:
            declare_schema(self._database.conn)
            if not existed:  # rule 4: a new store's tables are empty
                self._digests.book.tables.clear()
                self._digests.book.set(dict.fromkeys([*NODE_TYPES, *REL_TYPES], EMPTY))

    @property
    def connection(self) -> Any:
        """The engine connection, for readers that want Arrow straight from LadybugDB
        (``queries.columnar``, ``neo4j.admin_import``). It changes when the database is reopened:
        ask for it at each use, never keep it across writes. None once the store is closed."""
        return self._database.conn if self._database is not None else None

    def open_connection(self) -> Any:
        """A second ``ladybug.Connection`` to the open database, for a reader in another thread."""
        import ladybug

        return ladybug.Connection(self._database.db)

    @property
    def _wrote(self) -> bool:  # GraphStore's "changed since begin_ingest": a write stamped the digest book
        return self._digests.wrote

    @_wrote.setter
    def _wrote(self, value: bool) -> None:
        self._digests.wrote = value

    @property
    def late_result(self) -> WriteResult:
        """What the last bulk session's merging and upserting of waiting rows did (the ingest report adds it)."""
        return self._session.late_result

    @late_result.setter
    def late_result(self, value: WriteResult) -> None:
        self._session.late_result = value

    @property
    def late_skipped(self) -> dict[str, int]:
        """Waiting rows the last bulk session found equal to the stored table by digest, per table."""
        return self._session.late_skipped

    def _notify(self, message: str) -> None:
        if self.on_bulk_write is not None:
            self.on_bulk_write(message)

    def _emit(self, event: StoreEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def state(self) -> StoreState:
        """What a bulk session holds and how it routes each table, now (writes nothing).

        Returns:
            A :class:`~eventkg.graphstore.ladybug.events.StoreState` snapshot.
        """
        session, names = self._session, [*NODE_TYPES, *REL_TYPES]
        return StoreState(held_rows=session.held_rows(), deferred=session.deferred, looked_up=session.looked_up,
                          unkeyed=session.unkeyed, key_sets=frozenset(n for n in names if n in self._keys),
                          buffer_pool_bytes=self._database.pool_bytes)

    def key_set(self, name: str) -> KeySet | None:
        """The fingerprints of every stored key of a table, read from the store once (what writes check
        new rows against).

        Args:
            name: A node label or relationship type.

        Returns:
            The table's :class:`~eventkg.graphstore.keyset.KeySet`, or None when the tables hold more keys
            than ``EVENTKG_KEYSET_MAX`` (then writes ask the engine).
        """
        return self._keys.get(name)

    def reopen(self) -> None:
        """Close the database and open it again (what long writes do to hand the engine's memory back);
        rows committed but not yet checkpointed stay, in the write-ahead log."""
        self._database.reopen()

    # -- writing ---------------------------------------------------------------------------
    def write_batch(self, batch: Batch) -> WriteResult:
        if self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        validate_batch(batch)
        fps: dict[str, Fingerprints] = {}
        nodes = typed_tables(NODE_TYPES, ("id",), batch.nodes, batch.node_tables, fps)
        edges = typed_tables(REL_TYPES, ("src", "dst"), batch.edges, batch.edge_tables, fps)
        ends = [] if batch.ends_known else [*(REL_TYPES[t].source for t in edges), *(REL_TYPES[t].target for t in edges)]
        for name in [*nodes, *edges, *ends]:
            if not (self._session.defers(name) or self._session.looks_up(name)):
                self._keys.get(name)  # built before the transaction, from committed state
        if not batch.ends_known:  # else a missing end would fail its COPY, which is checked
            check_endpoints(self._database.conn, nodes, edges, self._key_set_of, chunk=LOOKUP_CHUNK)
        if self._session.active:
            held = self._session.hold_batch(nodes, edges, fps)
            if held is not None:
                return held
        try:
            result, written = self._writer.write(nodes, edges, fps)
        except (RuntimeError, OSError) as exc:  # the engine's own errors (a full buffer pool, a full disk): one line
            raise write_failure(exc, self.url, "writing a batch") from exc
        for name, h1, h2 in written:
            self._keys.add(name, h1, h2)
        self._database.wrote(len(batch))
        if self._database.unflushed_rows >= CHECKPOINT_ROWS:
            self._database.checkpoint()
        return result

    def _key_set_of(self, label: str) -> KeySet | None:
        """The keys an endpoint check finds without asking the engine: the label's key set, or for a
        label the bulk session looks up, the keys it holds (the rest are asked)."""
        held = self._session.session_keys(label)
        return held if held is not None else self._keys.get(label)

    @contextmanager
    def bulk_load(self) -> Iterator[LadybugStore]:
        """A bulk session (:meth:`BulkSession.holding <eventkg.graphstore.ladybug.bulk.BulkSession.holding>`):
        new rows held and written table by table at its end, all or nothing."""
        with self._session.holding():
            yield self

    @contextmanager
    def read_only_phase(self) -> Iterator[LadybugStore]:
        """The file reopened read-only for the block (its write-ahead log folded first), then
        read-write again, even when the block raises. A store opened read-only, inside a bulk
        session or after a failed write stays as it is."""
        if self.read_only or self._session.active or self._database.failed:
            yield self
            return
        try:
            self._database.switch_mode(read_only=True)
            self.read_only = True
            yield self
        finally:
            self.read_only = False
            self._database.switch_mode(read_only=False)

    def nodes_done(self) -> None:
        """The loader sends no more nodes (see :meth:`~eventkg.graphstore.ladybug.bulk.BulkSession.nodes_done`)."""
        self._session.nodes_done()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file."""
        self._database.checkpoint()

    def clear(self) -> None:
        if self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        self._session.flush()
        self._writer.delete_everything()
        self._keep_origins({})  # an empty store was ingested from nowhere

    def begin_ingest(self, what: str) -> None:
        """As :meth:`GraphStore.begin_ingest`, holding ``<store>.ingesting`` locked (``flock``) until
        :meth:`end_ingest`, so a reader tells this running ingest from an unfinished one."""
        self._ingesting = hold_ingest_lock(Path(self.url), what) if not self.read_only else None
        try:
            super().begin_ingest(what)
        except BaseException:
            self._release_ingest_lock()
            raise

    def end_ingest(self, what: str, *, completed: bool) -> None:
        try:
            super().end_ingest(what, completed=completed)
        finally:
            self._release_ingest_lock()

    def _release_ingest_lock(self) -> None:
        lock, self._ingesting = getattr(self, "_ingesting", None), None
        if lock is not None:
            release_ingest_lock(lock)

    def ingest_running(self) -> str | None:
        return ingest_lock_holder(Path(self.url))

    def unfinished_ingests(self) -> list[str]:
        try:
            return list(json.loads(_marks_path(self.url).read_text(encoding="utf-8")))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read {_marks_path(self.url)}: {exc}") from None

    def _keep_marks(self, marks: list[str]) -> None:
        _keep_json(_marks_path(self.url), marks)

    def ingest_origins(self) -> dict[str, str]:
        path = _origins_path(self.url)
        try:
            origins = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise _damaged_origins(path, str(exc)) from None
        if not (isinstance(origins, dict) and all(isinstance(v, str) for v in origins.values())):
            raise _damaged_origins(path, "not an object of source -> folder")
        return origins

    def _keep_origins(self, origins: dict[str, str]) -> None:
        if self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        _keep_json(_origins_path(self.url), origins)

    # -- reading (held rows are written first) ----------------------------------------------
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        if write and self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        self._session.flush()
        if write:
            self._keys.clear()  # the query may create or delete nodes and edges
            self._digests.forget()  # ... or change any row
        return reads.run_query(self._database.conn, cypher, params, write)

    def counts(self) -> dict[str, dict[str, int]]:
        self._session.flush()
        return reads.counts(self._database.conn)

    def get_nodes(self, label: str, ids: Sequence[str], *, props: bool = True) -> dict[str, NodeRow]:
        self._session.flush()
        return reads.get_nodes(self._database.conn, label, ids, props=props, chunk=LOOKUP_CHUNK)

    def iter_nodes(self, label: str, page_size: int = PAGE_ROWS) -> Iterator[NodeRow]:
        self._session.flush()
        yield from reads.iter_nodes(self._database.conn, label, page_size)

    def iter_edges(self, rel_type: str, page_size: int = PAGE_ROWS) -> Iterator[EdgeRow]:
        self._session.flush()
        yield from reads.iter_edges(self._database.conn, rel_type, page_size)

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        self._session.flush()
        return reads.neighbourhood(self._database.conn, seeds, hops, rel_types, direction, limit, induced, chunk=LOOKUP_CHUNK)

    def close(self) -> None:
        database = getattr(self, "_database", None)
        if database is None or not database.is_open:
            return  # never opened, or closed already
        try:
            self._session.end()  # closed inside a bulk session: write what it holds
            if (database.unflushed_rows or self._digests.any_pending()) and not database.failed:
                database.checkpoint()  # after a failed write, leave the WAL for recovery on next open
        finally:
            self._release_ingest_lock()
            database.close()
            if database.failed and not self.read_only:
                database.recover()  # the next open's recovery done now, so readers can open it at once


def _marks_path(url: str) -> Path:
    """The list of unfinished ingests, beside the database file."""
    return Path(url + ".ingests")


def _origins_path(url: str) -> Path:
    """Each source's last ingest folder, beside the database file."""
    return Path(url + ".origins")


def _damaged_origins(path: Path, why: str) -> StoreError:
    """A damaged ``.origins`` sidecar, named with the way out: it only records each source's last ingest
    folder (the graph does not depend on it), so removing it loses nothing the next ingest does not
    record again."""
    return StoreError(f"the store's record of ingest folders {path} is damaged ({why}); the graph is not "
                      f"affected: remove that file (rm {shlex.quote(str(path))}) and run the ingest again, "
                      "which records it anew")


def _keep_json(path: Path, value: list[str] | dict[str, str]) -> None:
    """Replace the sidecar ``path`` with ``value`` atomically (fsynced; a failure leaves the old file
    and no temporary one); an empty value removes it."""
    if not value:
        path.unlink(missing_ok=True)
        return
    with atomic_file(path) as fh:
        json.dump(value, fh)
