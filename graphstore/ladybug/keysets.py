"""Which keys the embedded store holds: a :class:`~eventkg.graphstore.keyset.KeySet` per table.

Asking the engine which keys exist costs more than writing them, so :class:`KeySets` keeps the
128-bit fingerprints of every stored key of a table (16 bytes each), built by one key scan the
first time the table is written, then kept up to date after each commit. Only keys a set reports
(present, or sharing a first hash) are looked up; a fresh bulk load asks the engine nothing.

Invariant: a table's set holds exactly its stored keys, or the table has no set (never built, or
dropped); this is exact because only this process may write the file. A raw write query or
``clear()`` drops every set. Past ``keyset_max`` keys, all tables together
(``EVENTKG_KEYSET_MAX``), a table gets ``None``: the store asks the engine every time.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug.database import Database
from eventkg.graphstore.ladybug.engine import count_rows, node_file_pages, table_pages
from eventkg.graphstore.ladybug.spool import private_folder
from eventkg.graphstore.model import NODE_TYPES
from eventkg.graphstore.tables import key_fingerprints

Fingerprints = tuple[np.ndarray, np.ndarray]

# a key set built by scanning this many stored keys (a re-run builds one per stored table) is
# followed by a checkpoint and a reopening: the scan leaves the table's pages and its result in
# the engine (figures: docs/performance.md)
SCAN_RELEASE_KEYS = 100_000
KEY_SCAN_ROWS = 200_000  # keys (node rows, or a rel table's source node offsets) hashed at a time by KeySets.scan


class KeySets:
    """The key sets of one store's tables, built from ``database`` on demand."""

    def __init__(self, database: Database, keyset_max: int) -> None:
        self._database = database
        self.keyset_max = keyset_max  # keys remembered, all tables together
        self._sets: dict[str, KeySet | None] = {}

    def __contains__(self, name: str) -> bool:
        """True when a set (or the None of too many keys) was built for ``name``."""
        return name in self._sets

    def held(self) -> int:
        """Keys remembered, all tables together."""
        return sum(len(k) for k in self._sets.values() if k is not None)

    def nbytes(self) -> int:
        """Bytes the sets hold (their fingerprints)."""
        return sum(k.nbytes for k in self._sets.values() if k is not None)

    def known(self, name: str) -> KeySet | None:
        """The set of ``name`` if one was built (None: not built, or too many keys)."""
        return self._sets.get(name)

    def get(self, name: str) -> KeySet | None:
        """The fingerprints of every key of a table (scanned once per store object), or None
        when the tables hold too many keys to remember (then every write asks the engine).
        Call it before any transaction opens: a big scan is followed by a checkpoint."""
        if name in self._sets:
            return self._sets[name]
        total = count_rows(self._database.conn, name)
        keys = None
        if self.held() + total <= self.keyset_max:
            keys = KeySet()
            if total:
                self.scan(name, keys)
            if total >= SCAN_RELEASE_KEYS and not self._database.failed:
                # the scan left the table's pages and its result in the engine: hand them back
                # before the next scan or write
                self._database.checkpoint_and_release()
        self._sets[name] = keys
        return keys

    def scan(self, name: str, keys: KeySet) -> None:
        """Add the keys of a table to ``keys``, ``KEY_SCAN_ROWS`` at a time.

        Why in parts: one query returning every key holds the engine's result, its Arrow copy and
        the hashing's temporaries at once. A node table's ids are written once by the engine to a
        Parquet file beside the store and read back in parts: pages of node offsets, one query
        each, read the whole table per page (the square of its size). A rel table is read by
        pages of its source nodes' offsets: the engine's one ``COPY ... TO`` of its ends' ids was
        not much faster, and its join of the ids grows faster than the rows either way (figures:
        ``docs/performance.md``).
        """
        conn = self._database.conn
        if name not in NODE_TYPES:
            _add_pages(keys, table_pages(conn, name, "a.id AS src, b.id AS dst", page=KEY_SCAN_ROWS))
            return
        folder = private_folder(Path(self._database.url))
        try:
            _add_pages(keys, node_file_pages(conn, name, "n.id AS id", folder / f"{name}.parquet", page=KEY_SCAN_ROWS))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def add(self, name: str, h1: np.ndarray, h2: np.ndarray) -> None:
        """Keys written to ``name`` (committed): added to its set, or the set given up past ``keyset_max``."""
        keys = self._sets.get(name)
        if keys is None:
            return
        if self.held() + len(h1) > self.keyset_max:
            self._sets[name] = None  # too many to remember: ask the engine from now on
        else:
            keys.add(h1, h2)

    def drop(self, name: str) -> None:
        """Forget the set of ``name`` (rebuilt by a scan when next asked)."""
        self._sets.pop(name, None)

    def clear(self) -> None:
        """Forget every set (after a write the sets cannot follow, or one that failed)."""
        self._sets.clear()


def _add_pages(keys: KeySet, pages: Iterator[pa.Table]) -> None:
    """The keys of each page added to ``keys``, one page held at a time."""
    for page in pages:
        keys.add(*key_fingerprints(page))
        page = None
