"""AbsPyramid, CLoMo and schema-alignment tasks over the project's samples, with baselines."""

from __future__ import annotations

from pathlib import Path

import pytest

import ingest.abspyramid
import ingest.clomo
import ingest.ev2
from tasks.abspyramid import grouped_splits, load_tuples
from tasks.errors import TaskError
from tasks.models import load_model
from tasks.registry import get_task
from tasks.report import write_report
from tasks.runner import evaluate, slug


@pytest.fixture
def store(embedded_store, samples_dir: Path):
    ingest.abspyramid.load(embedded_store, samples_dir / "abspyramid")
    ingest.clomo.load(embedded_store, samples_dir / "clomo")
    ingest.ev2.load(embedded_store, samples_dir / "ev2")
    return embedded_store


def test_grouped_splits_keep_groups_together() -> None:
    keys = [f"head{i // 3}\x1finst{i // 3}" for i in range(300)]  # 100 groups of 3 tuples
    assign = grouped_splits(keys)
    counts = {s: sum(1 for v in assign.values() if v == s) for s in ("train", "valid", "test")}
    assert counts == {"train": 80, "valid": 10, "test": 10}


def test_abspyramid_detection_and_generation(store, tmp_path: Path) -> None:
    tuples = load_tuples(store)
    assert {t["relation"] for t in tuples} == {"noun", "verb", "event"}
    det = get_task("abspyramid-det")
    oracle = evaluate(store, det, load_model("kg-oracle", store=store), split="test", out_dir=tmp_path / "det" / "kg-oracle")
    assert oracle.metrics["acc"] == oracle.metrics["macro_f1"] == oracle.metrics["auc"] == 1.0
    maj = evaluate(store, det, load_model("majority"), split="test", out_dir=tmp_path / "det" / "majority")
    assert maj.metrics["auc"] == 0.5  # a constant answer ranks nothing
    assert "<" in oracle.records[0].prompt and "Yes or No" in oracle.records[0].prompt
    gen = get_task("abspyramid-gen")
    items = gen.build(store, split="test")
    assert items and all(isinstance(it.gold, list) and it.gold for it in items)
    g_oracle = evaluate(store, gen, load_model("kg-oracle", store=store), split="test", out_dir=tmp_path / "gen" / "kg-oracle")
    g_embed = evaluate(store, gen, load_model("embed-sim"), split="test", out_dir=tmp_path / "gen" / "embed-sim")
    assert g_oracle.metrics["bleu1"] == pytest.approx(100.0) and g_oracle.metrics["rougeL"] == 1.0
    assert g_embed.metrics["bleu1"] < g_oracle.metrics["bleu1"]
    report = write_report(tmp_path / "gen").read_text()
    assert "noun-entail" in report and "meteor" in report


def test_clomo_ses_with_oracle_and_no_edit(store, tmp_path: Path) -> None:
    task = get_task("clomo", style="few")
    task.set_judge(load_model("kg-oracle", store=store))
    items = task.build(store)
    assert items and all(it.doc["premise1"] and it.doc["premise2"] and it.gold for it in items)
    prompt = task.render(items[0])
    assert "Worked examples" in prompt and "Argument':" in prompt
    best = evaluate(store, task, load_model("kg-oracle", store=store), out_dir=tmp_path / "clomo" / "oracle")
    assert best.metrics["ses_paper"] == best.metrics["ses_released"] == 1.0
    no_edit = evaluate(store, task, load_model("majority"), out_dir=tmp_path / "clomo" / "no-edit")
    assert no_edit.metrics["ses_paper"] == no_edit.metrics["ses_released"] == 0.0
    assert set(best.metrics["per_relation"]) <= {"necessary_assumption", "sufficient_assumption", "strengthen", "weaken"}
    with pytest.raises(TaskError):
        evaluate(store, task, load_model("embed-sim"))


def test_alignment_candidates_and_scores(store, tmp_path: Path) -> None:
    task = get_task("ev2-alignment")
    items = task.build(store)
    assert items
    for it in items:
        cands = it.doc["candidates"]
        assert len(cands) == 20 and len(set(cands)) == 20
        gold = {t.replace(" ", "_").lower() for t in it.gold["event_type"].values()}
        assert gold <= set(cands)
    runs = {spec: evaluate(store, task, load_model(spec, store=store, seed=1), out_dir=tmp_path / "al" / slug(spec)).metrics
            for spec in ("kg-oracle", "random", "embed-sim")}
    assert runs["kg-oracle"]["event_type_acc"] == 1.0 and runs["kg-oracle"]["triplet_f1"] > 0.4
    assert runs["random"]["event_type_acc"] < runs["embed-sim"]["event_type_acc"] < 1.0
    assert "Table 5" in write_report(tmp_path / "al").read_text()
