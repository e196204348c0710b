"""The embedded backend: LadybugDB (the maintained fork of Kùzu), a single-file Cypher database.

Why it looks the way it does (measured on ladybug 0.22, see bench/store_bench.py):

* Writes never use MERGE: new rows are COPYed from typed Arrow tables and stored rows found
  by keyed lookups are updated only when something changed (:mod:`eventkg.graphstore.ladybug.upsert`).
* Asking the engine which keys exist costs more than writing them, so the store keeps a
  :class:`~eventkg.graphstore.keyset.KeySet` per table (128-bit fingerprints of every stored key,
  16 bytes each, built by one key scan the first time a table is written, then kept up to
  date after each commit; exact because only this process may write the file). Only keys
  the set reports (present, or sharing a first hash) are looked up; a fresh bulk load asks
  the engine nothing. A raw write query or clear() drops the sets; past ``EVENTKG_KEYSET_MAX`` keys
  the store asks the engine every time. Inside ``bulk_load()`` two kinds of rel table have none
  (their keys would grow with the graph for the whole session): one that held no row when the
  session first held rows of it (a fresh ingest: its repeated keys are merged when it is
  COPYed), and one whose stored rows' digest is known (a re-run: its rows all wait and are
  checked against the table by digest), see ``BulkSession._holds_unkeyed`` and
  ``BulkSession._routed_by_digest``. Node key sets stay: they check every edge's endpoints.
* A batch is one transaction (COPY is allowed inside one), so a failed batch leaves
  nothing behind. A batch that only adds new rows to one table is one auto-commit COPY
  instead: atomic by itself, and it skips the WAL round trip (~0.4 s per million edges).
* Inside ``bulk_load()`` new rows are held and written table by table
  (:mod:`eventkg.graphstore.ladybug.bulk`, :mod:`eventkg.graphstore.ladybug.spool`).
* Checkpoints: auto-checkpoint after a big commit rewrites whole rel tables, so it is off;
  the store checkpoints every ``CHECKPOINT_ROWS`` rows and on close. A bulk session writes each
  held table from staged Parquet files in one COPY, or in as few as the memory budget allows
  (:func:`copy_rows`), each checkpointed and the database reopened after it so each COPY starts
  from the same floor. Every store opens with the budget's buffer pool
  (:func:`~eventkg.graphstore.ladybug.engine.buffer_pool_bytes`). Figures: ``docs/performance.md``.
* Only one read-write process may open a database file at a time.
* Each table's content digest is kept beside the store (:mod:`eventkg.graphstore.ladybug.digest_book`,
  whose rules every write path here follows: drop a table's digest before writing it, set it
  only after the CHECKPOINT that makes a COPY durable), so a re-run after a crash that sends the
  stored rows again skips comparing them row by row (``BulkSession._apply_late``).

This module holds the store object: opening and closing, the write path, the checkpoint
schedule, the key sets and the tuning constants. Reads are in :mod:`eventkg.graphstore.ladybug.reads`,
the engine helpers (DDL, results, COPY) in :mod:`eventkg.graphstore.ladybug.engine`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg import settings
from eventkg.graphstore.base import Batch, GraphStore, StoreError, WriteRefused, WriteResult, validate_batch
from eventkg.graphstore.digest import EMPTY, TableDigest, digest_beside
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug import reads
from eventkg.graphstore.ladybug.bulk import STAGE_READ_ROWS, BulkSession
from eventkg.graphstore.ladybug.digest_book import DigestBook
from eventkg.graphstore.ladybug.engine import (
    buffer_pool_bytes,
    check_store_path,
    copy_arrow,
    copy_file,
    count_rows,
    edge_pool_bytes,
    edge_pool_for,
    node_pool_bytes,
    release_free_memory,
    resident_bytes,
    rollback,
    schema_statements,
    short_error,
    table_pages,
)
from eventkg.graphstore.ladybug.spool import Staged, TableSpool
from eventkg.graphstore.ladybug.upsert import check_endpoints, typed_tables, upsert
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import decoded, encode_sources, key_fingerprints, row_schema

__all__ = ["LadybugStore", "encode_sources", "decoded", "schema_statements"]

LADYBUG_VERSION = "0.22"
LOOKUP_CHUNK = 20_000  # ids per keyed lookup statement
CHECKPOINT_ROWS = 5_000_000  # rows written between checkpoints
# keys remembered per store object, all tables together (16 bytes each); past it writes ask
# the engine, and bulk sessions stop holding rows. Raise it for very big ingests (ASER core:
# ~120M keys, ~1.9 GB) with EVENTKG_KEYSET_MAX (eventkg.settings; read when a store is opened,
# so a bad value is an error of that open, not of importing this module).
# the engine's buffer pool per row of one COPY (its primary-key index for nodes, its sorted
# edges for rels), with room to spare; measured in docs/scale.md. A rel table is best kept to one
# COPY: a second COPY into it rewrites it and holds ~135 B per node it joins until its checkpoint
ENGINE_NODE_BYTES = 160
ENGINE_EDGE_BYTES = 64
POOL_SLACK = 256 * 2**20  # a rel COPY keeps a pool up to this much under what the budget leaves (no reopen)
POOL_FOR_COPY = 0.8  # share of the buffer pool one COPY may plan to fill
REOPEN_ROWS = 1_000_000  # rows written between reopenings of the database (see checkpoint())
# edges COPYed into rel tables between checkpoints of a bulk session: what a COPY keeps until
# the next checkpoint grows with the edges it wrote (~60 B each measured at ASER 1M/3M: 13
# tables, 3.3M edges, +206 MB), so a fixed count keeps it flat in graph size (was: tables per
# checkpoint from the node count, 13 of 15 at 1M/3M)
REL_PENDING_EDGES = 1_000_000
# checkpoint right after a COPY into a rel table that already held edges (see _flush_spool);
# False gives the earlier rule (the edge budget only), for bench/second_source_bench.py to compare
CHECKPOINT_APPENDS = True
# a key set built by scanning this many stored keys (a re-run builds one per stored table) is
# followed by a checkpoint and a reopening: the scan leaves the table's pages and its result in the
# engine (ASER 1M/3M re-run, bench/rerun_rss_trace.py: peak 973 MB without, 893 MB released after
# all of a batch's scans, 854 MB after each scan, with the digest check's heap freed too)
SCAN_RELEASE_KEYS = 100_000
KEY_SCAN_ROWS = 200_000  # node offsets read per query when a key set is built by a scan (see _scan_keys)


Fingerprints = tuple[np.ndarray, np.ndarray]


def copy_rows(name: str, pool_bytes: int) -> int:
    """The most rows one COPY into ``name`` may take with a buffer pool of ``pool_bytes``: the engine
    builds a node COPY's primary-key index and sorts a rel COPY's edges in its pool (ladybug 0.22:
    10M events failed in a 1 GiB pool and fit in 2 GiB; 3M fit in 512 MiB), so a bigger table
    goes in several COPYs (the measurements: ``docs/scale.md``)."""
    if not pool_bytes:  # the engine's default pool: most of the machine's memory
        return 2**62
    per_row = ENGINE_NODE_BYTES if name in NODE_TYPES else ENGINE_EDGE_BYTES
    return max(100_000, int(pool_bytes * POOL_FOR_COPY) // per_row)


def _import_ladybug():
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


class LadybugStore(BulkSession, GraphStore):
    """A LadybugDB database file holding the eventkg schema."""

    def __init__(self, path: str, *, read_only: bool = False) -> None:
        p = Path(path).expanduser()
        self.url = str(p)
        check_store_path(p)
        existed = p.exists()
        read_only = read_only and existed  # a new store is created read-write first
        self.read_only = read_only
        # tables' digests (None when read-only: nothing to keep); loaded before the database is
        # opened, whose recovery may change its files (see digest_book's rule 3)
        self._book = None if read_only else DigestBook.load(p)
        self._pending: dict[str, TableDigest | None] = {}  # digests of tables changed since the last CHECKPOINT
        self._copied: dict[str, TableDigest] = {}  # this bulk session's held rows COPYed, per table
        self.late_skipped: dict[str, int] = {}  # waiting rows found equal to the stored table by digest
        self._pool_bytes = buffer_pool_bytes()  # ladybug's buffer pool (the memory budget's share)
        self._keyset_max = settings.keyset_max()  # keys remembered, all tables together (before opening)
        self._open()
        self._unflushed_rows = 0
        self._rows_since_open = 0  # see checkpoint()
        self._engine_failed = False
        self._fresh_session = False  # a bulk session began with every node table empty
        self._wrote = False  # this store wrote since the bulk session began (see _stamp)
        self._keysets: dict[str, KeySet | None] = {}  # see _keyset
        self._unkeyed: set[str] = set()  # rel tables a bulk session holds without a key set (BulkSession._holds_unkeyed)
        self._by_digest: set[str] = set()  # stored rel tables whose rows all wait (BulkSession._routed_by_digest)
        self._spool: TableSpool | None = None  # new rows held back during bulk_load()
        self._late: TableSpool | None = None  # rows of keys already stored or held, upserted after the flush
        self.late_result = WriteResult()  # what upserting those rows did (read by the ingest report)
        if not read_only:
            for stmt in schema_statements():
                self._conn.execute(stmt)
            if not existed:  # rule 4: a new store's tables are empty
                self._book.tables.clear()
                self._book.set(dict.fromkeys([*NODE_TYPES, *REL_TYPES], EMPTY))

    def _open(self) -> None:
        ladybug = _import_ladybug()
        try:
            self._db = ladybug.Database(self.url, read_only=self.read_only, buffer_pool_size=self._pool_bytes)
            self._conn = ladybug.Connection(self._db)
        except RuntimeError as exc:
            raise StoreError(f"cannot open store {self.url}: {short_error(exc)}") from exc
        if not self.read_only:
            # auto-checkpoints after every big commit rewrite whole rel tables (cost grows
            # with the table); checkpoint every CHECKPOINT_ROWS rows and on close instead.
            self._conn.execute("CALL auto_checkpoint=false")
            self._book.save()  # the store's files as this process opened them (digest_book rule 3)

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
            if not self._routed_by_digest(name):
                self._keyset(name)  # built before the transaction, from committed state
        if not batch.ends_known:  # else a missing end would fail its COPY, which is checked
            check_endpoints(self._conn, nodes, edges, self._keyset, chunk=LOOKUP_CHUNK)
        if self._spool is not None:
            held = self._hold_batch(nodes, edges, fps)
            if held is not None:
                return held
        result, written = self._write_now(nodes, edges, fps)
        for name, h1, h2 in written:
            self._add_keys(name, h1, h2)
        self._unflushed_rows += len(batch)
        self._rows_since_open += len(batch)
        if self._unflushed_rows >= CHECKPOINT_ROWS:
            self.checkpoint()
        return result

    def _write_now(
        self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table], fps: Mapping[str, Fingerprints]
    ) -> tuple[WriteResult, list[tuple[str, np.ndarray, np.ndarray]]]:
        """Write a checked batch: one auto-commit COPY when it only adds rows to one table, else
        an upsert of every table in one transaction. Returns the result and the written keys."""
        result = WriteResult()
        written: list[tuple[str, np.ndarray, np.ndarray]] = []
        only = self._only_new_rows(nodes, edges, fps)
        if only is not None:
            # one COPY of new rows is atomic by itself; outside a transaction it skips the
            # WAL, which makes a bulk load ~0.4 s per million rows cheaper at checkpoint
            try:
                self._copy_tracked(only, {**nodes, **edges}[only])
            except StoreError:
                self._engine_failed = True
                raise
            result.created[only], result.updated[only] = len(fps[only][0]), 0
            written.append((only, *fps[only]))
            return result, written
        self._forget_digests([*nodes, *edges])
        self._conn.execute("BEGIN TRANSACTION")
        try:
            for name, table in [*nodes.items(), *edges.items()]:
                created, updated, new_fps = self._upsert(name, table, fps[name])
                result.created[name] = result.created.get(name, 0) + created
                result.updated[name] = result.updated.get(name, 0) + updated
                written.append((name, *new_fps))
        except BaseException:
            rollback(self._conn)
            self._engine_failed = True
            raise
        self._conn.execute("COMMIT")
        self._stamp()
        return result, written

    def _only_new_rows(
        self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table], fps: Mapping[str, Fingerprints]
    ) -> str | None:
        """The batch's one table when it has exactly one and none of its keys can be stored yet."""
        if len(nodes) + len(edges) != 1:
            return None
        name = next(iter([*nodes, *edges]))
        known = self._keysets.get(name)
        if known is None:  # too many keys to remember: ask the engine in the general path
            return None
        present, unsure = known.lookup(*fps[name])
        return None if (present | unsure).any() else name

    def _upsert(self, name: str, table: pa.Table, fps: Fingerprints, update: Any = None) -> tuple[int, int, Fingerprints]:
        """COPY the rows not stored yet, update the changed ones (see ``ladybug_upsert.upsert``)."""
        return upsert(self._conn, name, table, fps, self._keysets.get(name), chunk=LOOKUP_CHUNK, update=update)

    def _flush_spool(self, names: Sequence[str] | None = None) -> None:
        """Write the held tables (``names``, default all; nodes first), keeping the engine's memory
        bounded by fixed budgets rather than by the graph's size.

        Each table goes in from staged Parquet files, one COPY unless the memory budget says more
        (:meth:`_copy_budgeted`); rel tables are checkpointed once ``REL_PENDING_EDGES`` edges
        wait for it. After each checkpoint the database is reopened and freed memory handed back
        (:meth:`_checkpoint_and_release`), so each COPY starts from the same floor.

        A COPY into a rel table that already held edges is checkpointed at once: it keeps engine
        memory in proportion to the nodes the table joins, ~135 B per node, until the next
        checkpoint, however few its edges and wherever they are (ladybug 0.22; 1,000 edges into a
        table over 1M events +127-146 MB, over 300K events +40-58 MB, sources within 2,048 nodes
        still +119-134 MB; ``bench/second_source_bench.py``). Counting such tables by their edges
        let 17 of them pile up: ASER 330K/1M into a store holding the 1M/3M graph peaked at
        2,094-2,112 MB that way and at 1,106-1,130 MB this way, in the same time (32.4-33.3 s
        against 32.5-34.1 s; the checkpoints rewrite the same tables either way).
        """
        if not self._spool and not self._late:
            return
        try:
            order = [n for n in names or [*NODE_TYPES, *REL_TYPES] if n in self._spool.rows]
            pending = 0  # edges COPYed since the last checkpoint
            for done, name in enumerate(order, 1):
                rows = self._spool.rows[name]
                if self.on_bulk_write is not None:
                    self.on_bulk_write(f"writing {name} ({done}/{len(order)}, {rows:,} rows)")
                if name in NODE_TYPES:
                    self._set_buffer_pool(node_pool_bytes())  # no-op once set (see node_pool_bytes)
                    self._write_held_nodes(name)
                    continue
                if pending and pending + rows > REL_PENDING_EDGES:
                    self._checkpoint_and_release()
                    pending = 0
                appends = CHECKPOINT_APPENDS and name not in self._unkeyed and count_rows(self._conn, name) > 0
                self._write_held_edges(name)
                pending += rows
                if appends:  # checkpointed at once (see the docstring)
                    self._checkpoint_and_release()
                    pending = 0
            if pending:
                self._checkpoint_and_release()
            self._set_buffer_pool(buffer_pool_bytes())
            self._apply_late(names or [*NODE_TYPES, *REL_TYPES])
            if self.on_bulk_write is not None:
                self.on_bulk_write("")  # done writing
        except BaseException:
            self._engine_failed = True
            self._keysets.clear()  # they hold keys that were never written
            self._unkeyed.clear()
            self._by_digest.clear()
            self._pending.clear()  # never to be set: what was written is not known (their tables are dropped)
            raise

    def _write_held_nodes(self, name: str) -> None:
        """COPY a held node table from staged Parquet files, as few COPYs as the memory budget
        allows (rows repeating a waiting key left out, then merged with those and added last; see
        ``BulkSession._fold_late``), each checkpointed.

        Why few: each checkpoint rewrites the table's primary-key index, so many small slices cost
        time quadratic in the table; why not always one: the engine builds a COPY's primary-key
        index in its buffer pool (:func:`copy_rows`), so past some size one COPY fails.
        """
        late = self._late.take(name) if self._will_fold(name) else None

        def parts() -> Iterator[pa.Table]:
            firsts = []
            for part in self._spool.slices(name, STAGE_READ_ROWS):
                if late is not None:
                    part = part.cast(late.schema) if part.schema != late.schema else part
                    hit = pc.is_in(part.column("id"), value_set=late.column("id"))
                    firsts.append(part.filter(hit))
                    part = part.filter(pc.invert(hit))
                yield part
            if late is not None:
                yield self._merge_late(name, pa.concat_tables(firsts) if firsts else late.schema.empty_table(), late)

        self._copy_budgeted(name, parts(), self._spool.rows.get(name, 0) + (late.num_rows if late is not None else 0))
        self._checkpoint_and_release()

    def _write_held_edges(self, name: str) -> None:
        """COPY a held rel table from staged Parquet files (one COPY unless the memory budget says
        more): its waiting rows merged in first (``BulkSession._fold_late``), or its repeated keys
        when it was held without a key set (``BulkSession._merging_repeats``). An unkeyed table's
        key set is built again from the table if a later write needs it."""
        unkeyed = name in self._unkeyed
        rows = self._spool.rows.get(name, 0)
        if unkeyed:
            parts = self._merging_repeats(name)
        elif self._will_fold(name):
            parts = iter([self._fold_late(name, self._spool.take(name))])
        else:
            parts = self._spool.slices(name, STAGE_READ_ROWS)
        self._copy_budgeted(name, parts, rows)
        if unkeyed:
            self._unkeyed.discard(name)
            self._keysets.pop(name, None)

    def _copy_budgeted(self, name: str, parts: Iterator[pa.Table], rows: int) -> None:
        """COPY ``parts`` into ``name`` from staged Parquet files of at most the rows one COPY may
        take under the memory budget (:func:`copy_rows`), each but the last followed by a checkpoint;
        says so first (``on_bulk_write``) when the table takes more than one."""
        limit = copy_rows(name, self._pool_bytes if name in NODE_TYPES else edge_pool_bytes())
        if rows > limit and self.on_bulk_write is not None:
            self.on_bulk_write(f"note: {name}: {rows:,} rows need {-(-rows // limit)} COPYs of at most {limit:,} "
                               f"under EVENTKG_MEMORY_MB={settings.memory_mb()} (raise it for fewer)")
        schema = row_schema(("id",) if name in NODE_TYPES else ("src", "dst"),
                            (NODE_TYPES.get(name) or REL_TYPES[name]).properties)
        stage: Staged | None = None
        base: TableDigest | None = None
        try:
            for part in parts:
                while part.num_rows:
                    if stage is None:
                        base = self._digest_base(name)
                        stage = Staged(self._spool.folder / f"{name}.parquet", schema, digest=base is not None)
                    taken = part.slice(0, limit - stage.rows)
                    stage.add(taken)
                    part = part.slice(taken.num_rows)
                    if stage.rows >= limit:
                        self._before_copy(name)
                        self._copy_staged(name, stage, base)
                        stage.discard()
                        stage = None
                        self._checkpoint_and_release()
                part = None
            if stage is not None:
                self._before_copy(name)
                self._copy_staged(name, stage, base)
        finally:
            if stage is not None:
                stage.discard()

    def _before_copy(self, name: str) -> None:
        """Hand back what staging freed, then size the pool for a rel COPY to what the budget leaves
        (:func:`~eventkg.graphstore.ladybug.engine.edge_pool_for`); node COPYs keep theirs, which
        :func:`copy_rows` planned the rows by."""
        release_free_memory()
        if name in REL_TYPES:
            fit = edge_pool_for(resident_bytes())
            if self._pool_bytes > fit or self._pool_bytes < fit - POOL_SLACK:  # else keep the open database
                self._set_buffer_pool(fit)

    def _copy_held(self, name: str, table: pa.Table) -> None:
        if table.num_rows:
            digest = self._copy_tracked(name, table)
            if digest is not None:
                self._copied[name] = self._copied.get(name, EMPTY) + digest
            self._unflushed_rows += table.num_rows
            self._rows_since_open += table.num_rows

    # -- the tables' digests (see eventkg.graphstore.ladybug.digest_book) ------------------------------
    def _copy_tracked(self, name: str, table: pa.Table) -> TableDigest | None:
        """COPY new rows into ``name`` keeping its digest: dropped on disk first, old + the rows'
        digest after the COPY (set when a CHECKPOINT makes it durable). Returns the rows' digest,
        or None when the table's digest is not known (then it stays unknown)."""
        base = self._digest_base(name)
        self._forget_digests([name])
        digest = digest_beside(table) if base is not None else None  # computed while the COPY runs
        copy_arrow(self._conn, name, table)
        self._stamp()  # a COPY writes the database file before any CHECKPOINT
        if digest is None:
            return None
        copied = digest()
        self._pending[name] = base + copied
        return copied

    def _copy_staged(self, name: str, stage: Staged, base: TableDigest | None) -> None:
        """COPY a staged file into ``name`` (:meth:`_copy_tracked`'s rules, the rows' digest computed
        while they were staged from the ``base`` taken before)."""
        copied = stage.close()
        if not stage.rows:
            return
        self._forget_digests([name])
        copy_file(self._conn, name, stage.path)
        self._stamp()
        if base is not None and copied is not None:
            self._pending[name] = base + copied
            self._copied[name] = self._copied.get(name, EMPTY) + copied
        self._unflushed_rows += stage.rows
        self._rows_since_open += stage.rows

    def _digest_base(self, name: str) -> TableDigest | None:
        """The digest ``name`` holds now, when known (an empty table's is: rule 4)."""
        base = self._digest_now(name)
        if base is None and name not in self._pending and count_rows(self._conn, name) == 0:
            base = EMPTY
        return base

    def _digest_now(self, name: str) -> TableDigest | None:
        """The digest of what ``name`` holds now (written since the last CHECKPOINT included), if known."""
        if name in self._pending:
            return self._pending[name]
        return self._book.get(name) if self._book is not None else None

    def _forget_digests(self, names: Sequence[str] | None = None) -> None:
        """Before a write the digest cannot follow: the tables' digests dropped, on disk first (rule 1)."""
        if self._book is None:
            return
        names = [*NODE_TYPES, *REL_TYPES] if names is None else list(names)
        self._pending.update(dict.fromkeys(names))
        self._book.drop(names)

    def unfinished_ingests(self) -> list[str]:
        try:
            return list(json.loads(self._marks_path().read_text(encoding="utf-8")))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read {self._marks_path()}: {exc}") from None

    def _keep_marks(self, marks: list[str]) -> None:
        path = self._marks_path()
        if not marks:
            path.unlink(missing_ok=True)
            return
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(marks, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    def _marks_path(self) -> Path:
        """The list of unfinished ingests, beside the database file."""
        return Path(self.url + ".ingests")

    def _stamp(self) -> None:
        """After a write of this store's: its files as it left them (digest_book rule 3), so a crash
        from here on does not drop the digests of tables it did not touch."""
        self._wrote = True
        if self._book is not None:
            self._book.save()

    def _digests_durable(self) -> None:
        """After a CHECKPOINT: the digests of what it made durable are set on disk (rule 2)."""
        if self._book is None:
            return
        durable = {name: d for name, d in self._pending.items() if d is not None}
        self._pending.clear()
        self._book.set(durable)

    def _checkpoint_and_release(self) -> None:
        """Checkpoint, reopen the database and hand freed memory back (bulk writes only).

        ladybug 0.22 keeps what a COPY built (and the pages it touched, up to the buffer pool)
        until the database is closed; glibc keeps freed heap mapped. Reopening costs
        milliseconds, so each held table starts from the same floor whatever the graph holds.
        """
        self._fold_wal()
        self._reopen()
        release_free_memory()

    def _fold_wal(self) -> None:
        """CHECKPOINT, then set the digests it made durable (digest_book rule 2): every checkpoint goes here."""
        self._conn.execute("CHECKPOINT")
        self._digests_durable()
        self._unflushed_rows = 0

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file."""
        self._fold_wal()
        if self._rows_since_open >= REOPEN_ROWS:
            # ladybug 0.22 keeps ~70 bytes per row written (COPY) until the database is
            # closed, checkpoint or not, whatever the buffer pool size: 12 rel tables of 1.6M
            # edges grow a process by 1.4 GB. Reopening after a checkpoint frees it (and
            # costs milliseconds), so a long ingest stays flat (1M events + 7.7M edges:
            # peak 1.6 GB without, 1.1 GB with).
            self._reopen()

    def _reopen(self, pool_bytes: int | None = None) -> None:
        """Close and open the database again (after a checkpoint), with another buffer pool size if given."""
        if pool_bytes is not None:
            self._pool_bytes = pool_bytes
        self._conn.close()
        self._db.close()
        self._open()
        self._rows_since_open = 0

    def _set_buffer_pool(self, pool_bytes: int) -> None:
        """Checkpoint and reopen with ``pool_bytes`` of page cache, unless it is the size in use."""
        if pool_bytes != self._pool_bytes and not self.read_only and not self._engine_failed:
            self.checkpoint()
            self._reopen(pool_bytes)

    def clear(self) -> None:
        if self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        self._flush_spool()
        self._delete_everything()

    def _delete_everything(self) -> None:
        """Every row of every table deleted, then checkpointed (the tables stay)."""
        self._forget_digests()
        for rel in REL_TYPES.values():
            self._conn.execute(f"MATCH ()-[e:{rel.name}]->() DELETE e")
        for label in NODE_TYPES:
            self._conn.execute(f"MATCH (n:{label}) DELETE n")
        self._keysets.clear()
        self._pending.update(dict.fromkeys([*NODE_TYPES, *REL_TYPES], EMPTY))  # set at the next CHECKPOINT
        self._fold_wal()

    # -- which keys exist --------------------------------------------------------------------
    def _keyset(self, name: str) -> KeySet | None:
        """The fingerprints of every key of a table (scanned once per store object), or None
        when the tables hold too many keys to remember (then every write asks the engine)."""
        if name in self._keysets:
            return self._keysets[name]
        total = count_rows(self._conn, name)
        held = sum(len(k) for k in self._keysets.values() if k is not None)
        keys = None
        if held + total <= self._keyset_max:
            keys = KeySet()
            if total:
                self._scan_keys(name, keys)
            if total >= SCAN_RELEASE_KEYS and not self._engine_failed:
                # the scan left the table's pages and its result in the engine: hand them back
                # before the next scan or write (called before any transaction opens)
                self._checkpoint_and_release()
        self._keysets[name] = keys
        return keys

    def _scan_keys(self, name: str, keys: KeySet) -> None:
        """Add the keys of a table to ``keys``, read ``KEY_SCAN_ROWS`` node offsets (of a rel
        table's source nodes) at a time.

        Why in ranges: one ``RETURN n.id`` of ASER's 965K events held the engine's result, its
        Arrow copy and the hashing's temporaries at once, +178 MB over the open database (a
        re-run's peak at 1M/3M); by ranges of 200K, +83 MB, in the same 0.17 s. A rel table's
        keys likewise (ASER 1M/3M with --map-events: CO_OCCURRENCE's 1.14M edges +342-347 MB
        and 1.1-1.3 s at once, +143-144 MB and 1.3-1.5 s by ranges; a second file onto the graph
        scans every stored rel table it adds to).
        """
        returns = "n.id AS id" if name in NODE_TYPES else "a.id AS src, b.id AS dst"
        for page in table_pages(self._conn, name, returns, page=KEY_SCAN_ROWS):
            keys.add(*key_fingerprints(page))
            page = None

    def _add_keys(self, name: str, h1: np.ndarray, h2: np.ndarray) -> None:
        keys = self._keysets.get(name)
        if keys is None or name in self._unkeyed:
            return
        held = sum(len(k) for k in self._keysets.values() if k is not None)
        if held + len(h1) > self._keyset_max:
            self._keysets[name] = None  # too many to remember: ask the engine from now on
        else:
            keys.add(h1, h2)

    # -- reading (held rows are written first) ----------------------------------------------
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        if write and self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        self._flush_spool()
        if write:
            self._keysets.clear()  # the query may create or delete nodes and edges
            self._forget_digests()  # ... or change any row
        return reads.run_query(self._conn, cypher, params, write)

    def counts(self) -> dict[str, dict[str, int]]:
        self._flush_spool()
        return reads.counts(self._conn)

    def get_nodes(self, label: str, ids: Sequence[str], *, props: bool = True) -> dict[str, dict[str, Any]]:
        self._flush_spool()
        return reads.get_nodes(self._conn, label, ids, props=props, chunk=LOOKUP_CHUNK)

    def iter_nodes(self, label: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        self._flush_spool()
        yield from reads.iter_nodes(self._conn, label, batch_size)

    def iter_edges(self, rel_type: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        self._flush_spool()
        yield from reads.iter_edges(self._conn, rel_type, batch_size)

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        self._flush_spool()
        return reads.neighbourhood(self._conn, seeds, hops, rel_types, direction, limit, induced, chunk=LOOKUP_CHUNK)

    def close(self) -> None:
        if getattr(self, "_conn", None) is None:
            return  # never opened, or closed already
        try:
            self._end_session()  # closed inside a bulk session: write what it holds
            if (self._unflushed_rows or any(self._pending.values())) and not self._engine_failed:
                self.checkpoint()  # after a failed write, leave the WAL for recovery on next open
        finally:
            conn, db = self._conn, self._db  # read now: a checkpoint may have reopened them
            self._conn = self._db = None
            conn.close()
            db.close()
            if self._book is not None:
                self._book.save()  # closing touches the database file: stamp it as this process left it
