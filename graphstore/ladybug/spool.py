"""New rows held back during a bulk load: one Arrow IPC file per table, beside the store.

Why (LadybugDB 0.22; the figures: ``docs/performance.md``):

* Everything a COPY changes in a rel table stays in memory until the next checkpoint, an amount
  that grows with the nodes the table joins however few edges it got.
* A COPY into a rel table that is non-empty and already checkpointed rewrites much of it.
* One COPY per table, each followed by a checkpoint, is the fast and small way.

So a bulk session appends each table's new rows to a file (memory stays flat as the input
grows) and writes the tables one by one when it ends: node tables first, so every edge
finds its endpoints. A held table is read back a few batches at a time (:func:`read_parts`)
into a :class:`Staged` Parquet file the engine COPYs itself, so no table is ever resident whole.

Rows whose keys are already held or stored (ASER texts repeated across loader batches, a
re-run after a crash) go to a second spool and are upserted, table by table in one pass
each, once the held rows are written: later rows still win, and the session goes on.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from eventkg.errors import DiskFullError, EventKGError
from eventkg.graphstore.atomic import disk_full_message, is_disk_full
from eventkg.graphstore.digest import EMPTY, TableDigest, table_digest
from eventkg.graphstore.errors import StoreError

PREFIX = ".eventkg-spool-"
DIGEST_BACKLOG = 2  # parts a Staged file may hold while their digests wait (the file's thread lags its writes)
STAGE_ROW_GROUP = 131_072  # rows per Parquet row group of a staged table (the engine reads one at a time)


class TableSpool:
    """Arrow tables appended per table name to files in a private folder."""

    def __init__(self, beside: Path) -> None:
        remove_stale(beside.parent)
        self.folder = private_folder(beside)
        self._writers: dict[str, tuple[pa.NativeFile, pa.ipc.RecordBatchFileWriter]] = {}
        self.rows: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self.rows)

    def add(self, name: str, table: pa.Table, keys: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Append ``table`` to what is held of ``name``; with ``keys`` (its rows' key fingerprints),
        those go to a file beside it, read back by :meth:`take_keys` (only when every add of the
        table gives them)."""
        if not table.num_rows:
            return
        if name not in self._writers:
            sink = pa.OSFile(str(self.folder / f"{name}.arrow"), "wb")
            self._writers[name] = (sink, pa.ipc.new_file(sink, table.schema))
        self._writers[name][1].write_table(table)
        if keys is not None:
            with open(self.folder / f"{name}.keys", "ab") as fh:
                np.stack(keys, axis=1).astype(np.uint64, copy=False).tofile(fh)
        self.rows[name] = self.rows.get(name, 0) + table.num_rows

    def take_keys(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The key fingerprints held beside ``name`` (its file deleted), or None unless they are
        there for all of its ``rows`` rows."""
        path = self.folder / f"{name}.keys"
        if not path.exists():
            return None
        pairs = np.fromfile(path, np.uint64)
        path.unlink()
        if len(pairs) != 2 * rows:
            return None
        pairs = pairs.reshape(rows, 2)
        return np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])

    def _finish(self, name: str) -> Path:
        """Stop holding ``name``: its file closed and complete, ready to be read once (and deleted)."""
        sink, writer = self._writers.pop(name)
        writer.close()
        sink.close()
        self.rows.pop(name, None)
        return self.folder / f"{name}.arrow"

    def slices(self, name: str, rows: int) -> Iterator[pa.Table]:
        """The held table ``name`` in slices of at most ``rows`` rows (written batches cut where
        needed), each read into memory when the caller asks for it (its file deleted at the end), so
        a big node table is never resident whole.

        Unlike :meth:`drain`'s mapping, a slice the caller drops is memory given back. Cut, not
        "whole batches past ``rows``": held batches are a loader batch less its repeated keys, so
        whole batches made slices of nearly twice ``rows``, and the engine's memory for a COPY and
        its checkpoint grows with the slice (figures: ``docs/performance.md``).
        """
        if name not in self._writers:
            return
        path = self._finish(name)
        try:
            yield from read_parts(path, rows)
        finally:
            path.unlink(missing_ok=True)

    def held_file(self, name: str) -> Path | None:
        """Stop holding ``name`` and hand its complete file to the caller (who reads and deletes it),
        or None when nothing of it is held."""
        return self._finish(name) if name in self._writers else None

    def take(self, name: str) -> pa.Table | None:
        """One held table read into memory (its file deleted), or None when nothing of it is held."""
        if name not in self._writers:
            return None
        path = self._finish(name)
        with pa.OSFile(str(path), "rb") as source:
            table = pa.ipc.open_file(source).read_all()
        path.unlink()
        return table

    def close(self) -> None:
        """Forget whatever is still held and remove the folder, whatever closing its files raises (a
        full disk fails a file's last write: the folder must go all the same, it is what fills the disk)."""
        try:
            for sink, writer in self._writers.values():
                with suppress(OSError):
                    writer.close()
                with suppress(OSError):
                    sink.close()
        finally:
            self._writers.clear()
            self.rows.clear()
            shutil.rmtree(self.folder, ignore_errors=True)


def read_parts(path: Path, rows: int) -> Iterator[pa.Table]:
    """A held table's file in parts of at most ``rows`` rows, in order, each read when the caller
    asks for it (the file is kept)."""
    with pa.OSFile(str(path), "rb") as source:
        reader = pa.ipc.open_file(source)
        pieces: list[pa.RecordBatch] = []
        held = 0
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            while batch.num_rows:
                piece = batch.slice(0, rows - held)
                batch = batch.slice(piece.num_rows)
                pieces.append(piece)
                held += piece.num_rows
                if held == rows:
                    held = 0
                    yield pa.Table.from_batches(_emptied(pieces))  # the frame keeps no reference
            batch = None
        if pieces:
            yield pa.Table.from_batches(_emptied(pieces))


class Staged:
    """Rows written to one Parquet file for the engine to COPY itself, their digest computed beside.

    Why a file: LadybugDB reads a Parquet file in row groups, so one COPY of a whole table needs
    no copy of it in this process (an Arrow table handed to COPY, even memory-mapped, is resident
    here while the engine reads it). One COPY per table where the budget allows: each COPY's
    checkpoint rewrites what it reached of the table (see ``docs/performance.md``). The digest of
    each part is computed in a thread while the next part is read and written (numpy and Parquet
    release the GIL); a part waits for it past ``DIGEST_BACKLOG``.
    """

    def __init__(self, path: Path, schema: pa.Schema, *, digest: bool) -> None:
        self.path, self.rows = path, 0
        self._writer = pq.ParquetWriter(str(path), schema, compression="none", write_statistics=False)
        self._digests: list = []
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="eventkg-digest") if digest else None
        self._closed: tuple[TableDigest | None] | None = None  # close()'s answer, once closed

    def add(self, table: pa.Table) -> None:
        """Append ``table`` (its schema the file's) to the file."""
        if not table.num_rows:
            return
        if table.schema != self._writer.schema:
            table = table.select(self._writer.schema.names).cast(self._writer.schema)
        self._writer.write_table(table, row_group_size=STAGE_ROW_GROUP)
        self.rows += table.num_rows
        if self._pool is not None:
            self._digests.append(self._pool.submit(table_digest, table))
            if len(self._digests) > DIGEST_BACKLOG:  # wait for the oldest: parts waiting for their digest are held
                self._digests[-DIGEST_BACKLOG - 1].result()

    def close(self) -> TableDigest | None:
        """Finish the file (its writer's buffers freed); the digest of every row added (None when not
        asked for). Closing again gives the same answer."""
        if self._closed is not None:
            return self._closed[0]
        self._writer.close()
        if self._pool is None:
            self._closed = (None,)
            return None
        try:
            digest = sum((f.result() for f in self._digests), EMPTY)
        finally:
            self._digests.clear()
            self._pool.shutdown()
        self._closed = (digest,)
        return digest

    def discard(self) -> None:
        """Drop the file (after its COPY, or when it will not be written)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        with suppress(Exception):
            self._writer.close()
        self.path.unlink(missing_ok=True)


def parquet_parts(path: Path) -> Iterator[pa.Table]:
    """A staged Parquet file (:class:`Staged`) a row group at a time, in order."""
    source = pq.ParquetFile(str(path))
    try:
        for group in range(source.num_row_groups):
            yield source.read_row_group(group)
    finally:
        source.close()


def read_partitions(path: Path, parts: int, key_hash: Callable[[pa.RecordBatch], np.ndarray]
                    ) -> Iterator[pa.Table]:
    """A held table's file split by key into ``parts`` tables (rows whose ``key_hash`` is ``i``
    modulo ``parts``, in the order held), each read when the caller asks for it; the file is kept.

    A key's rows all fall in one part, so each part can be deduplicated and upserted (or
    digested) on its own with the same result as the whole table, without the whole table in
    memory (a re-run after a crash waits with every event). One pass over the file to hash the
    keys, then one per part (it is in the page cache by then).
    """
    with pa.OSFile(str(path), "rb") as source:  # each row's part, hashed once (4 B per row)
        reader = pa.ipc.open_file(source)
        part_of = [(key_hash(reader.get_batch(i)) % np.uint64(parts)).astype(np.uint32)
                   for i in range(reader.num_record_batches)]
    for part in range(parts):
        with pa.OSFile(str(path), "rb") as source:
            reader = pa.ipc.open_file(source)
            kept = []
            for i in range(reader.num_record_batches):
                batch = reader.get_batch(i)
                kept.append(batch.filter(pa.array(part_of[i] == part)))
            batch = None
            table = pa.Table.from_batches(_emptied(kept), reader.schema)
        yield table
        table = None


def _emptied(items: list) -> list:
    """The items of ``items``, which is left empty."""
    out = items[:]
    items.clear()
    return out


def hold_failure(exc: OSError, folder: Path, beside: Path) -> EventKGError:
    """The one-line error of rows that could not be spooled into ``folder`` beside the store ``beside``:
    a full disk says so, where and how much was free (the caller's session removes the spool)."""
    if is_disk_full(exc, folder):
        return DiskFullError(disk_full_message(f"holding the ingest's new rows beside {beside}", beside))
    return StoreError(f"cannot hold rows in {folder}: {exc.strerror or exc}")


def private_folder(beside: Path) -> Path:
    """A new folder of this process beside the file ``beside`` (:func:`remove_stale` deletes it once
    the process is gone, should it be killed before it removes the folder itself)."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=beside.parent))


def remove_stale(folder: Path) -> None:
    """Delete spool folders left by processes that were killed (their pid is gone)."""
    for path in folder.glob(f"{PREFIX}*"):
        try:
            pid = int(path.name[len(PREFIX) :].split("-", 1)[0])
        except ValueError:
            continue
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
