"""CLoMo end to end over real stores, scored by the released SES rule. Expected values come from
hand arithmetic in the comments, never from the scorer under test; scripted models stand in for an LLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventkg.tasks.errors import TaskError
from eventkg.tasks.models import load_model
from eventkg.tasks.models.base import Request
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate
from tests.support.scripted import Scripted


def test_clomo_ses_released_rule_through_the_pipeline(store, tmp_path: Path) -> None:
    task = get_task("clomo", style="zero")
    items = task.build(store)
    assert len(items) >= 3 and all(it.doc["premise1"] and it.doc["premise2"] for it in items)
    ids = sorted(it.id for it in items)
    first, second = ids[0], ids[1]

    def writer(r: Request) -> str:
        if r.item.id == first:
            return "\nStatement1: an edit on the second line"  # first line blank: the empty argument is judged
        if r.item.id == second:
            return "Argument': Statement1: an edit\nwhy: ..."  # judged as written, marker included
        return "Statement1: some edit"

    def judge(r: Request) -> str:
        if r.purpose == "c_p2_ap":
            return "Yes." if r.item.doc["judged_argument"] else "No, the argument is empty."
        return {"c_p1_a": "Answer: yes", "c_p2_a": "No"}[r.purpose]  # c11 never parses: prefix rule

    task.set_judge(Scripted("judge", judge))
    run = evaluate(store, task, Scripted("writer", writer), out_dir=tmp_path / "clomo" / "writer")
    judged = {r.item.id: r.item.doc["judged_argument"] for r in task.judge.requests if r.purpose == "c_p2_ap"}
    assert judged[first] == "" and judged[second] == "Argument': Statement1: an edit"
    assert all("Please think step by step" in r.system for r in task.judge.requests)
    assert task.judge.requests[0].prompt.startswith("\nArgument: ")
    # every item: c11 None, c21 no; c12_22 yes except the empty one ->
    # released: (c21=no and c12_22=yes) -> 1 for all but one: (n-1)/n over ALL n items
    # paper Eq.1 (yes=1 else 0): 0*c12_22 - 0*c12_22 = 0 for every item
    n = len(items)
    assert run.metrics["scored"] == n and run.metrics["ses_released"] == pytest.approx((n - 1) / n)
    assert run.metrics["ses_paper"] == 0.0 and run.metrics["empty_predictions"] == 1
    lines = [json.loads(x) for x in (tmp_path / "clomo" / "writer" / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == n
    assert all(set(ln["judge_responses"]) == {"c_p1_a", "c_p2_ap", "c_p2_a"} for ln in lines)
    assert all(ln["response"] and "parsed" in ln and ln["gold"] for ln in lines)
def test_clomo_oracle_abstains(store, tmp_path: Path) -> None:
    task = get_task("clomo", style="few")
    items = task.build(store)
    assert items and all(it.doc["premise1"] and it.doc["premise2"] and it.gold for it in items)
    # no graph evidence on an edited argument but the item's own reference: it writes nothing
    best = evaluate(store, task, load_model("kg-oracle", store=store), out_dir=tmp_path / "clomo" / "oracle")
    assert best.records and all(r.response == "" and not r.parsed for r in best.records)
    with pytest.raises(TaskError):
        evaluate(store, task, load_model("embed-sim"))


def test_clomo_offline_judge_is_labelled_not_ses(store, tmp_path: Path) -> None:
    task = get_task("clomo", style="few")
    task.set_judge(load_model("majority"))
    prompt = task.render(task.build(store)[0])
    assert "Worked examples" in prompt and "first line of your reply" in prompt
    run = evaluate(store, task, load_model("majority"), out_dir=tmp_path / "clomo" / "no-edit")
    # the majority judge says "Yes" to everything: c11 = c12_22 = yes -> released 1; paper 1 - 1 = 0
    assert run.metrics["ses_released"] == 1.0 and run.metrics["ses_paper"] == 0.0
    assert "not the paper's SES" in run.metrics["judge_kind"]
    assert "not SES" in run.metrics["reference_note"] and 0 < run.metrics["gold_rougeL"] < 1
