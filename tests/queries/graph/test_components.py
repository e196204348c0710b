"""Algorithm 1 components: walk sizes, DAGs, backward copies, determinism."""

from __future__ import annotations

import random

import networkx as nx

from eventkg.graphstore.model import INVERSE, event_id
from eventkg.queries.graph.components import components
from eventkg.queries.graph.event_graph import EventIndex

STORED = {"Causes": "CAUSES", "Before": "BEFORE", "HasSubevent": "HAS_SUBEVENT"}


def random_graph(n_nodes: int, n_edges: int, seed: int) -> nx.MultiDiGraph:
    rng = random.Random(seed)
    g = nx.MultiDiGraph()
    names = [f"event {i}" for i in range(n_nodes)]
    for x in names:
        g.add_node(event_id(x), label="Event", text=x, level="schema")
    for _ in range(n_edges):
        a, b = rng.sample(names, 2)
        t = rng.choice(list(STORED.values()))
        g.add_edge(event_id(a), event_id(b), key=t, type=t)
    return g


def stored_facts(g: nx.MultiDiGraph) -> set[tuple[str, str, str]]:
    fwd = {v: k for k, v in STORED.items()}
    return {(u, fwd[k], v) for u, v, k in g.edges(keys=True)}


def test_components_are_small_connected_dags_of_stored_edges() -> None:
    g = random_graph(200, 400, seed=1)
    idx = EventIndex.from_graph(g)
    facts = stored_facts(g)
    comps = components(g, n=3, seed=5)
    assert len(comps) > 50
    for c in comps:
        assert 3 <= len(c.nodes) <= 5
        assert len(set(c.nodes)) == len(c.nodes)
        dag = nx.MultiDiGraph()
        dag.add_nodes_from(c.nodes)
        dag.add_edges_from((h, t) for h, _, t in c.triples)
        assert nx.is_directed_acyclic_graph(dag)
        assert nx.is_weakly_connected(dag)
        for h, r, t in c.triples:
            fact = (idx.ids[h], r, idx.ids[t]) if c.direction == "forward" else (idx.ids[t], INVERSE[r], idx.ids[h])
            assert fact in facts


def test_backward_copies_invert_every_edge() -> None:
    comps = components(random_graph(100, 220, seed=2), n=3, seed=1)
    forward = [c for c in comps if c.direction == "forward"]
    backward = [c for c in comps if c.direction == "backward"]
    assert len(forward) == len(backward) > 10
    for f, b in zip(forward, backward, strict=True):
        assert b.cid == f.cid + 1
        assert set(b.nodes) == set(f.nodes)
        assert sorted(b.triples) == sorted((t, INVERSE[r], h) for h, r, t in f.triples)
        assert {r for _, r, _ in b.triples} <= {"IsResult", "After", "IsSubevent"}


def test_cycles_are_removed() -> None:
    g = nx.MultiDiGraph()
    names = ["wake up", "eat", "work"]
    for a, b in zip(names, names[1:] + names[:1], strict=True):  # a directed 3-cycle
        g.add_edge(event_id(a), event_id(b), key="BEFORE", type="BEFORE")
    comps = [c for s in range(30) for c in components(g, n=3, seed=s)]
    assert comps, "some walk must succeed on a triangle"
    for c in comps:
        if len(c.nodes) == 3:
            assert len(c.triples) == 2  # one edge of the cycle is dropped


def test_deterministic_for_a_seed_and_independent_of_edge_order() -> None:
    g = random_graph(150, 300, seed=3)
    shuffled = nx.MultiDiGraph()
    edges = list(g.edges(keys=True, data=True))
    random.Random(0).shuffle(edges)
    nodes = list(g.nodes(data=True))
    random.Random(1).shuffle(nodes)
    shuffled.add_nodes_from(nodes)
    shuffled.add_edges_from(edges)

    def named(graph, seed):
        idx = EventIndex.from_graph(graph)
        return [(c.direction, tuple(c.named(idx))) for c in components(idx, 3, seed)]

    assert named(g, 11) == named(shuffled, 11)
    assert named(g, 11) != named(g, 12)


def test_limit_and_sizes() -> None:
    g = random_graph(300, 900, seed=4)
    assert len(components(g, n=4, seed=0, limit=10)) == 10
    sizes = {len(c.nodes) for c in components(g, n=4, seed=0)}
    assert sizes <= {4, 5, 6} and len(sizes) > 1
