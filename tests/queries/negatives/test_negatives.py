"""NearestNegatives: hard negatives that are never right answers, reproducible for a seed."""

from __future__ import annotations

import json
import random

import networkx as nx
import numpy as np
import pytest
from typer.testing import CliRunner

from eventkg.graphstore.model import FAMILIES, event_id, family_of
from eventkg.queries.errors import NegativesError
from eventkg.queries.negatives.nearest import INDUCING_TYPES, NearestNegatives
from eventkg.queries.vectors.embeddings import Embedder
from tests.support.worlds import INSTANCES, SCHEMA_TRIPLES, write_world

E = event_id


@pytest.fixture
def world(embedded_store):
    write_world(embedded_store)
    return embedded_store


def linked_by_family(store, query: str, family: str, radius: int = 2) -> set[str]:
    """Independent check: events within ``radius`` hops over the family's inducing types."""
    g = store.fetch_graph(list(INDUCING_TYPES[family])).to_undirected()
    if query not in g:
        return set()
    return set(nx.single_source_shortest_path_length(g, query, cutoff=radius)) - {query}


QUESTIONS = [(h, rel, t) for h, rel, t in SCHEMA_TRIPLES] + [(t, r, h) for h, r, t in SCHEMA_TRIPLES[:6]]


def test_negatives_never_linked_to_the_query_by_the_family(world):
    sampler = NearestNegatives(world, level="schema")
    for head, rel, tail in QUESTIONS:
        negs = sampler.sample(E(head), rel, E(tail), k=6)
        assert negs, (head, rel, tail)
        family = family_of(rel)
        forbidden = linked_by_family(world, E(head), family)
        # direct edges of the family's stored type, either direction, are in there too
        assert not set(negs) & forbidden, (head, rel, tail)
        assert E(head) not in negs and E(tail) not in negs


def test_induction_reaches_beyond_two_hops(world):
    from eventkg.queries.induction.induce import paths

    sampler = NearestNegatives(world, level="schema")
    # cook dinner Causes eat dinner HasSubevent chew food HasSubevent swallow food: Table 1
    # rule Causes* HasSubevent+ Causes* induces Causes over three hops
    causal = sampler.linked(E("cook dinner"), "causal")
    assert {E("eat dinner"), E("chew food"), E("swallow food"), E("feel full")} <= causal
    assert E("fly") not in causal and E("study") not in causal
    # study Causes learn Causes pass exam Causes graduate Causes get job: Causes+ induces Before
    assert {E("graduate"), E("get job")} <= sampler.linked(E("study"), "temporal")
    assert sampler.linked(E("study"), "hierarchical") == {E("read book")}
    # the oracle: every event with a path of <= 4 edges inducing the family is linked
    events = {E(t) for h, _, t in SCHEMA_TRIPLES for t in (h, t)}
    for query in (E("cook dinner"), E("study"), E("board plane")):
        for family, members in FAMILIES.items():
            linked = sampler.linked(query, family)
            for other in events - {query}:
                if any(p.induced in members for p in paths(world, query, other, max_len=4)):
                    assert other in linked, (query, family, other)


def test_induced_link_is_not_a_negative(world):
    sampler = NearestNegatives(world, level="schema")
    free = NearestNegatives(world, level="schema", max_path=2)  # only the two-hop radius
    args = (E("cook dinner"), "Causes", E("eat dinner"))
    assert E("swallow food") in free.sample(*args, k=8)  # it looks like an answer...
    assert E("swallow food") not in sampler.sample(*args, k=8)  # ...and induction rules it out


def test_a_sampler_that_leaves_vetting_to_the_generator_asks_no_store_search(world):
    """``vet_links=False`` (how the question generator builds it): no neighbourhood search per query, so
    a linked event can be proposed, and every question the generator makes from it still has no negative
    linked to the query by the asked family (it vets each one against its in-memory graph)."""
    from eventkg.queries.questions.make import make_questions
    from eventkg.queries.questions.spec import QuestionSpec

    raw = NearestNegatives(world, level="schema", vet_links=False)
    assert E("swallow food") in raw.sample(E("cook dinner"), "Causes", E("eat dinner"), k=8)
    from eventkg.queries.induction.induce import paths

    made = make_questions(world, QuestionSpec("cec", "schema", 40, 1, negatives="faiss", similar=False), sampler=raw)
    assert made
    for q in made:  # the oracle: no path of <= 4 edges from the query to a negative induces the family
        members = FAMILIES[family_of(q.row["rel"])]
        for z in q.row["negative_chosen"]:
            assert not any(p.induced in members for p in paths(world, q.names[q.row["e0"]], q.names[z], max_len=4)), q.row


