"""EV² CEC/CRR on the project's imported samples: oracle, chance, embeddings, report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binom

from eventkg import ingest_source
from eventkg.tasks.models import load_model
from eventkg.tasks.registry import get_task
from eventkg.tasks.report import write_report
from eventkg.tasks.runner import evaluate, slug
from tests.support.paths import CHECKOUT


@pytest.fixture
def ev2_store(embedded_store, samples_dir: Path):
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    return embedded_store


def _run(store, task_name: str, spec: str, out: Path, **options):
    return evaluate(store, get_task(task_name, **options), load_model(spec, store=store, seed=7), out_dir=out / slug(spec))


@pytest.mark.parametrize("task_name", ["ev2-cec", "ev2-crr"])
def test_oracle_random_embed_and_report(ev2_store, tmp_path: Path, task_name: str) -> None:
    out = tmp_path / task_name
    oracle = _run(ev2_store, task_name, "kg-oracle", out).metrics
    rnd = _run(ev2_store, task_name, "random", out).metrics
    emb = _run(ev2_store, task_name, "embed-sim", out).metrics
    n = oracle["n"]
    assert n >= 20
    # the scores are the arithmetic of the predictions file: correct = parsed answer equals gold,
    # an abstention ("I cannot tell.") is parsed as nothing and counted wrong
    lines = [json.loads(x) for x in (out / "kg-oracle" / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == n
    for r in lines:
        assert bool(r["correct"]) == (r["parsed"] is not None and r["parsed"] == r["gold"])
        assert (r["response"] == "I cannot tell.") == (r["parsed"] is None)
    assert oracle["abstained"] == sum(r["response"] == "I cannot tell." for r in lines)
    assert oracle["accuracy"] == sum(bool(r["correct"]) for r in lines) / n
    assert set(oracle["by_level"]) == {"schema", "instance"}
    chance = 0.25 if task_name == "ev2-cec" else 1 / 3
    lo, hi = binom.ppf(0.001, n, chance) / n, binom.ppf(0.999, n, chance) / n
    assert lo <= rnd["accuracy"] <= hi
    assert lo <= rnd["accuracy"] < oracle["accuracy"]
    assert lo <= emb["accuracy"]
    report = write_report(out).read_text()
    for name in ("kg-oracle", "random", "embed-sim"):
        assert f"| {name} |" in report
    assert "per relation family" in report and "Table 4 columns" in report
    pngs = list((out / "plots").glob("*.png"))
    assert pngs and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    line = json.loads((out / "random" / "predictions.jsonl").read_text().splitlines()[0])
    assert {"prompt", "response", "parsed", "gold"} <= line.keys()


def test_styles_render_sections(ev2_store) -> None:
    plain = get_task("ev2-cec", level="instance")
    item = plain.build(ev2_store, n=1)[0]
    assert "### Instances:" in plain.render(item) and "The answer is" in plain.render(item)
    direct = get_task("ev2-cec", level="instance", style="direct").render(item)
    assert "### Event types:" in direct
    cot = get_task("ev2-cec", level="instance", style="cot").render(item)
    assert "event type" in cot.lower() and cot.rstrip().endswith('letter of your choice.')


@pytest.mark.parametrize("task_name", ["ev2-cec", "ev2-crr"])
def test_direct_style_never_shows_a_candidates_triple(ev2_store, task_name: str) -> None:
    """The schema knowledge shown never names a candidate's type (CEC: the four choices, CRR:
    e1), so neither the answer triple nor a path into the answer is visible."""
    task = get_task(task_name, level="instance", style="direct")
    shown = 0
    for item in task.build(ev2_store):
        types = item.doc["event_type"]
        cands = [item.doc["e1"]] if task_name == "ev2-crr" else item.choices
        knowledge = task.render(item).split("### Schema knowledge:")[-1].split("###")[0]
        for c in cands:
            assert f'"{types[c].replace("_", " ")}"' not in knowledge, (item.meta["qid"], c)
        answer = (types[item.doc["e0"]], item.doc["rel"], types[item.doc["e1"]])
        assert list(answer) in item.doc["event_relation"] or item.doc["rel"] == "Vague"
        shown += knowledge.count('" ')
    assert shown > 0  # the context's schema triples are still shown


def test_majority_does_not_memorise_open_choices(ev2_store, tmp_path: Path) -> None:
    m = _run(ev2_store, "ev2-cec", "majority", tmp_path).metrics
    assert m["accuracy"] < 0.75  # learning gold event names from the evaluated items would give ~1.0


def test_registry_import_is_lazy() -> None:
    code = "import sys, eventkg.tasks.registry; sys.exit(1 if any(m in sys.modules for m in ('torch', 'eventkg.tasks.ev2.tasks', 'sentence_transformers')) else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=CHECKOUT).returncode == 0


def test_cli_list_and_bad_model_one_line_error(ev2_store, tmp_path: Path) -> None:
    url = ev2_store.url
    ev2_store.close()
    root = CHECKOUT
    listed = subprocess.run([sys.executable, "-m", "eventkg", "eval", "--list", "--json"], cwd=root, capture_output=True, text=True)
    assert listed.returncode == 0 and "abspyramid-det" in {t["name"] for t in json.loads(listed.stdout)}
    bad = subprocess.run([sys.executable, "-m", "eventkg", "--store", url, "eval", "ev2-cec", "--model", "gpt-9"],
                         cwd=root, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown model spec 'gpt-9'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    ok = subprocess.run([sys.executable, "-m", "eventkg", "--store", url, "eval", "ev2-crr", "--model", "kg-oracle",
                         "--out", str(tmp_path / "cli"), "--json"], cwd=root, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    got = json.loads(ok.stdout)["kg-oracle"]
    lines = [json.loads(x) for x in (tmp_path / "cli" / "kg-oracle" / "predictions.jsonl").read_text().splitlines()]
    assert got["accuracy"] == sum(bool(r["correct"]) for r in lines) / len(lines) and "abstained" in got
    assert (tmp_path / "cli" / "report.md").is_file()
