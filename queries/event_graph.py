"""The event-relation graph as the query algorithms see it.

The store keeps one canonical direction per fact (``a CAUSES b``); the algorithms read
every edge both ways, the backward reading giving the inverse relation
(``b IsResult a``) through :data:`eventkg.graphstore.model.INVERSE`.

:class:`EventIndex` is a compact, integer-indexed adjacency of the three event relations
(plus ``HAS_TYPE`` instance -> type links), built once from a store
(:meth:`EventIndex.from_store`, streaming ``iter_edges``) or from a networkx graph in the
store's networkx shape (:meth:`EventIndex.from_graph`). Each adjacency entry packs
``(neighbour << 3) | relation_code`` so that the hot searches (walks, induction reach) stay
fast on million-edge graphs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx

from eventkg.errors import EventKGError
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import CANONICAL, EVENT_RELATIONS, INVERSE, STORED_TO_FORWARD, event_id
from eventkg.queries.induce import AUTOMATON, CODE

assert len(AUTOMATON.trans) <= 32, "reach() packs automaton states in 5 bits"
ALL_RELATIONS = (1 << len(EVENT_RELATIONS)) - 1
_LIVE: dict[int, list[bool]] = {}


def _live_states(mask: int) -> list[bool]:
    """Automaton states from which some relation in ``mask`` can still be induced."""
    live = _LIVE.get(mask)
    if live is None:
        trans, output = AUTOMATON.trans, AUTOMATON.output
        live = [output[s] >= 0 and bool(mask >> output[s] & 1) for s in range(len(trans))]
        changed = True
        while changed:
            changed = False
            for s, row in enumerate(trans):
                if not live[s] and any(ns >= 0 and live[ns] for ns in row):
                    live[s] = changed = True
        _LIVE[mask] = live
    return live

EVENT_REL_TYPES = ("CAUSES", "BEFORE", "HAS_SUBEVENT")
FORWARD_CODES = frozenset(CODE[r] for r in STORED_TO_FORWARD.values())
_INV_CODE = tuple(CODE[INVERSE[r]] for r in EVENT_RELATIONS)
_TYPE_FORWARD_CODE = {t: CODE[r] for t, r in STORED_TO_FORWARD.items()}


class UnknownEventError(EventKGError, KeyError):
    """An event named on the command line or in a question row is not in the graph."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def event_name(text: str) -> str:
    """EV²'s spelling of an event-type name: words joined by ``_``."""
    return text.replace(" ", "_")


class EventIndex:
    """Events and their relations, both directions, in integer-indexed lists."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self.text: list[str] = []
        self.level: list[str] = []
        self.adj: list[list[int]] = []  # packed (neighbour << 3) | relation code, read from this node
        self.type_of: dict[int, int] = {}  # instance -> schema type (HAS_TYPE)
        self.instances_of: dict[int, list[int]] = {}  # schema type -> instances with text (ones to show)
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
        idx = cls()
        raw = [(s, _TYPE_FORWARD_CODE[t], d) for s, t, d in edges if s != d]
        type_pairs = list(types)
        info = {nid: (text, level) for nid, text, level in props}
        names: set[str] = set(info)
        names.update(s for s, _, _ in raw)
        names.update(d for _, _, d in raw)
        names.update(x for pair in type_pairs for x in pair)
        idx.ids = sorted(names)
        pos = idx.pos = {nid: i for i, nid in enumerate(idx.ids)}
        adj: list[list[int]] = [[] for _ in idx.ids]
        inv = _INV_CODE
        for s, code, d in raw:
            ps, pd = pos[s], pos[d]
            adj[ps].append((pd << 3) | code)
            adj[pd].append((ps << 3) | inv[code])
        for lst in adj:
            lst.sort()
        idx.adj = [lst if len(lst) < 2 or len(set(lst)) == len(lst) else sorted(set(lst)) for lst in adj]
        idx.text = [(info.get(nid, (None, None))[0] or nid) for nid in idx.ids]
        idx.level = [(info.get(nid, (None, None))[1] or "schema") for nid in idx.ids]
        for inst, typ in type_pairs:
            i, t = pos[inst], pos[typ]
            idx.type_of[i] = t
            if info.get(inst, ("?", None))[0] != "":  # an instance stored without text (EV²) is never shown
                idx.instances_of.setdefault(t, []).append(i)
        for lst in idx.instances_of.values():
            lst.sort()
        return idx

    @classmethod
    def from_store(cls, store: GraphStore, *, with_types: bool = True) -> EventIndex:
        """Stream the event relations (and HAS_TYPE links, and every Event's text/level) out of a store."""
        edges = [(e["src"], rtype, e["dst"]) for rtype in EVENT_REL_TYPES for e in store.iter_edges(rtype)]
        types = [(e["src"], e["dst"]) for e in store.iter_edges("HAS_TYPE")] if with_types else []
        props = [(n["id"], n.get("text"), n.get("level")) for n in store.iter_nodes("Event")]
        return cls.build(edges, types, props)

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
            if rtype in _TYPE_FORWARD_CODE:
                edges.append((u, rtype, v))
            elif rtype == "HAS_TYPE":
                types.append((u, v))
            elif data.get("relation") in CANONICAL:
                stored, forward = CANONICAL[data["relation"]]
                edges.append((u, stored, v) if forward else (v, stored, u))
        props = [(nid, a.get("text"), a.get("level")) for nid, a in graph.nodes(data=True)
                 if a.get("label", "Event") == "Event"]
        return cls.build(edges, types, props)

    # -- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

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
        live = _live_states(mask)
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

    def induced_between(self, a: int, b: int, max_len: int = 4) -> set[str]:
        """Relations induced from ``a`` to ``b`` by some walk of at most ``max_len`` edges."""
        mask = self.reach(a, max_len).get(b, 0)
        return {r for r in EVENT_RELATIONS if mask >> CODE[r] & 1}


def as_index(source: EventIndex | nx.Graph | GraphStore) -> EventIndex:
    """Accept an index, a networkx graph or a store (fetched once, streamed)."""
    if isinstance(source, EventIndex):
        return source
    if isinstance(source, nx.Graph):
        return EventIndex.from_graph(source)
    if isinstance(source, GraphStore):
        return EventIndex.from_store(source)
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
    rev = {c: t for t, c in _TYPE_FORWARD_CODE.items()}
    for p, entries in enumerate(index.adj):
        for e in entries:
            code = e & 7
            if code in FORWARD_CODES:
                t = rev[code]
                g.add_edge(index.ids[p], index.ids[e >> 3], key=t, type=t)
    for i, t in index.type_of.items():
        g.add_edge(index.ids[i], index.ids[t], key="HAS_TYPE", type="HAS_TYPE")
    return g