def test_negatives_are_never_near_duplicates(world):
    emb = Embedder()
    texts = {E(t): t for t in {x for h, _, t in SCHEMA_TRIPLES for x in (h, t)} | {"acquire knowledge", "gain understanding",
             "memorize facts", "forget information", "teach class", "attend lecture", "write essay", "do homework",
             "bake bread", "wash dishes", "rent car", "miss flight", "study hard"}}
    vec = dict(zip(texts, emb.encode(list(texts.values())), strict=True))
    for cap in (0.9, 0.6):
        sampler = NearestNegatives(world, level="schema", similarity_cap=cap)
        for head, rel, tail in QUESTIONS:
            negs = sampler.sample(E(head), rel, E(tail), k=4)
            for n in negs:
                assert float(vec[n] @ vec[E(tail)]) < cap + 1e-4
            for a in negs:
                for b in negs:
                    if a != b:
                        assert float(vec[a] @ vec[b]) < cap + 1e-4


def test_hardest_first_and_exclude(world):
    sampler = NearestNegatives(world, level="schema")
    scored = sampler.sample_scored(E("pass exam"), "After", E("take exam"), k=3)
    sims = [s for _, s in scored]
    assert sims == sorted(sims, reverse=True)
    first = scored[0][0]
    again = sampler.sample(E("pass exam"), "After", E("take exam"), k=3, exclude={first})
    assert first not in again and len(again) == 3


def test_deterministic_for_a_seed(world):
    sampler = NearestNegatives(world, level="schema")
    args = (E("study"), "Causes", E("learn"))
    runs = {seed: sampler.sample(*args, k=3, rng=seed) for seed in range(6)}
    assert runs[0] == sampler.sample(*args, k=3, rng=0) == sampler.sample(*args, k=3, rng=random.Random(0))
    fresh = NearestNegatives(world, level="schema")
    assert fresh.sample(*args, k=3, rng=np.random.default_rng(7)) == fresh.sample(*args, k=3, rng=np.random.default_rng(7))
    assert len({tuple(v) for v in runs.values()}) > 1  # the seed matters
    assert sampler.sample(*args, k=3) == sampler.sample(*args, k=3)  # no rng: the k nearest


def test_cluster_spread(world):
    sampler = NearestNegatives(world, level="schema", clusters=4)
    negs = sampler.sample(E("study"), "Causes", E("learn"), k=3)
    assert len(negs) == 3
    vi = sampler.index_for(E("learn"))
    labels = sampler.cluster_labels(vi, [vi.vector(n) for n in negs])
    assert len(set(labels.tolist())) == 3  # 4 clusters, 3 negatives: all different


def test_level_follows_the_answer(world):
    sampler = NearestNegatives(world)
    inst = [E(t, "instance") for t, _ in INSTANCES]
    negs = sampler.sample(inst[0], "Causes", inst[1], k=3)
    assert negs and set(negs) <= set(inst) - {inst[0], inst[1]}


def test_bad_requests(world):
    sampler = NearestNegatives(world)
    with pytest.raises(NegativesError, match="unknown event relation"):
        sampler.sample(E("study"), "Likes", E("learn"))
    with pytest.raises(NegativesError, match="not in the store"):
        sampler.sample(E("study"), "Causes", E("no such event"))
    with pytest.raises(NegativesError, match="level"):
        NearestNegatives(world, level="abstract")
    assert set(FAMILIES) == set(INDUCING_TYPES)


def test_on_every_backend(store, monkeypatch, tmp_path):
    monkeypatch.setenv("EVENTKG_CACHE", str(tmp_path / "cache"))
    write_world(store)
    sampler = NearestNegatives(store, level="schema")
    negs = sampler.sample(E("cook dinner"), "HasSubevent", E("chop vegetables"), k=3)
    assert len(negs) == 3 and not set(negs) & linked_by_family(store, E("cook dinner"), "hierarchical")


# -- CLI --------------------------------------------------------------------------------------


def test_cli_negatives(tmp_path):
    from eventkg.cli.app import app
    from eventkg.graphstore import open_store

    path = tmp_path / "w.lbug"
    with open_store(str(path)) as s:
        write_world(s)
        forbidden = linked_by_family(s, E("study"), "causal")
    run = CliRunner().invoke
    base = ["--store", str(path), "negatives"]
    r = run(app, [*base, "study", "--rel", "Causes", "-k", "3", "--level", "schema", "--json", "--rebuild"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["index"]["built"] is True and out["answer"]["text"] == "learn"  # default answer: the direct Causes tail
    ids = [n["id"] for n in out["negatives"]]
    assert len(ids) == 3 and not set(ids) & forbidden
    r = run(app, [*base, "study", "--rel", "Causes", "--answer", "learn", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["index"]["built"] is False
    r = run(app, [*base, "study", "--rel", "Causes"])
    assert r.exit_code == 0 and "negatives for" in r.stdout
    r = run(app, [*base, "no such thing", "--rel", "Causes"])
    assert r.exit_code == 1 and "no Event with text 'no such thing'" in str(r.exception)
    r = run(app, [*base, "get job", "--rel", "Causes"])
    assert r.exit_code == 1 and "--answer" in str(r.exception)
