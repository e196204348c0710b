"""The COPYs of a bulk session: a held table's rows staged as Parquet files and COPYed into the engine.

:class:`StagedCopies` cuts a table's rows into as few COPYs as the memory budget allows (the
engine builds a COPY's primary-key index in its buffer pool, so past some size one COPY fails),
a node table's by ranges of the engine's hash indexes, sizes the buffer pool before each COPY to
what the budget leaves beside the process, checkpoints between COPYs (the database reopened, so
each starts from the same floor) and keeps the digest of the rows it COPYed.

Invariant: a staged file is closed before the pool is sized for its COPY, and every staged file
is removed when its COPY is done or fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from eventkg import settings
from eventkg.graphstore.digest import EMPTY, TableDigest
from eventkg.graphstore.ladybug.bulk.state import SessionState
from eventkg.graphstore.ladybug.engine import (
    EDGE_COPY_MARGIN,
    POOL_SLACK,
    copy_rows,
    count_rows,
    edge_pool_bytes,
    edge_pool_for,
    pool_in_use,
    release_free_memory,
    resident_bytes,
)
from eventkg.graphstore.ladybug.index_parts import index_ranges, split_by_range
from eventkg.graphstore.ladybug.spool import Staged, parquet_parts
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import row_schema


class StagedCopies:
    """The COPYs of the session in ``state``: staged in its spool's folder, their digests added to
    ``state.copied``, the pool sized by ``state.appends`` and ``state.append_margin``."""

    def __init__(self, state: SessionState) -> None:
        self._state = state

    def copy_budgeted(self, name: str, parts: Iterator[pa.Table], rows: int) -> None:
        """COPY ``parts`` into ``name`` from staged Parquet files of at most the rows one COPY may
        take under the memory budget (:func:`~eventkg.graphstore.ladybug.engine.copy_rows`), each
        but the last followed by a checkpoint; says so first (``notify``) when the table takes more
        than one. A node table's COPYs each take the keys of one range of the engine's hash
        indexes (:meth:`_copy_by_index_range`); a rel table's, its rows in the order held."""
        state = self._state
        limit = copy_rows(name, state.database.pool_bytes if name in NODE_TYPES else edge_pool_bytes())
        bounds = index_ranges(rows, limit) if name in NODE_TYPES else None
        copies = len(bounds) - 1 if bounds is not None else -(-rows // limit)
        if copies > 1:
            state.notify(f"note: {name}: {rows:,} rows need {copies} COPYs of at most {limit:,} "
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
        state = self._state
        stage: Staged | None = None
        base: TableDigest | None = None
        try:
            for part in parts:
                while part.num_rows:
                    if stage is None:
                        base = state.writer.digest_base(name)
                        stage = Staged(state.spool.folder / f"{name}.parquet", schema, digest=base is not None)
                    taken = part.slice(0, limit - stage.rows)
                    stage.add(taken)
                    part = part.slice(taken.num_rows)
                    if stage.rows >= limit:
                        self._copy_stage(name, stage, base)
                        stage.discard()
                        stage = None
                        state.database.checkpoint_and_release()
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
        state = self._state
        digest = state.writer.digest_base(name) is not None
        stages = [Staged(state.spool.folder / f"{name}.{i}.parquet", schema, digest=digest)
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
                    state.database.checkpoint_and_release()
                if stage.rows > limit:
                    self._copy_in_slices(name, parquet_parts(stage.path), limit, schema)
                else:
                    self._copy_stage(name, stage, state.writer.digest_base(name))
                stage.discard()
        finally:
            for stage in stages:
                stage.discard()

    def _copy_stage(self, name: str, stage: Staged, base: TableDigest | None) -> None:
        """COPY one staged file into ``name`` (its pool sized first), remembering the rows' digest.
        The file is closed before the pool is sized: its writer's buffers would otherwise count as
        memory beside the pool and shrink it (``docs/performance.md``)."""
        state = self._state
        stage.close()
        self._before_copy(name)
        copied = state.writer.copy_staged(name, stage, base)
        if copied is not None:
            state.copied[name] = state.copied.get(name, EMPTY) + copied

    def _before_copy(self, name: str) -> None:
        """Hand back what staging freed, then size the pool for a rel COPY to what the budget leaves
        (:func:`~eventkg.graphstore.ladybug.engine.edge_pool_for`); node COPYs keep theirs, which
        :func:`~eventkg.graphstore.ladybug.engine.copy_rows` planned the rows by."""
        state = self._state
        release_free_memory()
        if name in REL_TYPES:
            appending = bool(state.appends) and count_rows(state.database.conn, name) > 0
            fit = edge_pool_for(self.beside_pool(), state.append_margin if appending else EDGE_COPY_MARGIN)
            if appending:  # the pool it needs (HeldTables._append_pool checked that the budget leaves it)
                fit = max(fit, state.appends)
            pool = state.database.pool_bytes
            if pool > fit or pool < fit - POOL_SLACK:  # else keep the open database
                state.database.set_buffer_pool(fit)

    def beside_pool(self) -> int | None:
        """What the process holds beside the buffer pool's pages in use (None where not known)."""
        rss = resident_bytes()  # less the pool's pages, which a COPY reuses when the database stays open
        return None if rss is None else rss - pool_in_use(self._state.database.conn)
