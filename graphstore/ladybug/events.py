"""What the embedded store reports as it works: :class:`StoreEvent` for the ``on_event`` hook, and
:class:`StoreState`, what a bulk session holds and how it routes each table.

Both are for callers that watch a write (a progress view, a test that checks the order of the
steps) without reaching into the store's parts; neither changes what the store does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["EventHook", "EventKind", "StoreEvent", "StoreState"]

#: ``dropped``: a table's digest was dropped from disk, the first step of a write it cannot follow;
#: ``copied``: a table the bulk session held was written (COPYed from its spool);
#: ``merged``: the waiting rows of a deferred rel table were written (COPYed, upserted or found stored);
#: ``checkpoint``: the write-ahead log was folded into the database file;
#: ``reopen``: the database was closed and opened again (the engine's memory handed back).
EventKind = Literal["dropped", "copied", "merged", "checkpoint", "reopen"]


@dataclass(frozen=True)
class StoreEvent:
    """One step of a write, as the store's ``on_event`` hook sees it.

    Attributes:
        kind: What happened (:data:`EventKind`).
        table: The node label or relationship type it happened to; None for the whole database.
    """

    kind: EventKind
    table: str | None = None


EventHook = Callable[[StoreEvent], None]


@dataclass(frozen=True)
class StoreState:
    """A snapshot of the embedded store's write state (all empty outside a bulk session but ``key_sets``).

    Attributes:
        held_rows: Rows the bulk session holds, waiting to be written, per table.
        deferred: Stored rel tables whose rows all wait for the end of the session.
        looked_up: Stored node tables whose keys are asked of the engine batch by batch.
        unkeyed: Rel tables held without a key set (their repeated keys merged when written).
        key_sets: Tables whose key set has been built (or found too big to keep).
        buffer_pool_bytes: The engine's buffer pool now.
    """

    held_rows: Mapping[str, int]
    deferred: frozenset[str]
    looked_up: frozenset[str]
    unkeyed: frozenset[str]
    key_sets: frozenset[str]
    buffer_pool_bytes: int
