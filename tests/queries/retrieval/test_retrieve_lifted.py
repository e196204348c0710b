"""retrieve()'s lifted mode: an unseen sentence -> its schema types -> their facts, packed to a budget.

The world: a few schema types with facts, instance sentences of other stories typed by them
(with facts between instances), a synonym cluster, a hub type, and schema events without any
schema edge. Expected values are written from the world below, not from the code.
"""

from __future__ import annotations

import json

import pytest

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import canonical_edge, event_id
from eventkg.queries.retrieval.facts import fact_line, parse_facts
from eventkg.queries.retrieval.retrieve import approx_tokens, retrieve

SCHEMA = [
    ("revise", "Causes", "pass exam"),
    ("revise", "Before", "take exam"),
    ("make a plan", "Causes", "revise"),
    ("review notes", "Causes", "remember facts"),  # a synonym of revise (one cluster)
    ("cook meal", "Causes", "eat"),
    ("buy groceries", "Before", "cook meal"),
    ("board plane", "Before", "fly"),
] + [("celebrate", "Causes", x) for x in ("dance", "sing", "drink wine", "feel joy", "invite friends", "eat cake")]
CLUSTERS = [["revise", "review notes"]]
#: schema events with no schema edge (EV²'s negatives): they must not take seed slots
EDGELESS = ["going over notes", "notes"]
#: (sentence, type, story) of stored instances
INSTANCES = [
    ("Maria spent the whole night going over her chemistry notes", "revise", "s1"),
    ("Maria got an A in the chemistry final", "pass exam", "s1"),
    ("Ken reread his history flashcards many times", "review notes", "s2"),
    ("Leo chopped onions and simmered a stew for his family", "cook meal", "s3"),
    ("The family ate the stew together", "eat", "s3"),
]
INSTANCE_FACTS = [
    ("Maria spent the whole night going over her chemistry notes", "Causes", "Maria got an A in the chemistry final"),
    ("Leo chopped onions and simmered a stew for his family", "Causes", "The family ate the stew together"),
]
UNSEEN = "Sam went over his biology notes again and again all weekend"


def _write(store) -> None:
    b = Batch()
    names = {t for h, _, tl in SCHEMA for t in (h, tl)} | set(EDGELESS)
    cluster = {n: i for i, c in enumerate(CLUSTERS) for n in c}
    for n in sorted(names):
        b.add_node("Event", {"id": event_id(n), "text": n, "level": "schema", "sources": ["test"], "cluster": cluster.get(n)})
    for text, _, _ in INSTANCES:
        b.add_node("Event", {"id": event_id(text, "instance"), "text": text, "level": "instance", "sources": ["test"]})
    for h, rel, t in SCHEMA:
        src, rtype, dst = canonical_edge(event_id(h), rel, event_id(t))
        b.add_edge(rtype, {"src": src, "dst": dst, "sources": ["test"]})
    for h, rel, t in INSTANCE_FACTS:
        src, rtype, dst = canonical_edge(event_id(h, "instance"), rel, event_id(t, "instance"))
        b.add_edge(rtype, {"src": src, "dst": dst, "sources": ["test"]})
    for text, typ, _ in INSTANCES:
        b.add_edge("HAS_TYPE", {"src": event_id(text, "instance"), "dst": event_id(typ), "sources": ["test"]})
    store.write_batch(b)


@pytest.fixture
def typed(embedded_store):
    _write(embedded_store)
    return embedded_store


def test_unseen_sentence_lifted_to_its_type(typed):
    sub = retrieve(typed, UNSEEN)
    assert sub.types, "a typed store lifts the text to types"
    best = sub.types[0]
    # revise and review notes are one cluster: one type, both members
    assert set(best.ids) == {event_id("revise"), event_id("review notes")}
    assert best.score > (sub.types[1].score if len(sub.types) > 1 else 0)
    assert ("revise", "Causes", "pass exam") in sub.triples
    assert ("review notes", "Causes", "remember facts") in sub.triples


