"""Which keys the embedded store holds: a :class:`~eventkg.graphstore.keyset.KeySet` per table.

Asking the engine which keys exist costs more than writing them, so :class:`StoredKeys` keeps the
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
from typing import Any

import numpy as np
import pyarrow as pa

from eventkg.graphstore.keyset import KeySet, fingerprints, pair_fingerprints
from eventkg.graphstore.ladybug.database import Database
from eventkg.graphstore.ladybug.engine import count_rows, max_offset, node_file_pages, table_pages
from eventkg.graphstore.ladybug.spool import private_folder
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import key_fingerprints

Fingerprints = tuple[np.ndarray, np.ndarray]

# a key set built by scanning this many stored keys (a re-run builds one per stored table) is
# followed by a checkpoint and a reopening: the scan leaves the table's pages and its result in
# the engine (figures: docs/performance.md)
SCAN_RELEASE_KEYS = 100_000
KEY_SCAN_ROWS = 200_000  # keys (node rows, or a rel table's source node offsets) hashed at a time by StoredKeys.scan
#: a rel table with at least this many edges per node of its end labels is scanned by its ends' node
#: offsets, each end label's fingerprints read once by offset; a smaller one by its ends' ids, which
#: the engine joins edge by edge (figures: docs/performance.md). At 1.0 the end labels' arrays (16 B
#: a node offset, holes left by deletes included) are about the size of the table's own key set or
#: smaller, so ``keyset_max`` bounds both.
OFFSET_SCAN_EDGES_PER_NODE = 1.0


class StoredKeys:
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
                self.scan(name, keys, total)
            if total >= SCAN_RELEASE_KEYS and not self._database.failed:
                # the scan left the table's pages and its result in the engine: hand them back
                # before the next scan or write
                self._database.checkpoint_and_release()
        self._sets[name] = keys
        return keys

    def scan(self, name: str, keys: KeySet, rows: int) -> None:
        """Add the ``rows`` keys of a table to ``keys``, ``KEY_SCAN_ROWS`` at a time.

        Why in parts: one query returning every key holds the engine's result, its Arrow copy and
        the hashing's temporaries at once. Why through files: pages of node offsets, one query
        each, read the whole node table per page (the square of its size), so a node table's ids
        are written once by the engine to a Parquet file beside the store and read back in parts.
        A rel table is read by pages of its source nodes' offsets: a big one
        (``OFFSET_SCAN_EDGES_PER_NODE``) returns its ends' offsets, looked up in its end labels'
        fingerprints read once by offset (:func:`_prints_by_offset`); a small one returns its ends'
        ids, which the engine joins edge by edge (slower per edge, and more so as the table
        grows, but no pass over the node tables; figures: ``docs/performance.md``).
        """
        conn = self._database.conn
        if name not in NODE_TYPES and not _by_offsets(conn, name, rows):
            _add_pages(keys, table_pages(conn, name, "a.id AS src, b.id AS dst", page=KEY_SCAN_ROWS))
            return
        folder = private_folder(Path(self._database.url))  # only the scans through files need one
        try:
            if name in NODE_TYPES:
                _add_pages(keys, node_file_pages(conn, name, "n.id AS id", folder / f"{name}.parquet",
                                                 page=KEY_SCAN_ROWS))
            else:
                _add_offset_pages(conn, name, keys, folder)
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


def _by_offsets(conn: Any, name: str, rows: int) -> bool:
    """Whether rel table ``name`` (``rows`` edges) is scanned by its ends' offsets (see ``StoredKeys.scan``)."""
    rel = REL_TYPES[name]
    nodes = sum(count_rows(conn, label) for label in {rel.source, rel.target})
    return rows >= OFFSET_SCAN_EDGES_PER_NODE * nodes


def _add_offset_pages(conn: Any, name: str, keys: KeySet, folder: Path) -> None:
    """The keys of rel table ``name`` added to ``keys``: its ends' node offsets, a page of source
    offsets at a time, composed from each end label's fingerprints by offset."""
    rel = REL_TYPES[name]
    prints = {label: _prints_by_offset(conn, label, folder) for label in {rel.source, rel.target}}
    (s1, s2), (d1, d2) = prints[rel.source], prints[rel.target]
    for page in table_pages(conn, name, "offset(id(a)) AS s, offset(id(b)) AS d", page=KEY_SCAN_ROWS):
        src, dst = page.column("s").to_numpy(), page.column("d").to_numpy()
        keys.add(*pair_fingerprints((s1[src], s2[src]), (d1[dst], d2[dst])))
        page = src = dst = None


def _prints_by_offset(conn: Any, label: str, folder: Path) -> Fingerprints:
    """The :func:`~eventkg.graphstore.keyset.fingerprints` of every ``label`` node's id, indexed by
    its node offset (16 bytes an offset; a deleted node's offset holds zeros, and no edge names it),
    from one engine read of the table."""
    top = max_offset(conn, label)
    h1, h2 = np.zeros(top + 1, np.uint64), np.zeros(top + 1, np.uint64)
    for page in node_file_pages(conn, label, "offset(id(n)) AS k, n.id AS id", folder / f"{label}.parquet",
                                page=KEY_SCAN_ROWS):
        at = page.column("k").to_numpy()
        h1[at], h2[at] = fingerprints(page.column("id"))
        page = at = None
    return h1, h2
