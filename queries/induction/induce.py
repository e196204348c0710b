"""Relation induction over event paths (the EV² paper, Table 1): names in, relation out, and paths.

:func:`induce` says which relation a relation sequence implies by Table 1 (the rules, the
reading we chose where the paper is silent, and their compiled automaton are in
:mod:`eventkg.queries.induction.table1`); :func:`paths` lists the simple paths
between two events of a graph with what each induces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eventkg.graphstore.model import EVENT_RELATIONS
from eventkg.queries.errors import UnknownRelationError
from eventkg.queries.graph.event_graph import EventIndex, as_index
from eventkg.queries.induction.table1 import AUTOMATON, CODE, DEAD

if TYPE_CHECKING:
    import networkx as nx

    from eventkg.graphstore.base import GraphStore

__all__ = ["InducedPath", "UnknownRelationError", "induce", "parse_relations", "paths"]


def _canon_name(name: str) -> str:
    key = name.strip().replace("_", "").replace("-", "").replace(" ", "").lower()
    for rel in EVENT_RELATIONS:
        if rel.lower() == key:
            return rel
    raise UnknownRelationError(
        f"unknown event relation {name!r}; expected one of {', '.join(EVENT_RELATIONS)}"
    )


def parse_relations(text: str | Sequence[str]) -> list[str]:
    """``"Before,causes, is_result"`` (or a list) -> paper names; case and ``_`` are ignored."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    parts = [p for p in parts if p.strip()]
    if not parts:
        raise UnknownRelationError("empty relation sequence; give e.g. Before,Causes,Before")
    return [_canon_name(p) for p in parts]


def induce(relations: Sequence[str]) -> str | None:
    """The relation a sequence of relations induces (Table 1 of the EV² paper), if any.

    Args:
        relations: Paper relation names (``Before``, ``Causes``, ``IsResult``...), in walk order.

    Returns:
        The induced relation's name, or None when the sequence induces none.

    Raises:
        UnknownRelationError: A name is not a relation of the table.

    Examples:
        >>> induce(["Before", "Causes", "Before"])
    'Before'
    >>> induce(["Causes"])
    'Causes'
    >>> induce(["Causes", "IsResult"]) is None
    True
    """
    if not relations:
        return None
    codes = []
    for r in relations:
        if r not in CODE:
            r = _canon_name(r)
        codes.append(CODE[r])
    state = AUTOMATON.run(codes)
    if state == DEAD:
        return None
    out = AUTOMATON.output[state]
    return None if out == DEAD else EVENT_RELATIONS[out]


# --- paths between two events -------------------------------------------------------------


@dataclass(frozen=True)
class InducedPath:
    """A simple path ``nodes[0] -relations[0]-> nodes[1] ...`` and what it induces."""

    nodes: tuple[str, ...]
    relations: tuple[str, ...]
    induced: str | None

    def __len__(self) -> int:
        return len(self.relations)

    def triples(self) -> list[tuple[str, str, str]]:
        return [(self.nodes[i], r, self.nodes[i + 1]) for i, r in enumerate(self.relations)]


def paths(source: GraphStore | nx.Graph | EventIndex, a: str | int, b: str | int, max_len: int = 4, *, inducing_only: bool = False) -> list[InducedPath]:
    """Every simple path from ``a`` to ``b`` of at most ``max_len`` edges, with what it induces.

    Edges are usable both ways: walking a stored edge backwards reads its inverse relation.

    Args:
        source: A store, a networkx graph or an :class:`~eventkg.queries.graph.event_graph.EventIndex`.
        a: The first event: a position, a store id or an event name (``pass_exam``).
        b: The last event, as ``a``.
        max_len: At most this many edges per path.
        inducing_only: Only the paths that induce a relation.

    Returns:
        The paths, shortest first; node ids are store ids.

    Raises:
        UnknownEventError: ``a`` or ``b`` is not in the graph.
    """
    idx = as_index(source)
    pa = a if isinstance(a, int) else idx.lookup(a)
    pb = b if isinstance(b, int) else idx.lookup(b)
    if pa == pb or max_len < 1:
        return []
    found = _PathSearch(idx, pb, max_len, inducing_only).run(pa)
    found.sort(key=lambda p: (len(p), p.relations, p.nodes))
    return found


def _distances_to(idx: EventIndex, target: int, max_len: int) -> dict[int, int]:
    """Undirected hop distance to ``target`` of every node within ``max_len - 1`` hops."""
    dist = {target: 0}
    frontier = [target]
    for d in range(1, max_len):
        nxt = []
        for node in frontier:
            for e in idx.adj[node]:
                nb = e >> 3
                if nb not in dist:
                    dist[nb] = d
                    nxt.append(nb)
        frontier = nxt
    return dist


class _PathSearch:
    """Depth-first search of the simple paths to one target, pruned by distance and (optionally)
    by the Table 1 automaton."""

    def __init__(self, idx: EventIndex, target: int, max_len: int, inducing_only: bool) -> None:
        self.idx, self.target, self.max_len, self.inducing_only = idx, target, max_len, inducing_only
        self.dist = _distances_to(idx, target, max_len)
        self.nodes: list[int] = []
        self.codes: list[int] = []
        self.on_path: set[int] = set()
        self.found: list[InducedPath] = []

    def run(self, start: int) -> list[InducedPath]:
        self.nodes, self.on_path = [start], {start}
        self._dfs(start, AUTOMATON.start)
        return self.found

    def _dfs(self, node: int, state: int) -> None:
        left = self.max_len - len(self.codes)
        for e in self.idx.adj[node]:
            nb, code = e >> 3, e & 7
            if nb in self.on_path or self.dist.get(nb, self.max_len + 1) > left - 1:
                continue
            ns = AUTOMATON.trans[state][code] if state != DEAD else DEAD
            if self.inducing_only and ns == DEAD:
                continue
            self.nodes.append(nb)
            self.codes.append(code)
            if nb == self.target:
                self._record(ns)
            else:
                self.on_path.add(nb)
                self._dfs(nb, ns)
                self.on_path.discard(nb)
            self.nodes.pop()
            self.codes.pop()

    def _record(self, state: int) -> None:
        out = AUTOMATON.output[state] if state != DEAD else DEAD
        if self.inducing_only and out == DEAD:
            return
        ids = self.idx.ids
        self.found.append(InducedPath(tuple(ids[n] for n in self.nodes), tuple(EVENT_RELATIONS[c] for c in self.codes),
                                      None if out == DEAD else EVENT_RELATIONS[out]))