def test_edgeless_schema_events_take_no_seed_slot(typed):
    sub = retrieve(typed, "going over notes", k=3)
    seeds = {i for i, _ in sub.seeds}
    assert not seeds & {event_id(n) for n in EDGELESS}
    assert len(seeds) == 3


def test_asked_relation_first_and_spelled_as_asked(typed):
    sub = retrieve(typed, UNSEEN, relation="Before")
    assert sub.triples[0] == ("revise", "Before", "take exam")
    sub = retrieve(typed, UNSEEN, relation="IsResult")
    assert sub.triples[0] == ("revise", "IsResult", "make a plan")
    prompt = sub.to_prompt()
    assert fact_line("revise", "IsResult", "make a plan") in prompt
    assert parse_facts(prompt)[0] == ("revise", "IsResult", "make a plan")


def test_budget_packs_schema_facts_of_best_type_before_other_stories(typed):
    sub = retrieve(typed, UNSEEN)
    full = sub.to_prompt()
    facts = parse_facts(full)
    assert len(facts) == len(set(facts)), "no fact twice"
    instance_at = [i for i, f in enumerate(facts) if f[0].startswith(("Maria", "Leo", "Ken"))]
    revise_at = [i for i, f in enumerate(facts) if {f[0], f[2]} & {"revise", "review notes"}]
    assert instance_at and revise_at and max(revise_at) < min(instance_at)
    budget = approx_tokens(full) - approx_tokens(fact_line(*facts[-1]))
    short = sub.to_prompt(max_tokens=budget)
    assert approx_tokens(short) <= budget
    kept = parse_facts(short)
    assert kept == facts[: len(kept)] and len(kept) < len(facts)


def test_hidden_story_gives_nothing(typed):
    story = {event_id(t, "instance") for t, _, s in INSTANCES if s == "s1"}
    sub = retrieve(typed, "Maria spent the whole night going over her chemistry notes", exclude=story)
    assert not story & set(sub.graph.nodes)
    assert not story & {i for i, _ in sub.seeds}
    assert all("Maria" not in h and "Maria" not in t for h, _, t in sub.triples)
    assert "Maria" not in sub.to_prompt()
    # without the filter, the story's own facts are there
    assert any("Maria" in h for h, _, _ in retrieve(typed, "Maria spent the whole night going over her chemistry notes").triples)


def test_hub_cut_by_similarity_and_the_note_says_so(typed):
    from eventkg.queries.vectors.embeddings import Embedder

    around = [t for h, _, t in SCHEMA if h == "celebrate"]
    emb = Embedder(None)  # the reference: the model's own cosines, not the code under test
    sims = emb.encode(around) @ emb.encode(["celebrate"])[0]
    expected = {around[i] for i in sims.argsort()[::-1][:2]}
    sub = retrieve(typed, "celebrate", per_node=2, types=1)
    assert [event_id("celebrate")] == [i for t in sub.types for i in t.ids]
    assert {t for h, _, t in sub.triples} == expected
    assert (event_id("celebrate"), 2, 6) in sub.truncated
    assert "most similar to the text" in sub.to_prompt()


def test_prompt_lines_parse_back_with_commas_and_quotes():
    line = fact_line('Maria, tired, said "done"', "Causes", "sleep")
    assert parse_facts(f"header\n{line}\n") == [('Maria, tired, said "done"', "Causes", "sleep")]


def test_triples_is_a_property_and_json_has_types(typed):
    sub = retrieve(typed, UNSEEN)
    assert isinstance(sub.triples, list) and all(len(t) == 3 for t in sub.triples)
    data = json.loads(sub.to_json())
    assert data["types"][0]["name"] in {"revise", "review notes"}


