"""``eventkg demo`` end to end on a temporary store: report, charts, honest baselines only
(no figure from reading gold), chance line, and that a second ingest / generation changes
nothing in the store."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binom

from eventkg.demo import BASELINES, SUITES, ingest_samples
from eventkg.graphstore import open_store
from eventkg.graphstore.model import EVENT_LEVELS
from eventkg.queries.questions.make import make_questions
from eventkg.queries.questions.rows import TASKS
from eventkg.queries.questions.spec import QuestionSpec
from tests.support.paths import CHECKOUT

ROOT = CHECKOUT
N = 30  # questions per task and level: small, still enough for the chance bounds
CHANCE = {"ev2-cec-imported": 1 / 4, "ev2-cec-generated": 1 / 4, "ev2-crr-imported": 1 / 3,
          "ev2-crr-generated": 1 / 3, "abspyramid-det": 1 / 2}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One demo run (CLI, own process) shared by the checks below."""
    tmp = tmp_path_factory.mktemp("demo")
    store, out = tmp / "store.lbug", tmp / "report"
    env = dict(os.environ, EVENTKG_CACHE=str(tmp / "cache"))  # a fresh FAISS index, as on a fresh clone
    proc = subprocess.run([sys.executable, "-m", "eventkg", "--store", str(store), "demo", "--out", str(out),
                           "--n", str(N), "--seed", "3"], cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"store": store, "out": out, "stdout": proc.stdout, "env": env,
            "metrics": json.loads((out / "metrics.json").read_text(encoding="utf-8"))}


def test_report_has_every_baseline_with_per_relation_tables_and_charts(demo: dict) -> None:
    out: Path = demo["out"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert str((out / "report.md").resolve()) in demo["stdout"].replace("\n", "")
    sections = re.split(r"^### ", report, flags=re.M)
    per_relation = [s for s in sections if s.startswith(("schema level, per relation\n", "instance level, per relation\n"))]
    assert len(per_relation) >= 4  # CEC and CRR, imported and generated
    for name in BASELINES:
        assert f"| {name} |" in report
    for name in ("random", "majority", "embed-sim"):
        assert all(f"| {name} |" in s for s in per_relation)
    assert "AbsPyramid detection" in report
    pngs = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", report)
    assert "plots/headline.png" in pngs and len(pngs) > 10
    for rel in pngs:
        assert (out / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", rel


def test_predictions_and_metrics_per_suite(demo: dict) -> None:
    out, metrics = demo["out"], demo["metrics"]
    made = metrics["questions"]
    assert made.keys() == {"CEC schema", "CEC instance", "CRR schema", "CRR instance"}
    assert all(0 < k <= N for k in made.values())  # N asked; the sample graph may yield fewer, never none
    # only this run's questions
    assert metrics["suites"]["ev2-cec-generated"]["models"]["random"]["n"] == made["CEC schema"] + made["CEC instance"]
    assert metrics["suites"]["ev2-crr-generated"]["models"]["random"]["n"] == made["CRR schema"] + made["CRR instance"]
    for suite in SUITES:
        for spec in suite.models:
            m = metrics["suites"][suite.key]["models"][spec]
            lines = (out / suite.key / spec / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
            assert len(lines) == m["n"] > 0
            assert {"prompt", "response", "parsed", "gold"} <= json.loads(lines[0]).keys()


def test_only_honest_baselines(demo: dict) -> None:
    """kg-oracle runs only where it can hide the answer (imported EV², AbsPyramid), its score is
    the arithmetic of its own predictions with abstentions wrong; no CLoMo oracle judge."""
    head, suites = demo["metrics"]["headline"], demo["metrics"]["suites"]
    assert "clomo" not in suites
    for key in ("ev2-cec-generated", "ev2-crr-generated"):
        assert "kg-oracle" not in suites[key]["models"] and head[key].get("kg-oracle") is None
    for key in ("ev2-cec-imported", "ev2-crr-imported", "abspyramid-det"):
        oracle = suites[key]["models"]["kg-oracle"]
        records = [json.loads(line) for line in
                   (demo["out"] / key / "kg-oracle" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
        abstained = sum(r["response"] == "I cannot tell." for r in records)
        assert len(records) == oracle["n"] > 0
        assert all(not r["correct"] for r in records if r["response"] == "I cannot tell.")
        if key.startswith("ev2"):
            assert oracle["abstained"] == abstained
            assert oracle["accuracy"] == sum(bool(r["correct"]) for r in records) / len(records)
    # majority on imported EV² (no train split) learnt from the other level, never the scored items
    for key in ("ev2-cec-imported", "ev2-crr-imported"):
        notes = suites[key]["models"]["majority"]["_run"]["model"]["notes"]
        assert notes == ["fitted on the other level's items (no train split)"], notes


def test_random_is_at_chance(demo: dict) -> None:
    suites = demo["metrics"]["suites"]
    for key, chance in CHANCE.items():
        n = suites[key]["models"]["random"]["n"]
        acc = demo["metrics"]["headline"][key]["random"]
        lo, hi = binom.ppf(0.001, n, chance) / n, binom.ppf(0.999, n, chance) / n
        assert lo <= acc <= hi, (key, acc, lo, hi)


def test_second_ingest_and_generation_change_nothing(demo: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVENTKG_CACHE", demo["env"]["EVENTKG_CACHE"])
    with open_store(str(demo["store"])) as store:
        before = store.counts()
        ingest_samples(store)
        counts = {f"{task} {level}": len(make_questions(store, QuestionSpec(task, level, N, 3, save=True)))
                  for task in TASKS for level in EVENT_LEVELS}
        assert counts == demo["metrics"]["questions"]
        assert store.counts() == before
