"""The storage interface every backend implements, and the errors it raises.

Loaders hand typed rows to :meth:`GraphStore.write_batch`; algorithms pull small networkx
graphs with :meth:`GraphStore.neighbourhood`. Neither writes backend-specific Cypher.

Row shapes
----------
node row: ``{"id": str, "sources": [str, ...], <declared properties>...}``
edge row: ``{"src": id, "dst": id, "sources": [str, ...], <declared properties>...}``
Endpoint labels come from the relationship type (:data:`graphstore.model.REL_TYPES`).

Upsert semantics (both backends): a node or edge is identified by (label, id) or
(type, src, dst); a second write merges properties (non-null new values win) and unions
``sources``; writing the same rows twice changes nothing.

networkx shape
--------------
``nx.MultiDiGraph``; node key = id, attributes ``label`` + properties; edge key = stored
type (``CAUSES``...), attributes ``type`` + properties.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from graphstore.model import NODE_TYPES, REL_TYPES


class StoreError(Exception):
    """A problem the user can fix (bad URL, unreachable server, unwritable path...).

    The CLI prints ``str(err)`` on one line and exits non-zero, without a traceback.
    """


class WriteRefused(StoreError):
    """A write was attempted through the read-only Cypher passthrough."""


class MissingEndpointError(StoreError):
    """An edge row names a node id that is not in the store (nor in the same batch)."""


@dataclass
class Batch:
    """Rows to write atomically: all of it lands, or none of it does."""

    nodes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    edges: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add_node(self, label: str, row: dict[str, Any]) -> None:
        self.nodes.setdefault(label, []).append(row)

    def add_edge(self, rel_type: str, row: dict[str, Any]) -> None:
        self.edges.setdefault(rel_type, []).append(row)

    def __len__(self) -> int:
        return sum(map(len, self.nodes.values())) + sum(map(len, self.edges.values()))


@dataclass
class WriteResult:
    """What a write did: created and updated counts, per label / type."""

    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)

    def add(self, other: WriteResult) -> None:
        for mine, theirs in ((self.created, other.created), (self.updated, other.updated)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v


def validate_batch(batch: Batch) -> None:
    """Reject unknown labels/types/properties before anything is sent to a backend."""
    for label, rows in batch.nodes.items():
        if label not in NODE_TYPES:
            raise StoreError(f"unknown node label {label!r}")
        allowed = NODE_TYPES[label].properties.keys() | {"id", "sources"}
        for row in rows:
            if not row.get("id"):
                raise StoreError(f"{label} row without id: {row!r}")
            extra = row.keys() - allowed
            if extra:
                raise StoreError(f"{label} row has undeclared properties {sorted(extra)}")
    for rtype, rows in batch.edges.items():
        if rtype not in REL_TYPES:
            raise StoreError(f"unknown relationship type {rtype!r}")
        allowed = REL_TYPES[rtype].properties.keys() | {"src", "dst", "sources"}
        for row in rows:
            if not row.get("src") or not row.get("dst"):
                raise StoreError(f"{rtype} row without src/dst: {row!r}")
            extra = row.keys() - allowed
            if extra:
                raise StoreError(f"{rtype} row has undeclared properties {sorted(extra)}")


def merge_rows(rows: Iterable[dict[str, Any]], key: Sequence[str]) -> dict[tuple, dict[str, Any]]:
    """Collapse rows with the same key inside one batch (later non-null values win)."""
    merged: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        k = tuple(row[c] for c in key)
        if k in merged:
            merged[k] = merge_props(merged[k], row)
        else:
            merged[k] = dict(row, sources=sorted(set(row.get("sources") or [])))
    return merged


def merge_props(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Properties of ``new`` override ``old`` where not None; ``sources`` are unioned."""
    out = dict(old)
    for k, v in new.items():
        if k == "sources":
            out["sources"] = sorted(set(old.get("sources") or []) | set(v or []))
        elif v is not None:
            out[k] = v
    return out


class GraphStore(ABC):
    """One typed graph, whatever engine holds it."""

    url: str

    # -- writing ---------------------------------------------------------------------------
    @abstractmethod
    def write_batch(self, batch: Batch) -> WriteResult:
        """Upsert the batch's nodes, then its edges, in one transaction."""

    def upsert_nodes(self, label: str, rows: Iterable[dict[str, Any]]) -> WriteResult:
        return self.write_batch(Batch(nodes={label: list(rows)}))

    def upsert_edges(self, rel_type: str, rows: Iterable[dict[str, Any]]) -> WriteResult:
        return self.write_batch(Batch(edges={rel_type: list(rows)}))

    @abstractmethod
    def clear(self) -> None:
        """Delete every node and edge (the schema stays)."""

    # -- reading ---------------------------------------------------------------------------
    @abstractmethod
    def query(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False) -> list[dict[str, Any]]:
        """Run Cypher; rows are dicts keyed by the RETURN names. Writes need ``write=True``."""

    @abstractmethod
    def counts(self) -> dict[str, dict[str, int]]:
        """``{"nodes": {label: n}, "edges": {TYPE: n}}`` with every declared label and type."""

    @abstractmethod
    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Properties (with ``id`` and ``sources``) of the given ids that exist."""

    @abstractmethod
    def iter_nodes(self, label: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        """Every node of a label, streamed in batches."""

    @abstractmethod
    def iter_edges(self, rel_type: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        """Every edge of a type as ``{"src", "dst", "sources", props...}``, streamed."""

    @abstractmethod
    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
    ) -> nx.MultiDiGraph:
        """The k-hop neighbourhood of the seed ids over the given types (default: all).

        ``direction`` is ``out``, ``in`` or ``both``; ``limit`` caps the nodes fetched per hop.
        The result includes every edge of those types between the nodes it holds.
        """

    def fetch_graph(self, rel_types: Sequence[str]) -> nx.MultiDiGraph:
        """Every edge of the given types with its endpoints, as networkx (for whole-graph work)."""
        g = nx.MultiDiGraph()
        for rtype in rel_types:
            for e in self.iter_edges(rtype):
                g.add_edge(e.pop("src"), e.pop("dst"), key=rtype, type=rtype, **e)
        labels = {REL_TYPES[t].source for t in rel_types} | {REL_TYPES[t].target for t in rel_types}
        ids = list(g.nodes)
        for label in labels:
            for i in range(0, len(ids), 50_000):
                for nid, props in self.get_nodes(label, ids[i : i + 50_000]).items():
                    g.nodes[nid].update(props, label=label)
        return g

    # -- lifecycle -------------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