def test_store_without_types_keeps_the_neighbourhood(embedded_store):
    b = Batch()
    for n in ("study", "learn", "pass exam"):
        b.add_node("Event", {"id": event_id(n), "text": n, "level": "schema", "sources": ["test"]})
    for h, rel, t in (("study", "Causes", "learn"), ("learn", "Causes", "pass exam")):
        src, rtype, dst = canonical_edge(event_id(h), rel, event_id(t))
        b.add_edge(rtype, {"src": src, "dst": dst, "sources": ["test"]})
    embedded_store.write_batch(b)
    sub = retrieve(embedded_store, "study", k=1, hops=2)
    assert sub.types == [] and sub.facts is None
    assert set(sub.triples) == {("study", "Causes", "learn"), ("learn", "Causes", "pass exam")}


def test_hybrid_seeds_find_an_exact_phrase_dense_search_misses(embedded_store):
    texts = ["Oskar tried zorbing down the hill", "the committee received the annual report",
             "the board received a report from the committee", "the committee read the report aloud",
             "the council received the budget report", "Mia cooked pasta"]
    b = Batch()
    for n in texts:
        b.add_node("Event", {"id": event_id(n), "text": n, "level": "schema", "sources": ["test"]})
    embedded_store.write_batch(b)
    q = "the committee received a report about zorbing"
    dense = retrieve(embedded_store, q, k=3, search="dense")
    hybrid = retrieve(embedded_store, q, k=3, search="hybrid")  # the lifted mode's default, asked for here
    assert event_id(texts[0]) not in {i for i, _ in dense.seeds}
    assert event_id(texts[0]) in {i for i, _ in hybrid.seeds}


def test_bad_options(typed):
    from eventkg.queries.errors import RetrieveError

    with pytest.raises(RetrieveError, match="relation"):
        retrieve(typed, UNSEEN, relation="Likes")
    with pytest.raises(RetrieveError, match="mode"):
        retrieve(typed, UNSEEN, mode="magic")
    with pytest.raises(RetrieveError, match="search"):
        retrieve(typed, UNSEEN, search="grep")


def test_a_type_named_like_the_text_goes_before_one_with_more_votes():
    from eventkg.queries.retrieval.lifted import NAME_SIMILARITY, _by_name
    from eventkg.queries.retrieval.lifting import TypeScore

    assert NAME_SIMILARITY > 0, "the default re-scores lifted types by their names"
    voted = TypeScore("earn money", ("a",), 1.0)  # more instance votes, a name far from the text
    named = TypeScore("revise", ("b", "c"), 0.8)  # fewer votes; a member's name near the text
    cosines = {"a": 0.1, "b": 0.2, "c": 0.9}  # the best member counts
    got = _by_name([voted, named], lambda ids: {i: cosines[i] for i in ids})
    assert [t.name for t in got] == ["revise", "earn money"]
    # by hand: 0.8 + NAME_SIMILARITY * 0.9 against 1.0 + NAME_SIMILARITY * 0.1
    assert got[0].score == pytest.approx(0.8 + NAME_SIMILARITY * 0.9)


def test_fulltext_seeds_on_each_backend_from_its_own_index(store):
    """LadybugDB: BM25 beside the vector index; Neo4j: the server's own full-text index."""
    from eventkg.graphstore.saved_cypher import backend_of
    from eventkg.queries.vectors.fulltext import NEO4J_INDEX, FullTextIndex, Neo4jFullText, open_fulltext
    from eventkg.queries.vectors.index import open_index

    texts = ["Oskar tried zorbing down the hill", "the committee received the annual report", "Mia cooked pasta"]
    b = Batch()
    for n in texts:
        b.add_node("Event", {"id": event_id(n), "text": n, "level": "schema", "sources": ["test"]})
    store.write_batch(b)
    got = retrieve(store, "zorbing", k=1, search="fulltext")
    assert [i for i, _ in got.seeds] == [event_id(texts[0])]
    index = open_fulltext(store, open_index(store))
    if backend_of(store) == "neo4j":
        assert isinstance(index, Neo4jFullText)
        names = {r["name"] for r in store.query("SHOW FULLTEXT INDEXES YIELD name RETURN name")}
        assert NEO4J_INDEX in names
    else:
        assert isinstance(index, FullTextIndex)


