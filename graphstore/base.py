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
from operator import itemgetter
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
    """Reject unknown labels/types/properties and rows without keys, before any write.

    Checks each distinct row shape once (rows of one batch nearly always share a shape),
    so validating a million rows costs a fraction of a second.
    """
    checks = [(label, rows, NODE_TYPES, ("id",)) for label, rows in batch.nodes.items()]
    checks += [(rtype, rows, REL_TYPES, ("src", "dst")) for rtype, rows in batch.edges.items()]
    for name, rows, table, keys in checks:
        if name not in table:
            kind = "node label" if table is NODE_TYPES else "relationship type"
            raise StoreError(f"unknown {kind} {name!r}")
        allowed = table[name].properties.keys() | {"sources", *keys}
        for shape in set(map(tuple, rows)):
            extra = set(shape) - allowed
            if extra:
                raise StoreError(f"{name} row has undeclared properties {sorted(extra)}")
            if not set(keys) <= set(shape):
                raise StoreError(f"{name} row without {'/'.join(keys)}: columns {list(shape)}")
        for key in keys:
            values = set(map(itemgetter(key), rows))
            if None in values or "" in values:
                raise StoreError(f"{name} row with an empty {key}")


def merge_rows(rows: Iterable[dict[str, Any]], key: Sequence[str]) -> dict[Any, dict[str, Any]]:
    """Collapse rows with the same key inside one batch (later non-null values win).

    The dict is keyed by ``row[key[0]]`` for a one-column key, else by the tuple of values.
    Rows are not copied unless two of them collide.
    """
    keyf = itemgetter(*key)
    rows = rows if isinstance(rows, list) else list(rows)
    merged: dict[Any, dict[str, Any]] = dict(zip(map(keyf, rows), rows, strict=True))
    if len(merged) == len(rows):  # the common case: no key repeats, nothing to merge
        return merged
    merged = {}
    for row in rows:
        k = keyf(row)
        old = merged.get(k)
        merged[k] = row if old is None else merge_props(old, row)
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
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
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
