"""The exported lm-eval folder loads in the real lm-evaluation-harness and runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.tasks.export_lmeval import GROUP, export_lm_eval


@pytest.mark.slow
def test_export_loads_and_runs_in_lm_eval(embedded_store, samples_dir: Path, tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("lm_eval")
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    counts = export_lm_eval(embedded_store, tmp_path / "lm")
    expected = {}
    for level in ("schema", "instance"):
        for task in ("CEC", "CRR"):
            expected[f"eventkg_ev2_{task.lower()}_{level}"] = sum(
                1 for q in embedded_store.iter_nodes("Question") if q["task"] == task and q["level"] == level)
    assert counts == expected

    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_path=str(tmp_path / "lm"))
    assert set(expected) <= set(tm.all_tasks)
    built = tm.load(list(expected))["tasks"]
    assert set(built) == set(expected)
    for name, task in built.items():
        docs = list(task.test_docs())
        assert len(docs) == expected[name]
        doc = docs[0]
        assert task.doc_to_choice(doc) == list("ABCD"[: len(doc["choices"])])
        assert doc["choices"][task.doc_to_target(doc)] == doc["gold"]
    result = simple_evaluate(model="dummy", tasks=[GROUP], task_manager=tm, bootstrap_iters=0)
    for name in expected:
        acc = result["results"][name]["acc,none"]
        assert 0.0 <= acc <= 1.0
    json.dumps(result["results"])  # a plain metrics dict