def test_fulltext_seeds_from_a_second_opening_of_the_store(store, request):
    """What is remembered of a store's full-text index is that it exists, never the store object that
    first asked: after that one is closed, a new opening of the same store searches through itself."""
    from eventkg.graphstore import open_store

    texts = ["Oskar tried zorbing down the hill", "Mia cooked pasta"]
    b = Batch()
    for n in texts:
        b.add_node("Event", {"id": event_id(n), "text": n, "level": "schema", "sources": ["test"]})
    store.write_batch(b)
    assert [i for i, _ in retrieve(store, "zorbing", k=1, search="fulltext").seeds] == [event_id(texts[0])]
    url = request.getfixturevalue("neo4j_server").url if store.url.startswith("neo4j") else store.url
    store.close()
    with open_store(url) as again:
        assert [i for i, _ in retrieve(again, "zorbing", k=1, search="fulltext").seeds] == [event_id(texts[0])]


def test_a_type_and_relation_share_one_line_so_a_budget_holds_more_facts(typed):
    """celebrate Causes six things (the world above): one line, all six parsed back; a budget of
    the header plus two single-fact lines holds more than two facts."""
    sub = retrieve(typed, "celebrate", types=1)
    prompt = sub.to_prompt()
    lines = [ln for ln in prompt.splitlines() if ln.startswith('- ("celebrate", Causes, [')]
    assert len(lines) == 1
    around = {t for h, _, t in SCHEMA if h == "celebrate"}
    assert {t for h, r, t in parse_facts(lines[0])} == around
    assert {f for f in parse_facts(prompt) if f[0] == "celebrate"} == {("celebrate", "Causes", t) for t in around}
    head = sub.to_prompt(max_tokens=0)  # the header alone (nothing fits)
    title = "Relations between event types (head, relation, tail):"
    two_lines = approx_tokens(head) + approx_tokens(title) + 2 * approx_tokens(fact_line("celebrate", "Causes", "drink wine"))
    short = sub.to_prompt(max_tokens=two_lines)
    assert approx_tokens(short) <= two_lines
    assert len(parse_facts(short)) > 2


def test_a_fact_into_the_lifted_type_is_written_from_its_side(typed):
    """Stored ("make a plan", Causes, "revise"); lifted to revise, no question: ("revise", IsResult,
    "make a plan"), so the type's facts start with the type."""
    sub = retrieve(typed, UNSEEN)
    assert ("revise", "IsResult", "make a plan") in sub.triples
    assert ("make a plan", "Causes", "revise") not in sub.triples
    assert ("revise", "IsResult", "make a plan") in parse_facts(sub.to_prompt())


def test_the_budget_is_spread_over_types_by_their_share_per_fact():
    """Type A (score 1.0) has six facts, type B (score 0.9) one: B's single fact is worth more than
    A's sixth share, so it is ranked before A's facts; with equal fact counts A's go first."""
    from eventkg.queries.retrieval.facts import rank_facts
    from eventkg.queries.retrieval.lifting import TypeLayer, TypeScore

    def world(n_a: int) -> TypeLayer:
        layer = TypeLayer(text={"A": "a", "B": "b", **{f"x{i}": f"x{i}" for i in range(6)}, "y": "y"})
        for i in range(n_a):
            layer.edges.setdefault("A", []).append(("CAUSES", f"x{i}", True))
        layer.edges["B"] = [("CAUSES", "y", True)]
        return layer

    types = [TypeScore("a", ("A",), 1.0), TypeScore("b", ("B",), 0.9)]
    facts, _ = rank_facts(world(6), types, [], lambda ids: {})
    assert facts[0].key == ("B", "CAUSES", "y")
    facts, _ = rank_facts(world(1), types, [], lambda ids: {})
    assert [f.key for f in facts] == [("A", "CAUSES", "x0"), ("B", "CAUSES", "y")]
