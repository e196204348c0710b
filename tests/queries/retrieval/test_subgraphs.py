"""Evaluation subgraphs, EV² context sentences and schema-alignment scoring (the EV² paper, section 5.3)."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from eventkg.graphstore.model import event_id
from eventkg.queries.induction.induce import induce
from eventkg.queries.retrieval.scoring import parse_prediction, score_many, score_schema
from eventkg.queries.retrieval.subgraphs import EvalSubgraph, answer_path, parse_context, question_subgraph, verbalise
from tests.support.question_graphs import question_rows, synthetic_batch


def _graph(triples):
    stored = {"Causes": "CAUSES", "Before": "BEFORE", "HasSubevent": "HAS_SUBEVENT"}
    g = nx.MultiDiGraph()
    for h, r, t in triples:
        for x in (h, t):
            g.add_node(event_id(x), label="Event", text=x, level="schema")
        g.add_edge(event_id(h), event_id(t), key=stored[r], type=stored[r])
    return g


def test_context_sentences_match_the_real_ev2_files(shared_samples) -> None:
    checked = 0
    for name in ("S_CEC", "S_CRR", "I_CEC", "I_CRR"):
        for line in (shared_samples / "ev2" / f"{name}.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row.get("context_tpl"):
                assert verbalise(row["context_tpl"]) == row["context"], row["id"]
                checked += 1
            # reading the text back gives the same facts (HasSubevent comes back as IsSubevent)
            back = parse_context(row["context"])
            assert verbalise(back) == row["context"]
    assert checked > 20


def test_verbalise_templates() -> None:
    assert verbalise([("learn", "Before", "remember_information")]) == '"learn" is before "remember_information".'
    assert verbalise([("analyse", "HasSubevent", "study"), ("a", "IsResult", "b")]) == (
        '"study" is a subevent of "analyse". "a" is a result of "b".'
    )
    assert parse_context('"a" causes "b". "c" is after "d".') == [("a", "Causes", "b"), ("c", "After", "d")]


def test_answer_path_comes_from_the_graph() -> None:
    g = _graph([("learn", "Before", "study"), ("study", "Causes", "pass exam")])
    assert answer_path(g, "learn", "Before", "pass_exam") == [("learn", "Before", "study"), ("study", "Causes", "pass_exam")]
    assert answer_path(g, "pass_exam", "After", "learn") == [("pass_exam", "IsResult", "study"), ("study", "After", "learn")]
    assert answer_path(None, "x", "Causes", "y") == [("x", "Causes", "y")]  # no graph: the gold triple
    assert answer_path(g, "learn", "Vague", "study") == []


def test_subgraph_of_a_schema_question() -> None:
    g = _graph([("learn", "Before", "study"), ("study", "Causes", "pass exam"), ("read", "Causes", "learn")])
    row = {"id": "1-0", "e0": "learn", "rel": "Before", "e1": "pass_exam", "context": '"read" causes "learn".',
           "context_tpl": [["read", "Causes", "learn"]]}
    sg = question_subgraph(row, g)
    assert sg.triples == [("read", "Causes", "learn"), ("learn", "Before", "study"), ("study", "Causes", "pass_exam")]
    assert induce([r for _, r, _ in sg.answer_path]) == "Before"
    assert sg.to_context() == '"read" causes "learn". "learn" is before "study". "study" causes "pass_exam".'
    assert set(sg.to_networkx().nodes) == {"read", "learn", "study", "pass_exam"}


def test_subgraph_of_generated_instance_questions(embedded_store) -> None:
    embedded_store.write_batch(synthetic_batch(n_types=300, n_edges=700, seed=5))
    rows = question_rows(embedded_store, "CEC", "instance", 20, seed=1)
    for row in rows:
        sg = question_subgraph(row, embedded_store)
        assert sg.level == "instance"
        assert sg.triples == [tuple(t) for t in row["event_relation"]]
        assert sg.event_types == row["event_type"]
        assert (row["e0"], row["rel"], row["e1"]) in sg.instance_triples
        g = sg.to_networkx()
        assert all(g.has_edge(i, t, key="HAS_TYPE") for i, t in row["event_type"].items())
        # the schema graph carries the answer: a path from e0's type to e1's type inducing rel
        types = row["event_type"]
        assert induce([r for _, r, _ in sg.answer_path]) == row["rel"]
        assert sg.answer_path[0][0] == types[row["e0"]] and sg.answer_path[-1][2] == types[row["e1"]]


def _gold() -> EvalSubgraph:
    return EvalSubgraph(
        "q", "instance",
        schema_triples=[("study", "IsSubevent", "analyse"), ("analyse", "After", "think"), ("pass_class", "After", "study")],
        event_types={"event9": "study", "event30": "analyse", "event86": "think", "event99": "pass_class"},
    )


def test_perfect_prediction_scores_one_and_inverse_spellings_count() -> None:
    pred = {"event_type": {"event9": "study", "event30": "analyse", "event86": "think", "event99": "pass class"},
            "event_relation": [["analyse", "HasSubevent", "study"], ["think", "Before", "analyse"],
                               ["pass_class", "After", "study"]]}
    s = score_schema(pred, _gold())
    assert (s.type_accuracy, s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0, 1.0)
    strict = score_schema(pred, _gold(), canonical=False)
    assert strict.f1 == pytest.approx(1 / 3)


def test_partial_prediction_scores() -> None:
    # the paper's Figure 9 style output, as text with an extra wrong triple
    text = ('Event type and event relation: {"event_type": {"event9": "study", "event30": "research", '
            '"event86": "think"}, "event_relation": [["study", "IsSubevent", "analyse"], '
            '["think", "Causes", "analyse"]]}')
    s = score_schema(text, _gold())
    assert s.type_accuracy == pytest.approx(2 / 4)
    assert (s.precision, s.recall) == (pytest.approx(1 / 2), pytest.approx(1 / 3))
    assert s.f1 == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))


def test_unreadable_predictions_score_zero_and_many_is_micro() -> None:
    assert score_schema("I cannot answer", _gold()).f1 == 0.0
    assert parse_prediction("{'event_type': {'a': 'b'}, 'event_relation': []}")["event_type"] == {"a": "b"}
    both = score_many([_gold_prediction(), "nonsense"], [_gold(), _gold()])
    assert both.type_accuracy == pytest.approx(0.5) and both.recall == pytest.approx(0.5)
    assert both.precision == 1.0 and both.n_gold_triples == 6


def _gold_prediction() -> dict:
    g = _gold()
    return {"event_type": dict(g.event_types), "event_relation": [list(t) for t in g.schema_triples]}
