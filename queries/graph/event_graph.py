"""The event-relation graph as the path and oracle algorithms see it.

The store keeps one canonical direction per fact (``a CAUSES b``); the algorithms read
every edge both ways, the backward reading giving the inverse relation
(``b IsResult a``) through :data:`eventkg.graphstore.model.INVERSE`.

:class:`EventIndex` is a view of an :class:`eventkg.queries.graph.csr.EventCSR` (the compact arrays,
loaded in columns from a store) for the algorithms written over Python lists: ids, positions,
texts, levels and the packed adjacency (``(neighbour << 3) | relation_code`` per entry) are
made from the arrays the first time they are read, so code that only needs the arrays
(question generation: ``index.csr``) never pays for a million Python lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any, TypeAlias

import networkx as nx

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import CANONICAL, EVENT_RELATIONS, event_id
from eventkg.queries.errors import UnknownEventError
from eventkg.queries.graph.csr import (
    EVENT_REL_TYPES,
    FORWARD_CODES,
    LEVEL_NAMES,
    TYPE_FORWARD_CODE,
    EventCSR,
    event_name,
)
from eventkg.queries.induction.table1 import ALL_RELATIONS, AUTOMATON, CODE, live_states

__all__ = ["EventGraph", "EventIndex", "UnknownEventError", "as_csr", "as_index", "fetch_event_graph", "to_networkx"]

assert len(AUTOMATON.trans) <= 32, "reach() packs automaton states in 5 bits"


class EventIndex:
    """Events and their relations, both directions, as integer-indexed lists over an :class:`EventCSR`."""

    def __init__(self, csr: EventCSR | None = None) -> None:
        self.csr = csr if csr is not None else EventCSR.from_rows(())
        self._reach_cache: dict[tuple[int, int, int], dict[int, int]] = {}

    # -- building ------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        edges: Iterable[tuple[str, str, str]],
        types: Iterable[tuple[str, str]] = (),
        props: Iterable[tuple[str, str | None, str | None]] = (),
    ) -> EventIndex:
        """From stored edges ``(src, TYPE, dst)``, ``HAS_TYPE`` pairs and ``(id, text, level)`` rows.

        Events are numbered in id order and adjacency lists are sorted, so nothing depends
        on the order a backend streams rows in. Self-loops are dropped (no path uses them).
        """
        return cls(EventCSR.from_rows(edges, types, props))

    @classmethod
    def from_store(cls, store: GraphStore, *, with_types: bool = True) -> EventIndex:
        """Read the event relations (and HAS_TYPE links, and every Event's text/level) in columns."""
        return cls(EventCSR.from_store(store, with_types=with_types))

    @classmethod
    def from_graph(cls, graph: nx.Graph) -> EventIndex:
        """From a graph in the store's networkx shape (edge ``type`` or key = stored type).

        Edges may also carry a paper relation name (``relation="IsResult"``), which is
        turned into its stored direction, so hand-made test graphs are accepted too.
        """
        edges: list[tuple[str, str, str]] = []
        types: list[tuple[str, str]] = []
        rows: Iterable[tuple[Any, Any, dict]] = graph.edges(data=True)
        if graph.is_multigraph():
            rows = ((u, v, dict(d, type=d.get("type") or k)) for u, v, k, d in graph.edges(keys=True, data=True))
        for u, v, data in rows:
            rtype = data.get("type")
            if rtype in TYPE_FORWARD_CODE:
                edges.append((u, rtype, v))
            elif rtype == "HAS_TYPE":
                types.append((u, v))
            elif data.get("relation") in CANONICAL:
                stored, forward = CANONICAL[data["relation"]]
                edges.append((u, stored, v) if forward else (v, stored, u))
        props = [(nid, a.get("text"), a.get("level")) for nid, a in graph.nodes(data=True)
                 if a.get("label", "Event") == "Event"]
        return cls.build(edges, types, props)

    # -- the lists, made on first read ----------------------------------------------------
    @cached_property
    def ids(self) -> list[str]:
        return self.csr.ids.tolist()

    @cached_property
    def pos(self) -> dict[str, int]:
        return {nid: i for i, nid in enumerate(self.ids)}

    @cached_property
    def text(self) -> list[str]:
        return [t or nid for t, nid in zip(self.csr.texts.all(), self.ids, strict=True)]

    @cached_property
    def level(self) -> list[str]:
        return [LEVEL_NAMES[c] for c in self.csr.level.tolist()]

    @cached_property
    def adj(self) -> list[list[int]]:
        """Packed ``(neighbour << 3) | code`` entries per event, sorted."""
        c = self.csr
        packed = ((c.nbr.astype("int64") << 3) | c.code).tolist()
        ptr = c.indptr.tolist()
        return [packed[ptr[p]:ptr[p + 1]] for p in range(len(c))]

    @cached_property
    def type_of(self) -> dict[int, int]:
        """instance -> schema type (HAS_TYPE)."""
        return {i: t for i, t in enumerate(self.csr.type_of.tolist()) if t >= 0}

    # -- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.csr)

    def name(self, p: int) -> str:
        """The event as EV² spells it (``remember_information``)."""
        return event_name(self.text[p])

    def lookup(self, name: str, level: str = "schema") -> int:
        """Position of an event given by id, by text or by EV² name (``pass_exam``)."""
        if name in self.pos:
            return self.pos[name]
        p = self.pos.get(event_id(name, level))
        if p is None:
            raise UnknownEventError(f"event {name!r} (level {level}) is not in the graph")
        return p

    def neighbours(self, p: int) -> Iterator[tuple[int, str]]:
        """``(neighbour, relation as read from p)`` for every edge at ``p``."""
        for e in self.adj[p]:
            yield e >> 3, EVENT_RELATIONS[e & 7]

    def relations(self, a: int, b: int) -> list[str]:
        """Direct relations from ``a`` to ``b`` in paper names (inverse when stored b -> a)."""
        return sorted({EVENT_RELATIONS[e & 7] for e in self.adj[a] if e >> 3 == b}, key=CODE.__getitem__)

    def has_triple(self, head: int, relation: str, tail: int) -> bool:
        """Whether the store holds ``(head, relation, tail)`` directly or as its inverse."""
        return ((tail << 3) | CODE[relation]) in self.adj[head]

    def reach(self, start: int, max_len: int = 4, mask: int = ALL_RELATIONS) -> dict[int, int]:
        """Events reachable from ``start`` in at most ``max_len`` steps -> bitmask of induced relations.

        Walks read edges both ways and carry the Table 1 automaton, pruning where no rule can
        match any more, or (with ``mask``, a bitmask of relation codes) where no relation in
        ``mask`` can be induced any more. Walks include every simple path, so the masks are a
        superset of what path enumeration induces: safe for excluding negatives and for
        deciding Vague.
        """
        key = (start, max_len, mask)
        hit = self._reach_cache.get(key)
        if hit is not None:
            return hit
        live = live_states(mask)
        trans, output, adj = AUTOMATON.trans, AUTOMATON.output, self.adj
        # a (node, automaton state) pair packed in one int: node << 5 | state
        out: dict[int, int] = {}
        first = (start << 5) | AUTOMATON.start
        seen = {first}
        frontier = [first]
        for _ in range(max_len):
            nxt = []
            for key in frontier:
                row = trans[key & 31]
                for e in adj[key >> 5]:
                    ns = row[e & 7]
                    if ns < 0 or not live[ns]:
                        continue
                    nb = e >> 3
                    k2 = (nb << 5) | ns
                    if k2 in seen:
                        continue
                    seen.add(k2)
                    nxt.append(k2)
                    o = output[ns]
                    if o >= 0 and mask >> o & 1:
                        out[nb] = out.get(nb, 0) | (1 << o)
            frontier = nxt
            if not frontier:
                break
        if len(self._reach_cache) > 4096:
            self._reach_cache.clear()
        self._reach_cache[key] = out
        return out


#: An event graph held in memory, as the query layer's entry points take it beside a store: an
#: :class:`EventIndex`, its :class:`EventCSR` arrays, or a networkx graph in the store's shape
#: (node key = id with ``text`` and ``level``, edge key = stored type; ``GraphStore.fetch_graph``).
#: :func:`as_index` and :func:`as_csr` turn any of them, or a store, into the form an algorithm reads.
EventGraph: TypeAlias = EventIndex | EventCSR | nx.Graph


def as_index(source: GraphStore | EventGraph) -> EventIndex:
    """Accept an index, its arrays, a networkx graph or a store (read once, in columns)."""
    if isinstance(source, EventIndex):
        return source
    if isinstance(source, EventCSR):
        return EventIndex(source)
    if isinstance(source, nx.Graph):
        return EventIndex.from_graph(source)
    if isinstance(source, GraphStore):
        return EventIndex.from_store(source)
    raise TypeError(f"expected a GraphStore, a networkx graph or an EventIndex, got {type(source).__name__}")


def as_csr(source: GraphStore | EventGraph) -> EventCSR:
    """The compact arrays of an index, a networkx graph or a store (read once, in columns)."""
    if isinstance(source, EventCSR):
        return source
    if isinstance(source, EventIndex):
        return source.csr
    if isinstance(source, nx.Graph):
        return EventIndex.from_graph(source).csr
    if isinstance(source, GraphStore):
        return EventCSR.from_store(source)
    raise TypeError(f"expected a GraphStore, a networkx graph or an EventIndex, got {type(source).__name__}")


def fetch_event_graph(store: GraphStore, *, with_types: bool = False) -> nx.MultiDiGraph:
    """The event relations (optionally with HAS_TYPE) as networkx, in the store's shape."""
    types = list(EVENT_REL_TYPES) + (["HAS_TYPE"] if with_types else [])
    return store.fetch_graph(types)


def to_networkx(index: EventIndex) -> nx.MultiDiGraph:
    """The index back in the store's networkx shape (stored direction, key = type)."""
    g = nx.MultiDiGraph()
    for p, nid in enumerate(index.ids):
        g.add_node(nid, label="Event", text=index.text[p], level=index.level[p])
    rev = {c: t for t, c in TYPE_FORWARD_CODE.items()}
    for p, entries in enumerate(index.adj):
        for e in entries:
            code = e & 7
            if code in FORWARD_CODES:
                t = rev[code]
                g.add_edge(index.ids[p], index.ids[e >> 3], key=t, type=t)
    for i, t in index.type_of.items():
        g.add_edge(index.ids[i], index.ids[t], key="HAS_TYPE", type="HAS_TYPE")
    return g
