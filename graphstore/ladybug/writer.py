"""Every write into the embedded store's tables: COPYs that keep digests, upserts, deleting all.

:class:`TableWriter` writes checked typed Arrow tables through the open
:class:`~eventkg.graphstore.ladybug.database.Database`, keeps the tables' key sets
(:class:`~eventkg.graphstore.ladybug.stored_keys.StoredKeys`) and follows the digest book's rules
(:mod:`eventkg.graphstore.ladybug.digest_file`): a table's digest is dropped on disk before it is
written, a COPY's rows' digest is added to the table's old one and set only after the CHECKPOINT
that makes it durable, the book is stamped after each write.

A batch is one transaction (COPY is allowed inside one), so a failed batch leaves nothing behind;
a batch that only adds new rows to one table is one auto-commit COPY instead, atomic by itself,
which skips the WAL round trip (figures: ``docs/performance.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.digest import EMPTY, TableDigest, digest_beside
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.ladybug.database import Database
from eventkg.graphstore.ladybug.digest_file import DigestTracker
from eventkg.graphstore.ladybug.engine import (
    LOOKUP_CHUNK,
    copy_arrow,
    copy_file,
    count_rows,
    declare_schema,
    fetch_tuples,
    missing_key,
    one_engine_thread,
    rollback,
)
from eventkg.graphstore.ladybug.spool import Staged
from eventkg.graphstore.ladybug.stored_keys import Fingerprints, StoredKeys
from eventkg.graphstore.ladybug.upsert import upsert
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

Written = list[tuple[str, np.ndarray, np.ndarray]]  # per table written, the keys it got


class TableWriter:
    """Writes into ``database``'s tables, keeping ``digests`` and ``keys`` true."""

    def __init__(self, database: Database, digests: DigestTracker, keys: StoredKeys,
                 notify: Callable[[str], None] | None = None) -> None:
        self._database = database
        self._digests = digests
        self._keys = keys
        self._notify = notify or (lambda message: None)

    def write(self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table],
              fps: Mapping[str, Fingerprints]) -> tuple[WriteResult, Written]:
        """Write a checked batch: one auto-commit COPY when it only adds rows to one table, else
        an upsert of every table in one transaction. Returns the result and the written keys
        (added to the key sets by the caller)."""
        result = WriteResult()
        written: Written = []
        only = self._only_new_rows(nodes, edges, fps)
        if only is not None:
            try:
                self.copy_tracked(only, {**nodes, **edges}[only])
            except StoreError:
                self._database.failed = True
                raise
            result.created[only], result.updated[only] = len(fps[only][0]), 0
            written.append((only, *fps[only]))
            return result, written
        self._digests.forget([*nodes, *edges])
        conn = self._database.conn
        conn.execute("BEGIN TRANSACTION")
        try:
            for name, table in [*nodes.items(), *edges.items()]:
                created, updated, new_fps = self.upsert(name, table, fps[name])
                result.created[name] = result.created.get(name, 0) + created
                result.updated[name] = result.updated.get(name, 0) + updated
                written.append((name, *new_fps))
        except BaseException:
            rollback(conn)
            self._database.failed = True
            raise
        conn.execute("COMMIT")
        self._digests.stamp()
        return result, written

    def _only_new_rows(
        self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table], fps: Mapping[str, Fingerprints]
    ) -> str | None:
        """The batch's one table when it has exactly one and none of its keys can be stored yet."""
        if len(nodes) + len(edges) != 1:
            return None
        name = next(iter([*nodes, *edges]))
        known = self._keys.known(name)
        if known is None:  # too many keys to remember: ask the engine in the general path
            return None
        present, unsure = known.lookup(*fps[name])
        return None if (present | unsure).any() else name

    def upsert(self, name: str, table: pa.Table, fps: Fingerprints, update: Any = None) -> tuple[int, int, Fingerprints]:
        """COPY the rows not stored yet, update the changed ones (:func:`~eventkg.graphstore.ladybug.upsert.upsert`),
        inside the caller's transaction."""
        return upsert(self._database.conn, name, table, fps, self._keys.known(name), chunk=LOOKUP_CHUNK, update=update)

    def copy_tracked(self, name: str, table: pa.Table) -> TableDigest | None:
        """COPY new rows into ``name`` keeping its digest: dropped on disk first, old + the rows'
        digest after the COPY (set when a CHECKPOINT makes it durable). Returns the rows' digest,
        or None when the table's digest is not known (then it stays unknown)."""
        base = self.digest_base(name)
        self._digests.forget([name])
        digest = digest_beside(table) if base is not None else None  # computed while the COPY runs
        self._copy_again_if_missed(name, lambda: copy_arrow(self._database.conn, name, table), lambda: table)
        self._digests.stamp()  # a COPY writes the database file before any CHECKPOINT
        if digest is None:
            return None
        copied = digest()
        self._digests.note(name, base + copied)
        return copied

    def copy_staged(self, name: str, stage: Staged, base: TableDigest | None) -> TableDigest | None:
        """COPY a staged file into ``name`` (:meth:`copy_tracked`'s rules, the rows' digest computed
        while they were staged from the ``base`` taken before). Returns the rows' digest when the
        table's is kept, and counts the rows written."""
        copied = stage.close()
        if not stage.rows:
            return None
        self._digests.forget([name])
        self._copy_again_if_missed(name, lambda: copy_file(self._database.conn, name, stage.path),
                                   lambda: pq.read_table(stage.path, columns=["src", "dst"]))
        self._digests.stamp()
        self._database.wrote(stage.rows)
        if base is not None and copied is not None:
            self._digests.note(name, base + copied)
            return copied
        return None

    def _copy_again_if_missed(self, name: str, copy: Callable[[], None], ends: Callable[[], pa.Table]) -> None:
        """Run ``copy`` (an auto-commit COPY into ``name``); when the engine fails a rel COPY saying
        an end's key is not in its node table, and that key is stored there after all, and the
        failed COPY left the table as it was, say so and run it once more on one engine thread.

        Why: LadybugDB's multi-threaded rel COPY over many long string keys now and then misses a
        stored key (kuzudb/kuzu#2916; met at ASER 10M/30M, docs/performance.md); on one thread it does
        not. A key that is truly missing, or a table the failure changed, keeps the engine's error.
        ``ends``: the COPY's rows, read only on that failure (their ``src`` and ``dst`` columns)."""
        if name not in REL_TYPES:
            copy()
            return
        before = count_rows(self._database.conn, name)
        try:
            copy()
            return
        except StoreError as exc:
            key = missing_key(exc.__cause__ or exc)  # the engine's own message, whole
            if key is None:
                raise
            self._database.reopen()  # a fresh connection: the failed COPY's state is not carried over
            if count_rows(self._database.conn, name) != before or not self._ends_stored(name, key, ends()):
                raise
        self._notify(f"note: {name}: the engine's COPY did not find the stored key {key!r} "
                     "(an engine fault under many threads); COPYing the same rows again on one thread")
        with one_engine_thread(self._database.conn):
            copy()

    def _ends_stored(self, name: str, key: str, ends: pa.Table) -> bool:
        """True when every end of ``name``'s rows in ``ends`` that is ``key`` names a stored node
        (the source label for ``src``, the target label for ``dst``), and at least one does."""
        rel = REL_TYPES[name]
        labels = [label for label, column in ((rel.source, "src"), (rel.target, "dst"))
                  if pc.any(pc.equal(ends.column(column), key)).as_py()]
        return bool(labels) and all(
            fetch_tuples(self._database.conn, f"MATCH (n:{label}) WHERE n.id = $key RETURN count(*)", {"key": key})[0][0]
            for label in labels)

    def digest_base(self, name: str) -> TableDigest | None:
        """The digest ``name`` holds now, when known (an empty table's is: rule 4)."""
        base = self._digests.now(name)
        if base is None and name not in self._digests.pending and count_rows(self._database.conn, name) == 0:
            base = EMPTY
        return base

    def delete_everything(self) -> None:
        """Every row of every table of the data model gone, then checkpointed: the tables are
        dropped and declared again, which costs what the schema costs. Deleting the rows one by one
        takes time and engine memory in proportion to the graph (minutes at ASER 1M/3M), and this
        is how a failed fresh ingest is undone. Where the engine refuses a drop (a table of the
        user's own joins one of ours), the rows are deleted instead."""
        self._digests.forget()
        conn = self._database.conn
        try:
            for name in [*REL_TYPES, *NODE_TYPES]:
                conn.execute(f"DROP TABLE IF EXISTS {name}")
            dropped = True
        except RuntimeError:
            dropped = False
        declare_schema(conn)  # the dropped tables, empty
        if not dropped:
            for rel in REL_TYPES.values():
                conn.execute(f"MATCH ()-[e:{rel.name}]->() DELETE e")
            for label in NODE_TYPES:
                conn.execute(f"MATCH (n:{label}) DELETE n")
        self._keys.clear()
        self._digests.note_all_empty()  # set at the next CHECKPOINT
        self._database.fold_wal()

