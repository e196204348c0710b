"""Scenario components (seed 001, section 3.1 and Algorithm 1).

A component is a small connected piece of the event graph found by a random walk from a
start node: the walk stops once it holds between ``n`` and ``n + 2`` nodes, and fails when
it steps back onto a node it already holds (Algorithm 1 returns null). The component keeps
every event edge among its nodes, drops edges that close a cycle (greedy, in a fixed
order) to leave a DAG, and gets a backward copy in which every edge is reversed and
renamed to its inverse (Causes -> IsResult, Before -> After, HasSubevent -> IsSubevent).

Choices where Algorithm 1 is loose, written down here:

* like the pseudo-code, the size bound ``l = RandomInt(n, n + 2)`` is drawn afresh at each
  step, and the walk ends as soon as it holds ``l`` nodes; the start node is part of it;
* the walk moves along edges in either direction (EECKG is read as an undirected graph);
* Algorithm 1 visits every node; :func:`iter_components` visits them in a seeded random
  order and lazily, so that taking the first ``k`` components is a random sample.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import networkx as nx

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import EVENT_RELATIONS, INVERSE
from eventkg.queries.event_graph import FORWARD_CODES, EventIndex, as_index


@dataclass(frozen=True)
class Component:
    """A DAG of ``(head, Relation, tail)`` triples over event positions in an index.

    ``direction`` is ``forward`` (the stored relations) or ``backward`` (the inverted copy);
    ``nodes`` are in walk order (reversed for the backward copy).
    """

    cid: int
    nodes: tuple[int, ...]
    triples: tuple[tuple[int, str, int], ...]
    direction: str

    def named(self, index: EventIndex) -> list[tuple[str, str, str]]:
        """Triples with EV² event names."""
        return [(index.name(h), r, index.name(t)) for h, r, t in self.triples]

    def to_networkx(self, index: EventIndex) -> nx.MultiDiGraph:
        """The component as written (its own direction), edge key = paper relation name."""
        g = nx.MultiDiGraph()
        for p in self.nodes:
            g.add_node(index.ids[p], text=index.text[p], name=index.name(p), level=index.level[p])
        for h, r, t in self.triples:
            g.add_edge(index.ids[h], index.ids[t], key=r, relation=r)
        return g


def random_walk(
    index: EventIndex,
    start: int,
    n: int,
    rng: random.Random,
    allowed: Callable[[int], bool] | None = None,
) -> list[int] | None:
    """One Algorithm 1 walk from ``start``: ``n``..``n+2`` nodes, or ``None`` when it fails."""
    walk = [start]
    held = {start}
    cur = start
    while True:
        if rng.randint(n, n + 2) <= len(walk):
            return walk
        edges = index.adj[cur]
        if allowed is not None:
            edges = [e for e in edges if allowed(e >> 3)]
        if not edges:
            return None
        nxt = rng.choice(edges) >> 3
        if nxt in held:
            return None
        walk.append(nxt)
        held.add(nxt)
        cur = nxt


def _dag_triples(index: EventIndex, nodes: list[int]) -> list[tuple[int, str, int]]:
    """Stored edges among ``nodes``, dropping each edge that would close a cycle."""
    members = set(nodes)
    succ: dict[int, set[int]] = {p: set() for p in nodes}
    kept: list[tuple[int, str, int]] = []
    for u in nodes:
        for e in sorted(index.adj[u]):
            v, code = e >> 3, e & 7
            if v not in members or code not in FORWARD_CODES:
                continue
            if v != u and not _reaches(succ, v, u):
                succ[u].add(v)
                kept.append((u, EVENT_RELATIONS[code], v))
    return kept


def _reaches(succ: dict[int, set[int]], a: int, b: int) -> bool:
    stack, seen = [a], {a}
    while stack:
        x = stack.pop()
        if x == b:
            return True
        for y in succ[x]:
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return False


def iter_components(
    source: EventIndex | nx.Graph | GraphStore,
    n: int = 3,
    seed: int = 0,
    *,
    backward: bool = True,
    allowed: Callable[[int], bool] | None = None,
    starts: list[int] | None = None,
) -> Iterator[Component]:
    """Algorithm 1, lazily: for each start node (seeded order), a walk component and its backward copy.

    ``allowed`` restricts the walk to some nodes (e.g. event types that have instances);
    components with a single node or no edge are skipped.
    """
    if n < 2:
        raise ValueError(f"component size n must be at least 2, got {n}")
    index = as_index(source)
    rng = random.Random(seed)
    if starts is None:
        starts = [p for p in range(len(index)) if index.adj[p] and (allowed is None or allowed(p))]
        rng.shuffle(starts)
    cid = 0
    for start in starts:
        walk = random_walk(index, start, n, rng, allowed)
        if walk is None or len(walk) < 2:
            continue
        triples = _dag_triples(index, walk)
        if not triples:
            continue
        yield Component(cid, tuple(walk), tuple(triples), "forward")
        cid += 1
        if backward:
            inv = tuple((t, INVERSE[r], h) for h, r, t in reversed(triples))
            yield Component(cid, tuple(reversed(walk)), inv, "backward")
            cid += 1


def components(
    source: EventIndex | nx.Graph | GraphStore,
    n: int = 3,
    seed: int = 0,
    *,
    backward: bool = True,
    limit: int | None = None,
) -> list[Component]:
    """All Algorithm 1 components of a graph (or the first ``limit``), deterministic for a seed."""
    out = []
    for comp in iter_components(source, n, seed, backward=backward):
        out.append(comp)
        if limit is not None and len(out) >= limit:
            break
    return out
