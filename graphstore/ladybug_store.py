"""The embedded backend: LadybugDB (the maintained fork of Kùzu), a single-file Cypher database.

Why it looks the way it does (measured on ladybug 0.22, see bench/store_bench.py):

* ``UNWIND ... MERGE`` is not planned through the primary-key index and grows
  quadratically, so upserts never use MERGE. New rows go in with ``COPY ... FROM <arrow
  table>`` (millions of rows/s); existing rows are found first and updated one keyed
  statement at a time, and only when something changed.
* ``UNWIND $ids AS i MATCH (n:Label {id: i})`` uses the primary-key index (~3 µs/id),
  while ``WHERE n.id IN $ids`` scans. Edge lookups by (src, dst) pairs are planned as
  scans too, so existing edges are found from their source nodes' adjacency lists, or,
  when the batch is large next to the table, by scanning the table's keys once.
* Asking the engine which keys exist costs more than writing them, so the store keeps a
  :class:`~eventkg.graphstore.keyset.KeySet` per table (128-bit fingerprints of every stored key,
  16 bytes each, built by one key scan the first time a table is written, then kept up to
  date after each commit; exact because only this process may write the file). Only keys
  the set reports (present, or sharing a first hash) are looked up; a fresh bulk load asks
  the engine nothing. A raw write query or clear() drops the sets; past ``KEYSET_MAX`` keys
  the store asks the engine every time.
* Rows and Arrow tables go through one path: both become typed Arrow tables
  (``eventkg.graphstore.tables``), deduplicated by key, compared with what is stored column by
  column, and the new rows are COPYed straight from Arrow.
* Edge endpoints are checked before anything is written: a COPY that fails inside a
  transaction leaves ladybug 0.22 unable to checkpoint afterwards, so COPY must never fail.
* A batch is one transaction (COPY is allowed inside one), so a failed batch leaves
  nothing behind. A batch that only adds new rows to one table is one auto-commit COPY
  instead: atomic by itself, and it skips the WAL round trip (~0.4 s per million edges).
* Neighbourhoods expand one keyed query per node (~0.1 ms each): ``UNWIND`` over ids in a
  relationship pattern is planned as a scan of the rel tables (~300 ms on 1M edges).
* ``sources`` is one comma-joined STRING, not STRING[] (see ``tables.encode_sources``).
* Checkpoints: auto-checkpoint after a big commit rewrites whole rel tables, so it is off;
  the store checkpoints every ``CHECKPOINT_ROWS`` rows and on close.
* Only one read-write process may open a database file at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg import settings
from eventkg.graphstore.base import (
    Batch,
    GraphStore,
    MissingEndpointError,
    StoreError,
    WriteRefused,
    WriteResult,
    neighbourhood_types,
    validate_batch,
)
from eventkg.graphstore.keyset import KeySet, edge_fingerprints, fingerprints
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.spool import TableSpool
from eventkg.graphstore.tables import (
    changed_rows,
    conform_table,
    decoded,
    dedupe,
    encode_sources,
    row_schema,
    rows_table,
)
from eventkg.graphstore.tables import key_column as _edge_key

__all__ = ["LadybugStore", "encode_sources", "decoded", "schema_statements"]

LADYBUG_VERSION = "0.22"
LOOKUP_CHUNK = 20_000  # ids per keyed lookup statement
CHECKPOINT_ROWS = 5_000_000  # rows written between checkpoints
# keys remembered per store object, all tables together (16 bytes each); past it writes ask
# the engine, and bulk sessions stop holding rows. Raise it for very big ingests (ASER core:
# ~120M keys, ~1.9 GB) with EVENTKG_KEYSET_MAX (eventkg.settings; read once, when this module loads).
KEYSET_MAX = settings.keyset_max()
SPOOL_COPY_ROWS = 20_000_000  # most rows per COPY when a bulk session writes a held table
REOPEN_ROWS = 1_000_000  # rows written between reopenings of the database (see checkpoint())
REL_PENDING_BYTES = 400_000_000  # engine memory rel table COPYs may keep waiting for a checkpoint
# what one rel table COPY (one per table) keeps per stored node until the next checkpoint: ~12 B
# measured (289K events, 15 tables: +52 MB); many COPYs into one table keep far more (~125 B)
REL_PENDING_BYTES_PER_NODE = 30
EARLY_CHECKPOINT_ROWS = 100_000  # a bulk session checkpoints held nodes once they are written, past this many rows
LOAD_UPDATE_ROWS = 64  # changed nodes from which one LOAD FROM beats a statement per row
FEW_SOURCES = 150  # edge lookups by up to this many sources go one keyed query each
SCAN_RATIO = 8  # scan a rel table's keys when it holds fewer than SCAN_RATIO x batch rows


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


def _columns(props: Mapping[str, str]) -> str:
    return "".join(f", `{name}` {ctype}" for name, ctype in props.items())


def schema_statements() -> list[str]:
    """DDL declaring every node and rel table of the data model."""
    stmts = [
        f"CREATE NODE TABLE IF NOT EXISTS {n.label}(id STRING PRIMARY KEY, sources STRING{_columns(n.properties)})"
        for n in NODE_TYPES.values()
    ]
    stmts += [
        f"CREATE REL TABLE IF NOT EXISTS {r.name}(FROM {r.source} TO {r.target}, sources STRING{_columns(r.properties)})"
        for r in REL_TYPES.values()
    ]
    return stmts


class LadybugStore(GraphStore):
    """A LadybugDB database file holding the eventkg schema."""

    def __init__(self, path: str, *, read_only: bool = False) -> None:
        p = Path(path).expanduser()
        self.url = str(p)
        self._check_path(p)
        read_only = read_only and p.exists()  # a new store is created read-write first
        self.read_only = read_only
        self._open()
        self._unflushed_rows = 0
        self._rows_since_open = 0  # see checkpoint()
        self._engine_failed = False
        self._keysets: dict[str, KeySet | None] = {}  # see _keyset
        self._spool: TableSpool | None = None  # new rows held back during bulk_load()
        self._late: TableSpool | None = None  # rows of keys already stored or held, upserted after the flush
        self.late_result = WriteResult()  # what upserting those rows did (read by the ingest report)
        if not read_only:
            for stmt in schema_statements():
                self._conn.execute(stmt)

    def _open(self) -> None:
        ladybug = _import_ladybug()
        try:
            self._db = ladybug.Database(self.url, read_only=self.read_only)
            self._conn = ladybug.Connection(self._db)
        except RuntimeError as exc:
            raise StoreError(f"cannot open store {self.url}: {_short(exc)}") from exc
        if not self.read_only:
            # auto-checkpoints after every big commit rewrite whole rel tables (cost grows
            # with the table); checkpoint every CHECKPOINT_ROWS rows and on close instead.
            self._conn.execute("CALL auto_checkpoint=false")

    @staticmethod
    def _check_path(p: Path) -> None:
        if p.is_dir():
            raise StoreError(f"cannot open store {p}: it is a folder, not a LadybugDB file")
        if p.exists():
            if not os.access(p, os.R_OK):
                raise StoreError(f"cannot open store {p}: not readable")
            with open(p, "rb") as fh:  # a database file starts with ladybug's magic
                head = fh.read(4)
            if head and head[:3] != b"LBU" and head[:3] != b"KUZ":
                raise StoreError(f"cannot open store {p}: the file exists and is not a LadybugDB database")
            return
        parent = p.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create store {p}: {exc.strerror}") from exc
        if not os.access(parent, os.W_OK):
            raise StoreError(f"cannot create store {p}: folder {parent} is not writable")

    # -- low-level -------------------------------------------------------------------------
    def _rows(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        result = self._conn.execute(cypher, dict(params or {}))
        cols = result.get_column_names()
        out = []
        while result.has_next():
            out.append(dict(zip(cols, result.get_next(), strict=True)))
        return out

    def _tuples(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[list[Any]]:
        result = self._conn.execute(cypher, dict(params or {}))
        out = []
        while result.has_next():
            out.append(result.get_next())
        return out

    # -- writing ---------------------------------------------------------------------------
    def write_batch(self, batch: Batch) -> WriteResult:
        if self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        validate_batch(batch)
        fps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        nodes = self._tables(NODE_TYPES, ("id",), batch.nodes, batch.node_tables, fps)
        edges = self._tables(REL_TYPES, ("src", "dst"), batch.edges, batch.edge_tables, fps)
        for name in [*nodes, *edges, *(REL_TYPES[t].source for t in edges), *(REL_TYPES[t].target for t in edges)]:
            self._keyset(name)  # built before the transaction, from committed state
        self._check_endpoints(nodes, edges)
        result = WriteResult()
        if self._spool is not None:
            tables = {**nodes, **edges}
            if self._all_new(nodes, edges, fps):
                self._hold(tables, fps, result)
            elif all(self._keysets.get(n) is not None for n in tables):
                self._hold_split(tables, fps, result)
            else:  # keys too many to remember: write what is held, then upsert as usual
                self._flush_spool()
                tables = None
            if tables is not None:
                if edges:  # the node phase of a loader is over: write its nodes while it reads on
                    self._flush_spool(list(NODE_TYPES))
                return result
        written: list[tuple[str, np.ndarray, np.ndarray]] = []
        only = self._only_new_rows(nodes, edges, fps)
        if only is not None:
            # one COPY of new rows is atomic by itself; outside a transaction it skips the
            # WAL, which makes a bulk load ~0.4 s per million rows cheaper at checkpoint
            try:
                self._copy_arrow(only, {**nodes, **edges}[only])
            except StoreError:
                self._engine_failed = True
                raise
            result.created[only], result.updated[only] = len(fps[only][0]), 0
            written.append((only, *fps[only]))
        else:
            self._conn.execute("BEGIN TRANSACTION")
            try:
                for name, table in [*nodes.items(), *edges.items()]:
                    created, updated, new_fps = self._upsert(name, table, fps[name])
                    result.created[name] = result.created.get(name, 0) + created
                    result.updated[name] = result.updated.get(name, 0) + updated
                    written.append((name, *new_fps))
            except BaseException:
                self._rollback()
                self._engine_failed = True
                raise
            self._conn.execute("COMMIT")
        for name, h1, h2 in written:
            self._add_keys(name, h1, h2)
        self._unflushed_rows += len(batch)
        self._rows_since_open += len(batch)
        if self._unflushed_rows >= CHECKPOINT_ROWS:
            self.checkpoint()
        return result

    @contextmanager
    def bulk_load(self) -> Iterator[LadybugStore]:
        """Hold new rows in a :class:`~eventkg.graphstore.spool.TableSpool` and write them table by
        table (one COPY each): the nodes when the first batch with edges comes (while the
        loader reads on), the edges at the end, each rel table checkpointed at once.

        Inside the session a batch whose keys are all new is validated and its endpoints
        checked, then held. Any other batch first writes what is held. A crash loses what is held, or leaves a prefix of its tables written:
        running the ingest again completes it.
        """
        if self._spool is not None or self.read_only:
            yield self
            return
        try:
            self._spool = TableSpool(Path(self.url))
        except OSError:  # no room for the files beside the store: write batch by batch instead
            yield self
            return
        self.late_result = WriteResult()
        try:
            yield self
        finally:
            self._end_session()

    def nodes_done(self) -> None:
        """The loader sends no more nodes: write the held ones now (it reads its edges meanwhile)."""
        if self._spool is not None:
            self._flush_spool(list(NODE_TYPES))

    def _end_session(self) -> None:
        """Write what the bulk session holds (unless the engine failed) and remove its files."""
        spool = self._spool
        if spool is None:  # no session, or close() already ended it
            return
        try:
            if not self._engine_failed:
                self._flush_spool()
        finally:
            self._spool = None
            spool.close()
            if self._late is not None:
                self._late.close()
                self._late = None

    def _all_new(self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table],
                 fps: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> bool:
        """True when no key of the batch can be stored (or held) yet."""
        for name in [*nodes, *edges]:
            known = self._keysets.get(name)
            if known is None or any(m.any() for m in known.lookup(*fps[name])):
                return False
        return True

    def _hold(self, tables: Mapping[str, pa.Table], fps: Mapping[str, tuple[np.ndarray, np.ndarray]],
              result: WriteResult) -> None:
        """Spool new rows (they count as created, and their keys as stored, from now on)."""
        for name, table in tables.items():
            try:
                self._spool.add(name, table)
            except OSError as exc:  # e.g. a full disk: what is held is still written at the end (this
                # batch's earlier tables included; they are valid rows, and a rerun completes the rest)
                raise StoreError(f"cannot hold rows in {self._spool.folder}: {exc.strerror or exc}") from None
            self._add_keys(name, *fps[name])
            result.created[name], result.updated[name] = table.num_rows, 0

    def _hold_split(self, tables: Mapping[str, pa.Table], fps: Mapping[str, tuple[np.ndarray, np.ndarray]],
                    result: WriteResult) -> None:
        """Hold the rows whose keys are new; queue the others to be upserted once the held rows are written.

        A batch that repeats a key held or stored (a duplicate across loader batches, or a
        re-run after a crash) no longer ends the session: its new rows are held as usual and
        its other rows wait, in order, in a second spool. When the held tables are written,
        the waiting rows of each table are upserted in one pass (one lookup or table scan,
        compared column by column), so later rows still win as they would batch by batch.
        """
        if self._late is None:
            self._late = TableSpool(Path(self.url))
        for name, table in tables.items():
            h1, h2 = fps[name]
            present, unsure = self._keysets[name].lookup(h1, h2)
            known = present | unsure
            if not known.any():
                self._hold({name: table}, {name: (h1, h2)}, result)
                continue
            new = ~known
            if new.any():
                self._hold({name: table.filter(pa.array(new))}, {name: (h1[new], h2[new])}, result)
            try:
                self._late.add(name, table.filter(pa.array(known)))
            except OSError as exc:
                raise StoreError(f"cannot hold rows in {self._late.folder}: {exc.strerror or exc}") from None
            result.created.setdefault(name, int(new.sum()))
            result.updated.setdefault(name, 0)

    def _apply_late(self, names: Sequence[str]) -> None:
        """Upsert the waiting rows of ``names`` (each table in one transaction), after the held rows."""
        if not self._late:
            return
        order = [n for n in names if n in self._late.rows]
        for name, table in self._late.drain(order):
            if self.on_bulk_write is not None:
                self.on_bulk_write(f"merging {name} ({table.num_rows:,} rows seen before)")
            kind = NODE_TYPES.get(name) or REL_TYPES[name]
            keys = ("id",) if name in NODE_TYPES else ("src", "dst")
            table, fps = dedupe(table, keys, kind.properties)
            self._conn.execute("BEGIN TRANSACTION")
            try:
                created, updated, new_fps = self._upsert(name, table, fps)
            except BaseException:
                self._rollback()
                raise
            self._conn.execute("COMMIT")
            self._add_keys(name, *new_fps)
            for counts, n in ((self.late_result.created, created), (self.late_result.updated, updated)):
                counts[name] = counts.get(name, 0) + n
            self._unflushed_rows += created + updated
            self._rows_since_open += created + updated
            if self._unflushed_rows >= EARLY_CHECKPOINT_ROWS:
                self.checkpoint()

    def _flush_spool(self, names: Sequence[str] | None = None) -> None:
        """Write the held tables (``names``, default all; nodes first), each as one COPY.

        Rel tables are checkpointed a few at a time (see ``eventkg.graphstore.spool``): as many as
        keep ``REL_PENDING_BYTES`` of engine memory waiting for a checkpoint; node tables once
        ``EARLY_CHECKPOINT_ROWS`` rows wait for it.
        """
        if not self._spool and not self._late:
            return
        try:
            order = [n for n in names or [*NODE_TYPES, *REL_TYPES] if n in self._spool.rows]
            group = self._rel_tables_per_checkpoint() if any(n in REL_TYPES for n in order) else 1
            pending = 0  # rel table COPYs since the last checkpoint
            for done, (name, table) in enumerate(self._spool.drain(order)):
                if self.on_bulk_write is not None:
                    self.on_bulk_write(f"writing {name} ({done + 1}/{len(order)}, {table.num_rows:,} rows)")
                for start in range(0, table.num_rows, SPOOL_COPY_ROWS):
                    part = table.slice(start, SPOOL_COPY_ROWS)
                    self._copy_arrow(name, part)
                    self._unflushed_rows += part.num_rows
                    self._rows_since_open += part.num_rows
                    pending += name in REL_TYPES
                    if pending >= group or (name in NODE_TYPES and self._unflushed_rows >= EARLY_CHECKPOINT_ROWS):
                        self.checkpoint()
                        pending = 0
            if pending:
                self.checkpoint()
            self._apply_late(names or [*NODE_TYPES, *REL_TYPES])
            if self.on_bulk_write is not None:
                self.on_bulk_write("")  # done writing
        except BaseException:
            self._engine_failed = True
            self._keysets.clear()  # they hold keys that were never written
            raise

    def _rel_tables_per_checkpoint(self) -> int:
        """Rel tables to COPY between checkpoints: each keeps ~``REL_PENDING_BYTES_PER_NODE`` per
        stored node in memory until the next checkpoint, and each checkpoint costs about the
        same however many tables it folds in (289K events, 1.35M edges in 15 tables: 9.6 s
        to COPY and checkpoint them one at a time, 7.9 s three at a time, 7.0 s all at once)."""
        nodes = sum(len(k) if (k := self._keysets.get(label)) is not None else self._count(label) for label in NODE_TYPES)
        return max(1, REL_PENDING_BYTES // max(1, REL_PENDING_BYTES_PER_NODE * nodes))

    def _only_new_rows(
        self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table], fps: Mapping[str, tuple[np.ndarray, np.ndarray]]
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

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file."""
        self._conn.execute("CHECKPOINT")
        self._unflushed_rows = 0
        if self._rows_since_open >= REOPEN_ROWS:
            # ladybug 0.22 keeps ~70 bytes per row written (COPY) until the database is
            # closed, checkpoint or not, whatever the buffer pool size: 12 rel tables of 1.6M
            # edges grow a process by 1.4 GB. Reopening after a checkpoint frees it (and
            # costs milliseconds), so a long ingest stays flat (1M events + 7.7M edges:
            # peak 1.6 GB without, 1.1 GB with).
            self._conn.close()
            self._db.close()
            self._open()
            self._rows_since_open = 0

    def _rollback(self) -> None:
        """Roll back the open transaction; the engine may already have aborted it on error."""
        try:
            self._conn.execute("ROLLBACK")
        except RuntimeError as exc:
            if "No active transaction" not in str(exc):
                raise

    @staticmethod
    def _tables(
        kinds: Mapping[str, Any],
        keys: tuple[str, ...],
        rows: Mapping[str, list],
        tables: Mapping[str, pa.Table],
        fps: dict[str, tuple[np.ndarray, np.ndarray]],
    ) -> dict[str, pa.Table]:
        """Rows and tables of each label/type as one typed, key-deduplicated Arrow table
        (their key fingerprints go into ``fps``)."""
        out = {}
        for name in [*rows, *(t for t in tables if t not in rows)]:
            props = kinds[name].properties
            parts = []
            if rows.get(name):
                parts.append(rows_table(name, rows[name], keys, props))
            if name in tables and tables[name].num_rows:
                parts.append(conform_table(name, tables[name], keys, props))
            if parts:
                out[name], fps[name] = dedupe(pa.concat_tables(parts) if len(parts) > 1 else parts[0], keys, props)
        return out

    # -- which keys exist --------------------------------------------------------------------
    def _keyset(self, name: str) -> KeySet | None:
        """The fingerprints of every key of a table (scanned once per store object), or None
        when the tables hold too many keys to remember (then every write asks the engine)."""
        if name in self._keysets:
            return self._keysets[name]
        total = self._count(name)
        held = sum(len(k) for k in self._keysets.values() if k is not None)
        keys = None
        if held + total <= KEYSET_MAX:
            keys = KeySet()
            if total:
                if name in NODE_TYPES:
                    ids = self._conn.execute(f"MATCH (n:{name}) RETURN n.id").get_as_arrow().column(0)
                    keys.add(*fingerprints(ids))
                else:
                    rel = REL_TYPES[name]
                    got = self._conn.execute(
                        f"MATCH (a:{rel.source})-[e:{name}]->(b:{rel.target}) RETURN a.id, b.id"
                    ).get_as_arrow()
                    keys.add(*edge_fingerprints(got.column(0), got.column(1)))
        self._keysets[name] = keys
        return keys

    def _add_keys(self, name: str, h1: np.ndarray, h2: np.ndarray) -> None:
        keys = self._keysets.get(name)
        if keys is None:
            return
        held = sum(len(k) for k in self._keysets.values() if k is not None)
        if held + len(h1) > KEYSET_MAX:
            self._keysets[name] = None  # too many to remember: ask the engine from now on
        else:
            keys.add(h1, h2)

    def _count(self, name: str) -> int:
        pattern = f"(n:{name})" if name in NODE_TYPES else f"()-[n:{name}]->()"
        return self._tuples(f"MATCH {pattern} RETURN count(*)")[0][0]

    def _check_endpoints(self, nodes: Mapping[str, pa.Table], edges: Mapping[str, pa.Table]) -> None:
        """Refuse a batch whose edges name nodes that are neither in it nor in the store.

        Checked before anything is written: a COPY that fails on a missing key inside a
        transaction leaves ladybug 0.22 unable to checkpoint afterwards.
        """
        wanted: dict[str, list[pa.ChunkedArray]] = {}
        for rtype, table in edges.items():
            rel = REL_TYPES[rtype]
            wanted.setdefault(rel.source, []).append(table.column("src"))
            wanted.setdefault(rel.target, []).append(table.column("dst"))
        for label, cols in wanted.items():
            ids = pc.unique(pa.chunked_array([c for col in cols for c in col.chunks], pa.string()))
            if label in nodes:
                ids = ids.filter(pc.invert(pc.is_in(ids, value_set=nodes[label].column("id"))))
            keys = self._keyset(label)
            if keys is not None and len(ids):
                present, _ = keys.lookup(*fingerprints(ids))
                ids = ids.filter(pa.array(~present))
            if not len(ids):
                continue
            wanted_ids = ids.to_pylist()
            missing = sorted(set(wanted_ids) - set(self._existing(label, wanted_ids, ["id"]).column(0).to_pylist()))
            if missing:
                raise MissingEndpointError(
                    f"{len(missing)} edge endpoint(s) are not in the store, e.g. {label} {missing[0]!r}"
                )

    def _existing(self, label: str, ids: list[str], cols: Sequence[str]) -> pa.Table:
        """Stored ``cols`` of the nodes among ``ids`` (keyed lookups, read as Arrow)."""
        ret = ", ".join(f"n.`{c}` AS `{c}`" for c in cols)
        parts = [
            self._conn.execute(
                f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN {ret}", {"ids": ids[i : i + LOOKUP_CHUNK * 5]}
            ).get_as_arrow()
            for i in range(0, len(ids), LOOKUP_CHUNK * 5)
        ]
        return pa.concat_tables(parts) if parts else pa.table({c: pa.array([], pa.string()) for c in cols})

    def _existing_nodes(self, label: str, ids: pa.ChunkedArray | pa.Array, cols: Sequence[str]) -> pa.Table:
        """Stored ``cols`` of the nodes among ``ids``: keyed lookups, or one scan of the label
        when ``ids`` are many next to it (a re-run after a crash asks for every stored node)."""
        if self._count(label) < SCAN_RATIO * len(ids):
            ret = ", ".join(f"n.`{c}` AS `{c}`" for c in cols)
            found = self._conn.execute(f"MATCH (n:{label}) RETURN {ret}").get_as_arrow()
            return found.filter(pc.is_in(found.column("id"), value_set=pc.unique(ids)))
        return self._existing(label, ids.to_pylist(), cols)

    def _existing_edges(self, rtype: str, cand: pa.Table) -> pa.Table:
        """Stored edges among the (src, dst) keys of ``cand``, with their properties."""
        rel = REL_TYPES[rtype]
        cols = ["src", "dst", "sources", *rel.properties]
        ret = ", ".join(f"{e} AS `{c}`" for e, c in zip(["a.id", "b.id", *(f"e.`{c}`" for c in cols[2:])], cols, strict=True))
        total = self._count(rtype)
        if total < SCAN_RATIO * cand.num_rows:  # one scan of the whole table beats many adjacency lookups
            parts = [self._conn.execute(f"MATCH (a:{rel.source})-[e:{rtype}]->(b:{rel.target}) RETURN {ret}").get_as_arrow()]
        elif len(srcs := pc.unique(cand.column("src")).to_pylist()) <= FEW_SOURCES:
            # an UNWIND over ids is planned as a scan of the rel table (~0.4 s at 180K edges even
            # for one id); a keyed query per source takes ~2 ms
            query = f"MATCH (a:{rel.source} {{id: $id}})-[e:{rtype}]->(b:{rel.target}) RETURN {ret}"
            parts = [self._conn.execute(query, {"id": src}).get_as_arrow() for src in srcs]
        else:
            parts = [
                self._conn.execute(
                    f"UNWIND $ids AS i MATCH (a:{rel.source} {{id: i}})-[e:{rtype}]->(b:{rel.target}) RETURN {ret}",
                    {"ids": srcs[i : i + LOOKUP_CHUNK]},
                ).get_as_arrow()
                for i in range(0, len(srcs), LOOKUP_CHUNK)
            ]
        found = pa.concat_tables(parts) if parts else None
        if found is None or not found.num_rows:
            return cand.schema.empty_table()
        found = found.filter(pc.is_in(_edge_key(found), value_set=_edge_key(cand)))
        return conform_table(rtype, found, ("src", "dst"), rel.properties)

    # -- upserts -----------------------------------------------------------------------------
    def _upsert(
        self, name: str, table: pa.Table, fps: tuple[np.ndarray, np.ndarray]
    ) -> tuple[int, int, tuple[np.ndarray, np.ndarray]]:
        """COPY the rows not stored yet; update the stored ones the batch changes.

        Returns (created, updated, fingerprints of the created keys).
        """
        is_node = name in NODE_TYPES
        keys = ("id",) if is_node else ("src", "dst")
        h1, h2 = fps
        known = self._keysets.get(name)
        if known is not None:
            present, unsure = known.lookup(h1, h2)
            maybe = present | unsure
        else:
            maybe = np.ones(table.num_rows, bool)
        is_new = np.ones(table.num_rows, bool)
        updated = 0
        if maybe.any():
            cand = table.filter(pa.array(maybe))
            if is_node:
                cols = list(table.column_names)
                stored = self._existing_nodes(name, cand.column("id"), cols)
                stored = conform_table(name, stored, keys, NODE_TYPES[name].properties)
            else:
                stored = self._existing_edges(name, cand)
            if stored.num_rows:
                key = table.column("id") if is_node else _edge_key(table)
                skey = stored.column("id") if is_node else _edge_key(stored)
                is_new = ~pc.is_in(key, value_set=skey).to_numpy(zero_copy_only=False)
                changed = changed_rows(table.filter(pa.array(~is_new)), stored, keys)
                self._update(name, changed)
                updated = len(changed)
        new = table if is_new.all() else table.filter(pa.array(is_new))
        if new.num_rows:
            self._copy_arrow(name, new)
        return new.num_rows, updated, (h1[is_new], h2[is_new])

    def _update(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Rewrite the changed stored rows, one keyed statement each (re-ingests rarely change any)."""
        if not rows:
            return
        if name in NODE_TYPES and len(rows) >= LOAD_UPDATE_ROWS:
            # many rows: one keyed LOAD FROM a typed Arrow table (40K nodes in ~0.5 s, where a
            # statement per row takes ~100 µs each); rel tables plan the same as a scan, so not them
            props = NODE_TYPES[name].properties
            eventkg_update_rows = pa.Table.from_pylist(rows, schema=row_schema(("id",), props))  # noqa: F841
            sets = ", ".join(f"n.`{c}` = `{c}`" for c in ["sources", *props])
            self._conn.execute(f"LOAD FROM eventkg_update_rows MATCH (n:{name} {{id: id}}) SET {sets}")
            return
        if name in NODE_TYPES:
            props = list(NODE_TYPES[name].properties)
            sets = ", ".join(f"n.`{c}` = $r_{c}" for c in ["sources", *props])
            stmt = f"MATCH (n:{name} {{id: $r_id}}) SET {sets}"
            keys = ["id"]
        else:
            rel = REL_TYPES[name]
            props = list(rel.properties)
            sets = ", ".join(f"e.`{c}` = $r_{c}" for c in ["sources", *props])
            stmt = f"MATCH (a:{rel.source} {{id: $r_src}})-[e:{name}]->(b:{rel.target} {{id: $r_dst}}) SET {sets}"
            keys = ["src", "dst"]
        for row in rows:
            self._conn.execute(stmt, {f"r_{c}": row.get(c) for c in [*keys, "sources", *props]})

    def _copy_arrow(self, table: str, arrow: pa.Table) -> None:
        # ladybug binds Python variables named in COPY ... FROM <name> from the caller's scope
        eventkg_copy_rows = arrow  # noqa: F841
        try:
            self._conn.execute(f"COPY {table} FROM eventkg_copy_rows")
        except RuntimeError as exc:
            raise StoreError(f"writing {table}: {_short(exc)}") from exc

    def clear(self) -> None:
        if self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        self._flush_spool()
        for rel in REL_TYPES.values():
            self._conn.execute(f"MATCH ()-[e:{rel.name}]->() DELETE e")
        for label in NODE_TYPES:
            self._conn.execute(f"MATCH (n:{label}) DELETE n")
        self._keysets.clear()

    # -- reading ---------------------------------------------------------------------------
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        if write and self.read_only:
            raise WriteRefused(f"store {self.url} was opened read-only")
        self._flush_spool()
        try:
            if write:
                self._keysets.clear()  # the query may create or delete nodes and edges
                return [_plain_row(r) for r in self._rows(cypher, params)]
            self._conn.execute("BEGIN TRANSACTION READ ONLY")
            try:
                return [_plain_row(r) for r in self._rows(cypher, params)]
            finally:
                self._rollback()
        except RuntimeError as exc:
            msg = _short(exc)
            if "read-only" in msg or "read only" in msg:
                raise WriteRefused(
                    "query refused: it writes to the graph and the Cypher passthrough is read-only; pass --write to allow it"
                ) from exc
            raise StoreError(f"Cypher error: {msg}") from exc

    def counts(self) -> dict[str, dict[str, int]]:
        self._flush_spool()
        nodes = {label: self._tuples(f"MATCH (n:{label}) RETURN count(*)")[0][0] for label in NODE_TYPES}
        edges = {t: self._tuples(f"MATCH ()-[e:{t}]->() RETURN count(*)")[0][0] for t in REL_TYPES}
        return {"nodes": nodes, "edges": edges}

    def get_nodes(self, label: str, ids: Sequence[str], *, props: bool = True) -> dict[str, dict[str, Any]]:
        self._flush_spool()
        cols = ["id", "sources", *NODE_TYPES[label].properties] if props else ["id"]
        ret = ", ".join(f"n.`{c}`" for c in cols)
        out: dict[str, dict[str, Any]] = {}
        ids = list(ids)
        for i in range(0, len(ids), LOOKUP_CHUNK):
            for vals in self._tuples(
                f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN {ret}", {"ids": ids[i : i + LOOKUP_CHUNK]}
            ):
                out[vals[0]] = decoded(dict(zip(cols, vals, strict=True)))
        return out

    def iter_nodes(self, label: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        self._flush_spool()
        cols = ["id", "sources", *NODE_TYPES[label].properties]
        ret = ", ".join(f"n.`{c}` AS `{c}`" for c in cols)
        yield from self._stream(f"MATCH (n:{label}) RETURN {ret}", batch_size)

    def iter_edges(self, rel_type: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        self._flush_spool()
        rel = REL_TYPES[rel_type]
        ret = ", ".join(f"e.`{c}` AS `{c}`" for c in ["sources", *rel.properties])
        yield from self._stream(
            f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) RETURN a.id AS src, b.id AS dst, {ret}",
            batch_size,
        )

    def _stream(self, cypher: str, batch_size: int) -> Iterator[dict[str, Any]]:
        result = self._conn.execute(cypher)
        cols = result.get_column_names()
        while result.has_next():
            for _ in range(batch_size):
                if not result.has_next():
                    break
                yield decoded(dict(zip(cols, result.get_next(), strict=True)))

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        types = neighbourhood_types(rel_types, direction)
        self._flush_spool()
        g = nx.MultiDiGraph()
        labels = self._labels_of(seeds)
        for nid, label in labels.items():
            g.add_node(nid, label=label)
        frontier = dict(labels)
        for _ in range(hops):
            found = self._adjacent(frontier, types, direction, g)
            nxt = {n: lab for n, lab in found.items() if n not in labels}
            if limit is not None:
                nxt = dict(list(nxt.items())[:limit])
            labels.update(nxt)
            for nid, label in nxt.items():
                g.add_node(nid, label=label)
            frontier = nxt
            if not frontier:
                break
        # edges among the outermost nodes, and drop edges to nodes cut by the limit
        if induced:
            self._adjacent(frontier, types, "both", g, closing=True)
        g.remove_nodes_from([n for n in list(g.nodes) if n not in labels])
        by_label: dict[str, list[str]] = {}
        for nid, label in labels.items():
            by_label.setdefault(label, []).append(nid)
        for label, ids in by_label.items():
            for nid, props in self.get_nodes(label, ids).items():
                g.nodes[nid].update({k: v for k, v in props.items() if v is not None})
        return g

    def _labels_of(self, ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for label in NODE_TYPES:
            missing = [i for i in ids if i not in out]
            if not missing:
                break
            for nid in self.get_nodes(label, missing, props=False):
                out[nid] = label
        return out

    def _adjacent(
        self,
        frontier: Mapping[str, str],
        types: Sequence[str],
        direction: str,
        g: nx.MultiDiGraph,
        closing: bool = False,
    ) -> dict[str, str]:
        """Add edges of ``types`` touching ``frontier`` to ``g``; return the nodes at their far ends."""
        found: dict[str, str] = {}
        if not frontier:
            return found
        by_label: dict[str, list[str]] = {}
        for nid, label in frontier.items():
            by_label.setdefault(label, []).append(nid)
        arrow = {"out": "-[e:{t}]->", "in": "<-[e:{t}]-", "both": "-[e:{t}]-"}[direction]
        for label, ids in by_label.items():
            group = [t for t in types if label in (REL_TYPES[t].source, REL_TYPES[t].target)]
            if not group:
                continue
            # one keyed query per node: ~0.1 ms each, where an UNWIND over the ids is planned
            # as a scan of the rel tables (~300 ms on a 1M-edge store)
            query = f"MATCH (a:{label} {{id: $id}}){arrow.format(t='|'.join(group))}(b) RETURN ID(a), b.id, label(b), e"
            for nid in ids:
                for a_internal, b, blabel, e in self._tuples(query, {"id": nid}):
                    etype = e["_LABEL"]
                    if etype not in group:
                        continue
                    declared = REL_TYPES[etype].properties.keys() | {"sources"}
                    props = decoded({k: v for k, v in e.items() if k in declared and v is not None})
                    src, dst = (nid, b) if e["_SRC"] == a_internal else (b, nid)
                    if closing and b not in g:
                        continue  # the closing pass only keeps edges among held nodes
                    g.add_edge(src, dst, key=etype, type=etype, **props)
                    found[b] = blabel
        return found

    def close(self) -> None:
        if getattr(self, "_conn", None) is None:
            return  # never opened, or closed already
        try:
            self._end_session()  # closed inside a bulk session: write what it holds
            if self._unflushed_rows and not self._engine_failed:
                self.checkpoint()  # after a failed write, leave the WAL for recovery on next open
        finally:
            conn, db = self._conn, self._db  # read now: a checkpoint may have reopened them
            self._conn = self._db = None
            conn.close()
            db.close()


def _short(exc: BaseException) -> str:
    """The first line of an engine error, without its exception-class prefix noise."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Engine values -> JSON-friendly values (nodes and rels become property dicts)."""
    return {k: _plain(v) for k, v in row.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        if "_LABEL" in value:
            out = {k: _plain(v) for k, v in value.items() if not k.startswith("_")}
            out["_label" if "_SRC" not in value else "_type"] = value["_LABEL"]
            return out
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
