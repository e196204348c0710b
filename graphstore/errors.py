"""The storage layer's failures: the store, its backends, the saved queries, the data model, the test server.

Every one is an :class:`~eventkg.errors.EventKGError` (most a :class:`StoreError`), so the CLI
prints ``str(err)`` on one line and exits 2; each message says what and where, never a flag.
"""

from __future__ import annotations

from eventkg.errors import EventKGError


class StoreError(EventKGError):
    """A problem with the store the user can fix (bad URL, unreachable server, unwritable path...).

    The CLI prints ``str(err)`` on one line and exits with code 2, without a traceback.
    """


class IncompleteStoreError(StoreError):
    """A command that derives results from the graph was asked to read a store whose ingest did not complete."""


class WriteRefused(StoreError):
    """A write was attempted through the read-only Cypher passthrough."""


class MissingEndpointError(StoreError):
    """An edge row names a node id that is not in the store (nor in the same batch)."""


class SavedQueryError(StoreError):
    """An unknown saved query, a malformed queries file, or a query the backend cannot run."""


class Neo4jServerError(StoreError):
    """The test server could not be prepared or started (missing tool, failed start...)."""


class EventLevelError(EventKGError, ValueError):
    """A level that is not one of :data:`~eventkg.graphstore.model.EVENT_LEVELS` (the default error of
    :func:`~eventkg.graphstore.model.check_event_level`)."""
