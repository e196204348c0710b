"""Scenario components (the EV² paper, section 3.1 and Algorithm 1).

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
  order (a numpy permutation, much cheaper than ``random.shuffle`` at a million starts)
  and lazily, so that taking the first ``k`` components is a random sample.

Walks run over the compact arrays (:class:`eventkg.queries.graph.csr.EventCSR`): a step draws one
entry of the current row, and a hub's row is searched, not scanned, for the edges
among the walk's nodes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import networkx as nx
import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import EVENT_RELATIONS, INVERSE
from eventkg.queries.graph.csr import FORWARD_CODES, LEVEL_NAMES, EventCSR
from eventkg.queries.graph.event_graph import EventIndex, as_csr

Source = EventIndex | EventCSR | nx.Graph | GraphStore


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

    def named(self, index: EventIndex | EventCSR) -> list[tuple[str, str, str]]:
        """Triples with EV² event names."""
        csr = as_csr(index)
        return [(csr.name(h), r, csr.name(t)) for h, r, t in self.triples]

    def to_networkx(self, index: EventIndex | EventCSR) -> nx.MultiDiGraph:
        """The component as written (its own direction), edge key = paper relation name."""
        csr = as_csr(index)
        g = nx.MultiDiGraph()
        for p in self.nodes:
            g.add_node(csr.ids[p], text=csr.text(p), name=csr.name(p), level=LEVEL_NAMES[csr.level[p]])
        for h, r, t in self.triples:
            g.add_edge(csr.ids[h], csr.ids[t], key=r, relation=r)
        return g


def random_walk(graph: EventCSR, start: int, n: int, rng: random.Random) -> list[int] | None:
    """One Algorithm 1 walk from ``start``: ``n``..``n+2`` nodes, or ``None`` when it fails."""
    walk = [start]
    held = {start}
    cur = start
    while True:
        if rng.randint(n, n + 2) <= len(walk):
            return walk
        lo, hi = graph.row(cur)
        if lo == hi:
            return None
        nxt = graph.entry(lo + rng.randrange(hi - lo))[0]
        if nxt in held:
            return None
        walk.append(nxt)
        held.add(nxt)
        cur = nxt


def dag_triples(graph: EventCSR, nodes: list[int]) -> list[tuple[int, str, int]]:
    """Stored edges among ``nodes``, dropping each edge that would close a cycle."""
    members = set(nodes)
    succ: dict[int, set[int]] = {p: set() for p in nodes}
    kept: list[tuple[int, str, int]] = []
    for u in nodes:
        for v, code in graph.entries_to(u, members):
            if code not in FORWARD_CODES:
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


def _keep_mask(csr: EventCSR, allowed: Callable[[int], bool] | np.ndarray | None) -> np.ndarray | None:
    if allowed is None or isinstance(allowed, np.ndarray):
        return allowed
    return np.fromiter((bool(allowed(p)) for p in range(len(csr))), dtype=bool, count=len(csr))


def iter_components(
    source: Source,
    n: int = 3,
    seed: int = 0,
    *,
    backward: bool = True,
    allowed: Callable[[int], bool] | np.ndarray | None = None,
    starts: Iterable[int] | None = None,
    rounds: int = 1,
) -> Iterator[Component]:
    """Algorithm 1, lazily: for each start node (seeded order), a walk component and its backward copy.

    ``allowed`` (a predicate or a bool per event) restricts the walk to some nodes (e.g. event
    types that have instances); components with a single node or no edge are skipped. With
    ``rounds`` > 1 (and no ``starts``), a reader that wants more after the last start gets another
    round of walks from every start in a new seeded order, up to ``rounds`` in all, ending early
    after a round that walks no path an earlier round walked not (a small graph gives more
    components; the first round is the same whatever ``rounds`` is).
    """
    if n < 2:
        raise ValueError(f"component size n must be at least 2, got {n}")
    csr = as_csr(source)
    keep = _keep_mask(csr, allowed)
    graph = csr if keep is None else csr.restricted(keep)
    rng = random.Random(seed)
    if starts is not None:
        orders: Iterable[Iterable[int]] = [starts]
        rounds = 1
    else:
        has_edges = np.diff(graph.indptr) > 0
        # read lazily, not listed; int32 (4 bytes an event) where it fits, the same order
        nodes = np.flatnonzero(has_edges)
        nodes = nodes.astype(np.int32) if len(graph) < 2**31 else nodes
        orders = (np.random.default_rng(seed if k == 0 else [seed, k]).permutation(nodes) for k in range(rounds))
    cid = 0
    walked: set[tuple[int, ...]] | None = set() if rounds > 1 else None  # paths of the rounds so far
    for order in orders:
        new = 0
        for start in order:
            walk = random_walk(graph, int(start), n, rng)
            if walk is None or len(walk) < 2:
                continue
            triples = dag_triples(graph, walk)
            if not triples:
                continue
            if walked is not None:
                if tuple(walk) in walked:
                    continue
                walked.add(tuple(walk))
                new += 1
            yield Component(cid, tuple(walk), tuple(triples), "forward")
            cid += 1
            if backward:
                inv = tuple((t, INVERSE[r], h) for h, r, t in reversed(triples))
                yield Component(cid, tuple(reversed(walk)), inv, "backward")
                cid += 1
        if walked is not None and not new:
            return


def components(
    source: Source,
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
