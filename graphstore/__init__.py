"""Typed graph storage for eventkg: the data model and two backends behind one interface.

>>> from eventkg import open_store
>>> store = open_store("/tmp/my-eventkg")           # embedded LadybugDB  # doctest: +SKIP
>>> store = open_store("neo4j://localhost:7687")    # Neo4j 5 over Bolt   # doctest: +SKIP
"""

from eventkg.graphstore.base import Batch, GraphStore, WriteResult
from eventkg.graphstore.errors import (
    EventLevelError,
    IncompleteStoreError,
    MissingEndpointError,
    Neo4jServerError,
    SavedQueryError,
    StoreError,
    WriteRefused,
)
from eventkg.graphstore.open import open_store, resolve_store_url
from eventkg.graphstore.rows import EdgeRow, NodeRow

__all__ = [
    "Batch",
    "EdgeRow",
    "EventLevelError",
    "GraphStore",
    "IncompleteStoreError",
    "MissingEndpointError",
    "Neo4jServerError",
    "NodeRow",
    "SavedQueryError",
    "StoreError",
    "WriteRefused",
    "WriteResult",
    "open_store",
    "resolve_store_url",
]
