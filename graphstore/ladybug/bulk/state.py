"""The state one bulk session shares among its parts: the store's parts it writes through, its spools,
the tables it plans for, the keys it added and the digests of what it COPYed.

Why one typed object: the session is split by job (:mod:`.planning`, :mod:`.holding`,
:mod:`.held_tables`, :mod:`.staged_copies`, :mod:`.waiting`), but every part decides from the same
facts (is this table held without a key set? deferred? which node keys did this session add?).
Each part is given this object instead of reaching into another part's fields.

Invariant: outside a session ``spool`` is None and the per-session sets and maps are empty
(:meth:`~eventkg.graphstore.ladybug.bulk.session.BulkSession.holding` resets them at its start,
its end clears them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.digest import TableDigest
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.ladybug.database import Database
from eventkg.graphstore.ladybug.digest_file import DigestTracker
from eventkg.graphstore.ladybug.events import EventHook
from eventkg.graphstore.ladybug.spool import TableSpool
from eventkg.graphstore.ladybug.stored_keys import StoredKeys
from eventkg.graphstore.ladybug.writer import TableWriter


@dataclass(eq=False)
class SessionState:
    """What a bulk session holds and knows, shared by its parts.

    The first six fields are the store's parts, fixed for the store's life: the database file
    (``beside``: the spools' folders go beside it), the open ``database`` (checkpoints, buffer
    pool, row counts), its ``digests``, its key sets (``keys``), the ``writer`` every write goes
    through, ``notify`` (a short message as each held table is written) and ``emit`` (a
    :class:`~eventkg.graphstore.ladybug.events.StoreEvent` once it is: the store's ``on_event``). The others belong to
    the session now open.
    """

    beside: Path
    database: Database
    digests: DigestTracker
    keys: StoredKeys
    writer: TableWriter
    notify: Callable[[str], None]
    emit: EventHook = field(default=lambda event: None)  # hears each table written (events.StoreEvent)
    spool: TableSpool | None = None  # new rows held back (None: no session)
    late: TableSpool | None = None  # rows of keys already stored or held, upserted after the flush
    repeats: TableSpool | None = None  # rows of node keys this session added, merged before their COPY
    unkeyed: set[str] = field(default_factory=set)  # rel tables held without a key set (SessionPlan.holds_unkeyed)
    deferred: set[str] = field(default_factory=set)  # stored rel tables whose rows all wait (SessionPlan.defers)
    looked_up: set[str] = field(default_factory=set)  # stored node tables asked about per batch (SessionPlan.looks_up)
    new_nodes: dict[str, KeySet] = field(default_factory=dict)  # node keys this session holds new, when it began non-empty
    copied: dict[str, TableDigest] = field(default_factory=dict)  # this session's held rows COPYed, per table
    fresh: bool = False  # the session began with every node table empty
    appends: int = 0  # the buffer pool this flush's appends to stored rel tables need (HeldTables._append_pool)
    append_margin: int = 0  # and what they take beside it
    told_keys: bool = False  # the note that the key sets are full was given
    late_result: WriteResult = field(default_factory=WriteResult)  # what merging and upserting waiting rows did
    late_skipped: dict[str, int] = field(default_factory=dict)  # waiting rows found equal to the stored table by digest
    checked: dict[str, tuple[Path, int, bool]] = field(default_factory=dict)  # waiting files taken by _append_pool

    def add_keys(self, name: str, h1: np.ndarray, h2: np.ndarray) -> None:
        """Keys written or held: added to the table's key set, unless it is held without one."""
        if name not in self.unkeyed:
            self.keys.add(name, h1, h2)
