"""retrieve(): nearest events -> typed neighbourhood -> prompt, on a small coherent world."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from typer.testing import CliRunner

from eventkg.graphstore.model import event_id
from eventkg.queries.retrieval.retrieve import RetrievedSubgraph, approx_tokens, retrieve, stored_types
from tests.support.worlds import write_world


@pytest.fixture
def world(embedded_store):
    write_world(embedded_store)
    return embedded_store


def test_nearest_event_and_its_neighbourhood(world):
    sub = retrieve(world, "learn", k=1, hops=1, level="schema")
    assert isinstance(sub, RetrievedSubgraph)
    assert [s for s, _ in sub.seeds] == [event_id("learn")]
    texts = {world_text for _, world_text in sub.graph.nodes(data="text")}
    # exactly learn and its one-hop event-relation neighbours (+ the instance typed by it)
    assert texts == {"learn", "study", "remember information", "pass exam", "Tom finally understands how cells divide"}
    assert set(sub.triples) == {
        ("study", "Causes", "learn"),
        ("learn", "Before", "remember information"),
        ("learn", "Causes", "pass exam"),
    }
    assert sub.event_types == [("Tom finally understands how cells divide", "learn")]


def test_two_hops_and_relation_filter(world):
    sub = retrieve(world, "learn", k=1, hops=2, rel_types=["Causes"], level="schema")
    texts = {t for _, t in sub.graph.nodes(data="text")}
    assert texts == {"learn", "study", "pass exam", "graduate"}
    assert all(r == "Causes" for _, r, _ in sub.triples)
    assert stored_types(["IsResult", "After", "HAS_TYPE"]) == ["CAUSES", "BEFORE", "HAS_TYPE"]


def test_semantic_query_finds_the_right_scenario(world):
    sub = retrieve(world, "preparing a meal in the kitchen", k=2, hops=1, level="schema")
    seed_texts = {sub.graph.nodes[s]["text"] for s, _ in sub.seeds if s in sub.graph}
    assert seed_texts & {"cook dinner", "chop vegetables", "eat dinner", "buy food", "bake bread", "wash dishes", "chew food"}
    assert not seed_texts & {"fly", "board plane", "learn"}


def test_triples_ordered_by_relevance(world):
    sub = retrieve(world, "learn", k=1, hops=2, level="schema")
    hop_of = {sub.graph.nodes[n]["text"]: h for n, h in sub.hops.items()}
    ranks = [min(hop_of[h], hop_of[t]) for h, _, t in sub.triples]
    assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] == 1


def test_prompt_lists_types_and_triples_before_question(world):
    sub = retrieve(world, "Tom reads his textbook", k=2, hops=2, mode="neighbourhood")
    prompt = sub.to_prompt(question="What happens after Tom reads?")
    assert prompt.index("Event types:") < prompt.index("Relations between events") < prompt.index("Question:")
    assert '"Tom reads the biology textbook all evening" is an instance of the event type "read book"' in prompt
    assert '("study", HasSubevent, "read book")' in prompt  # texts quoted: the line parses back
    ctx = sub.to_prompt(style="context")
    assert '"read book" is a subevent of "study".' in ctx


def test_max_tokens_trims_least_relevant_first(world):
    sub = retrieve(world, "learn", k=1, hops=2, level="schema")
    full = sub.to_prompt(question="Q?")
    budget = approx_tokens(full) // 2
    short = sub.to_prompt(question="Q?", max_tokens=budget)
    assert approx_tokens(short) <= budget < approx_tokens(full)
    assert short.endswith("Question: Q?")
    kept = [line for line in short.splitlines() if line.startswith("- (")]
    all_lines = [line for line in full.splitlines() if line.startswith("- (")]
    assert kept and len(kept) < len(all_lines)
    assert kept == all_lines[: len(kept)]  # the most relevant lines survive
    tiny = sub.to_prompt(question="Q?", max_tokens=1)
    assert "- (" not in tiny and tiny.endswith("Question: Q?")


def test_networkx_and_json(world):
    sub = retrieve(world, "learn", k=1, hops=1, level="schema")
    g = sub.to_networkx()
    assert isinstance(g, nx.MultiDiGraph) and g is not sub.graph
    assert g.has_edge(event_id("study"), event_id("learn"), key="CAUSES")
    data = json.loads(sub.to_json())
    assert data["seeds"][0]["text"] == "learn"
    assert ["study", "Causes", "learn"] in data["triples"]


def test_bad_input(world):
    from eventkg.queries.errors import RetrieveError

    with pytest.raises(RetrieveError, match="unknown relation type"):
        retrieve(world, "learn", rel_types=["Likes"])
    with pytest.raises(RetrieveError, match="empty"):
        retrieve(world, "  ")
    with pytest.raises(RetrieveError, match="style"):
        retrieve(world, "learn", k=1, hops=0).to_prompt(style="poem")


# -- CLI --------------------------------------------------------------------------------------


def _cli(store_path: Path, *args: str):
    from eventkg.cli.app import app

    return CliRunner().invoke(app, ["--store", str(store_path), *args])


def test_cli_subgraph_formats(tmp_path):
    from eventkg.graphstore import open_store

    path = tmp_path / "w.lbug"
    with open_store(str(path)) as s:
        write_world(s)
    r = _cli(path, "subgraph", "--text", "learn", "-k", "1", "--hops", "1", "--level", "schema", "--format", "triples")
    assert r.exit_code == 0, r.output
    triples = {tuple(json.loads(line)) for line in r.stdout.splitlines()}
    assert ("study", "Causes", "learn") in triples and len(triples) == 3
    r = _cli(path, "subgraph", "--text", "learn", "-k", "1", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["seeds"][0]["text"] == "learn"
    full = _cli(path, "subgraph", "--text", "learn", "-k", "2", "--hops", "2")
    short = _cli(path, "subgraph", "--text", "learn", "-k", "2", "--hops", "2", "--max-tokens", "40")
    assert full.exit_code == 0 and short.exit_code == 0
    assert approx_tokens(short.stdout) <= 40 < approx_tokens(full.stdout)
    bad = _cli(path, "subgraph", "--text", "learn", "--format", "xml")
    assert bad.exit_code != 0 and "--format" in str(bad.exception)
