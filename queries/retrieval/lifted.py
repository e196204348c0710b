"""The lifted retrieval of a typed store: hybrid seeds -> lifted types -> ranked facts -> subgraph.

:func:`lifted_parts` runs the steps of :func:`eventkg.queries.retrieval.retrieve.retrieve` on a
store with a type layer: :func:`~eventkg.queries.retrieval.hybrid.seed_events` finds
:data:`CANDIDATES_PER_SEED` times ``k`` candidates, schema events whose cluster has no schema
edge are dropped (they hold no fact, so they take no seed slot), :func:`~eventkg.queries.retrieval.lifting.lift`
ranks the types (then each is re-scored: its votes relative to the best type's plus
:data:`NAME_SIMILARITY` times the best cosine of a member's name to the text, so a type named like the
text is not outvoted by a frequent type of loosely similar sentences), :func:`~eventkg.queries.retrieval.facts.rank_facts` ranks their facts and
those of the seed instances, and the subgraph holds exactly the facts' events and edges, the
seeds, and the seeds' ``HAS_TYPE`` edges.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.queries.retrieval.facts import Fact, rank_facts
from eventkg.queries.retrieval.hybrid import seed_events
from eventkg.queries.retrieval.lifting import TypeLayer, TypeScore, lift
from eventkg.queries.vectors.index import VectorIndex

CANDIDATES_PER_SEED = 20
#: weight of a lifted type's own name's similarity to the text in its final score
NAME_SIMILARITY = 1.0


@dataclass
class LiftedParts:
    seeds: list[tuple[str, float]]
    types: list[TypeScore]
    facts: list[Fact]
    truncated: list[tuple[str, int, int]]
    graph: nx.MultiDiGraph
    hops: dict[str, int]
    similarity: dict[str, float]


def lifted_parts(
    store: GraphStore,
    vi: VectorIndex,
    layer: TypeLayer,
    text: str,
    *,
    k: int,
    n_types: int,
    relation: str | None,
    per_node: int | None,
    search: str,
    exclude: Collection[str],
    rel_types: Sequence[str],
) -> LiftedParts:
    """Seeds, types, facts and the subgraph for ``text`` (see the module docstring)."""
    qvec = vi.embedder.encode([text])[0]
    found = seed_events(store, vi, text, qvec, max(k, 1) * CANDIDATES_PER_SEED, search=search, exclude=exclude)
    found = [(i, s) for i, s in found if i not in layer.text or layer.live(i)]
    lifted = lift(layer, found, exclude=exclude)
    cache: dict[str, float] = {}

    def similarity(ids: Sequence[str]) -> dict[str, float]:
        todo = [i for i in ids if i not in cache]
        vecs = vi.vectors(todo)
        if vecs:
            got = np.stack([vecs[i] for i in vecs]) @ qvec
            cache.update({i: float(s) for i, s in zip(vecs, got, strict=True)})
        return {i: cache[i] for i in ids if i in cache}

    if NAME_SIMILARITY and lifted:
        lifted = _by_name(lifted, similarity)
    types = lifted[:n_types]
    scores = {m: t.score for t in lifted for m in t.ids}

    seeds = found[:k]
    facts, truncated = rank_facts(layer, types, seeds, similarity, relation=relation, per_node=per_node,
                                  exclude=exclude, scores=scores, rel_types=[t for t in rel_types if t != "HAS_TYPE"])
    graph, hops = _graph(store, layer, seeds, types, facts, "HAS_TYPE" in rel_types)
    return LiftedParts(seeds, types, facts, truncated, graph, hops, similarity(list(graph.nodes)))


def _by_name(lifted: list[TypeScore], similarity: Callable[[Sequence[str]], dict[str, float]]) -> list[TypeScore]:
    """The lifted types re-scored: their votes relative to the best plus :data:`NAME_SIMILARITY`
    times the best cosine of a member's name to the text."""
    sims = similarity([m for t in lifted for m in t.ids])
    top = lifted[0].score or 1.0
    out = [TypeScore(t.name, t.ids, t.score / top + NAME_SIMILARITY * max((sims.get(m, 0.0) for m in t.ids), default=0.0), t.votes)
           for t in lifted]
    out.sort(key=lambda t: (-t.score, t.name))
    return out


def _graph(
    store: GraphStore, layer: TypeLayer, seeds: list[tuple[str, float]], types: list[TypeScore], facts: list[Fact], has_type: bool
) -> tuple[nx.MultiDiGraph, dict[str, int]]:
    hops: dict[str, int] = {i: 0 for i, _ in seeds}
    for t in types:
        for m in t.ids:
            hops.setdefault(m, 0)
    for f in facts:
        for n in (f.src, f.dst):
            hops.setdefault(n, 1)
    type_edges = [(i, t) for i, _ in seeds for t in layer.types_of.get(i, [])] if has_type else []
    for _, t in type_edges:
        hops.setdefault(t, 1)
    props = store.get_nodes("Event", list(hops))
    g = nx.MultiDiGraph()
    for n in sorted(hops, key=lambda x: (hops[x], x)):
        g.add_node(n, label="Event", **{a: v for a, v in props.get(n, {}).items() if v is not None})
    for f in facts:
        g.add_edge(f.src, f.dst, key=f.stored, type=f.stored)
    for i, t in type_edges:
        g.add_edge(i, t, key="HAS_TYPE", type="HAS_TYPE")
    return g, hops
