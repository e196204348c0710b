"""Table 1 induction and path enumeration (the EV² paper, section 3.1)."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys

import networkx as nx
import pytest
from typer.testing import CliRunner

from eventkg.errors import EventKGError
from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import EVENT_RELATIONS, INVERSE, event_id
from eventkg.queries.errors import UnknownRelationError
from eventkg.queries.induction.induce import induce, parse_relations, paths
from tests.support.table1 import table1


def test_every_sequence_up_to_four_matches_table_1() -> None:
    checked = 0
    for length in range(1, 5):
        for seq in itertools.product(EVENT_RELATIONS, repeat=length):
            assert induce(list(seq)) == table1(seq), seq
            checked += 1
    assert checked == 6 + 36 + 216 + 1296


def test_rules_from_the_paper() -> None:
    assert induce(["Before", "Causes", "Before"]) == "Before"
    assert induce(["After", "IsResult", "IsResult", "After"]) == "After"
    assert induce(["Causes", "HasSubevent", "Causes"]) == "Causes"
    assert induce(["IsResult", "IsSubevent"]) == "IsResult"
    assert induce(["Before", "After"]) is None
    assert induce(["Causes", "IsResult"]) is None
    for r in EVENT_RELATIONS:  # single edges induce themselves
        assert induce([r]) == r
    assert induce([]) is None


def test_names_are_forgiving_but_unknown_ones_are_errors() -> None:
    assert parse_relations("before, CAUSES,is_result") == ["Before", "Causes", "IsResult"]
    with pytest.raises(UnknownRelationError, match="unknown event relation 'Foo'"):
        parse_relations("Before,Foo")
    with pytest.raises(EventKGError):
        induce(["Causes", "Likes"])


# --- paths --------------------------------------------------------------------------------

STORED = {"Causes": "CAUSES", "Before": "BEFORE", "HasSubevent": "HAS_SUBEVENT"}


def small_graph(edges: list[tuple[str, str, str]]) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    for h, r, t in edges:
        for x in (h, t):
            g.add_node(event_id(x), label="Event", text=x, level="schema")
        g.add_edge(event_id(h), event_id(t), key=STORED[r], type=STORED[r])
    return g


def test_paths_read_stored_edges_both_ways() -> None:
    g = small_graph([("learn", "Before", "study"), ("study", "Causes", "pass exam"), ("exam", "HasSubevent", "study")])
    forward = paths(g, "learn", "pass exam")
    assert [(p.relations, p.induced) for p in forward] == [(("Before", "Causes"), "Before")]
    backward = paths(g, "pass exam", "learn")
    assert [(p.relations, p.induced) for p in backward] == [(("IsResult", "After"), "After")]
    assert [(p.relations, p.induced) for p in paths(g, "exam", "pass exam")] == [(("HasSubevent", "Causes"), "Causes")]
    via_exam = paths(g, "exam", "learn")
    assert via_exam[0].relations == ("HasSubevent", "After") and via_exam[0].induced is None
    assert paths(g, "exam", "learn", inducing_only=True) == []
    assert paths(g, "learn", "pass exam", max_len=1) == []


def brute_force_paths(g: nx.MultiDiGraph, a: str, b: str, max_len: int) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """All simple paths by networkx on the undirected view, times every relation choice per step."""
    und = nx.Graph(g)
    fwd = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"}
    out = set()
    for nodes in nx.all_simple_paths(und, a, b, cutoff=max_len):
        steps = []
        for u, v in itertools.pairwise(nodes):
            rels = [fwd[k] for k in g.get_edge_data(u, v, default={})]
            rels += [INVERSE[fwd[k]] for k in g.get_edge_data(v, u, default={})]
            steps.append(rels)
        for choice in itertools.product(*steps):
            out.add((tuple(nodes), tuple(choice)))
    return out


def test_paths_agree_with_networkx_on_random_graphs() -> None:
    rng = random.Random(7)
    for trial in range(20):
        names = [f"e{i}" for i in range(12)]
        edges = [(*rng.sample(names, 2), rng.choice(list(STORED))) for _ in range(22)]
        edges = [(h, r, t) for h, t, r in edges]
        g = small_graph(edges)
        a, b = rng.sample([n for n in names if event_id(n) in g], 2)
        got = paths(g, a, b, 4)
        expected = brute_force_paths(g, event_id(a), event_id(b), 4)
        assert {(p.nodes, p.relations) for p in got} == expected, trial
        for p in got:
            assert p.induced == table1(p.relations)
        assert [len(p) for p in got] == sorted(len(p) for p in got)


def test_paths_on_a_store(embedded_store) -> None:
    batch = Batch()
    for x in ("learn", "study", "pass exam"):
        batch.add_node("Event", {"id": event_id(x), "text": x, "level": "schema", "sources": ["test"]})
    batch.add_edge("BEFORE", {"src": event_id("learn"), "dst": event_id("study"), "sources": ["test"]})
    batch.add_edge("CAUSES", {"src": event_id("study"), "dst": event_id("pass exam"), "sources": ["test"]})
    embedded_store.write_batch(batch)
    found = paths(embedded_store, "learn", "pass_exam")
    assert [(p.relations, p.induced) for p in found] == [(("Before", "Causes"), "Before")]


# --- CLI ------------------------------------------------------------------------------------


def test_cli_induce() -> None:
    from eventkg.cli.app import app

    runner = CliRunner()
    assert runner.invoke(app, ["induce", "Before,Causes,Before"]).output.strip() == "Before"
    assert runner.invoke(app, ["induce", "Causes,IsResult"]).output.strip() == "none"
    res = runner.invoke(app, ["induce", "After,IsSubevent", "--json"])
    assert json.loads(res.output) == {"relations": ["After", "IsSubevent"], "induced": "After"}


def test_cli_induce_bad_relation_is_one_line_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "eventkg", "induce", "Before,Likes"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown event relation 'Likes'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_paths(tmp_path) -> None:
    from eventkg.cli.app import app
    from eventkg.graphstore import open_store

    url = str(tmp_path / "s.lbug")
    with open_store(url) as store:
        batch = Batch()
        for x in ("learn", "study", "pass exam", "party"):
            batch.add_node("Event", {"id": event_id(x), "text": x, "level": "schema", "sources": ["test"]})
        batch.add_edge("BEFORE", {"src": event_id("learn"), "dst": event_id("study"), "sources": ["test"]})
        batch.add_edge("CAUSES", {"src": event_id("study"), "dst": event_id("pass exam"), "sources": ["test"]})
        batch.add_edge("CAUSES", {"src": event_id("pass exam"), "dst": event_id("party"), "sources": ["test"]})
        store.write_batch(batch)
    runner = CliRunner()
    res = runner.invoke(app, ["--store", url, "paths", "learn", "party", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == [
        {"nodes": ["learn", "study", "pass_exam", "party"], "relations": ["Before", "Causes", "Causes"],
         "induced": "Before", "length": 3}
    ]
    res = runner.invoke(app, ["--store", url, "paths", "party", "learn", "--max-len", "2", "--json"])
    assert json.loads(res.output) == []
    res = runner.invoke(app, ["--store", url, "paths", "learn", "nowhere"])
    assert res.exit_code != 0 and "no Event 'nowhere'" in str(res.exception)


def test_reach_masks_agree_with_path_enumeration() -> None:
    """The walk automaton behind question checks: a superset of paths, and exact per family mask."""
    from eventkg.queries.graph.event_graph import EventIndex

    rng = random.Random(3)
    names = [f"e{i}" for i in range(40)]
    g = small_graph([(h, rng.choice(list(STORED)), t) for h, t in (rng.sample(names, 2) for _ in range(70))])
    idx = EventIndex.from_graph(g)
    for p in range(len(idx)):
        full = idx.reach(p, 4)
        for mask in (0b11, 0b1100, 0b110000, 0b1111):
            part = idx.reach(p, 4, mask)
            assert {z: m & mask for z, m in full.items() if m & mask} == part
        for z in range(len(idx)):
            if z != p:
                by_paths = {x.induced for x in paths(idx, p, z, 4, inducing_only=True)}
                got = {r for r in EVENT_RELATIONS if full.get(z, 0) >> EVENT_RELATIONS.index(r) & 1}
                assert by_paths <= got
