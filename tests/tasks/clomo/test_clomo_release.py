"""CLoMo's release styles against the release itself (the shared folder's copy, unmodified): the
messages sent and the SES judge queries are the release's own."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.tasks.runner import evaluate_models
from tests.support.chat_stub import ChatStub
from tests.support.releases import CLOMO, import_release, needs_releases


@pytest.fixture(scope="module")
def clomo_store(tmp_path_factory):
    if not (CLOMO / "data").is_dir():
        pytest.skip(f"the CLoMo release is not at {CLOMO}")
    store = open_store(str(tmp_path_factory.mktemp("clomorel") / "store.lbug"))
    ingest_source(store, "clomo", CLOMO / "data")
    yield store
    store.close()


@pytest.fixture(scope="module")
def clomo_ses():
    stand_in = types.ModuleType("OpenaiAPI")
    stand_in.OpenaiAPIMaster = None
    saved = sys.modules.get("OpenaiAPI")
    sys.modules["OpenaiAPI"] = stand_in  # the release's API client needs the openai package; unused here
    try:
        return import_release(CLOMO / "SES" / "ses.py", "ref_clomo_ses", CLOMO / "SES")
    finally:
        if saved is None:
            sys.modules.pop("OpenaiAPI", None)
        else:
            sys.modules["OpenaiAPI"] = saved
        sys.modules.pop("eval_prompts", None)


@needs_releases
@pytest.mark.parametrize(("style", "setup"), [("release", "zero"), ("release-few", "few"), ("release-cot", "cot")])
def test_clomo_release_messages_and_ses_queries(clomo_store, clomo_ses, style, setup, tmp_path: Path) -> None:
    rows = {r["id_string"]: r for r in json.loads((CLOMO / "data" / f"{setup}_test.json").read_text(encoding="utf-8"))}

    def reply(body):
        return "Yes, it does." if body["messages"][0]["content"].startswith("You are an expert in logic") else \
            "Statement1: an edited argument.\nThe edit explained."

    stub = ChatStub(reply)
    try:
        done = evaluate_models(clomo_store, "clomo", [f"openai:stub@{stub.url}"], out_dir=tmp_path / "run",
                               task_options={"style": style, "release": str(CLOMO)}, http={"use_cache": False,
                                                                                          "concurrency": 8})
    finally:
        stub.close()
    gen = [b for b in stub.bodies if not b["messages"][0]["content"].startswith("You are an expert in logic")]
    judged = [b for b in stub.bodies if b["messages"][0]["content"].startswith("You are an expert in logic")]
    sent = {(b["messages"][0]["content"], b["messages"][1]["content"]) for b in gen}
    expected = {(r["instruction"], r["input"]) for r in rows.values()}  # LLMer_inference.py's query
    assert sent == expected and len(gen) == 200  # all 200 test prompts, system = instruction, user = input
    assert all(b["temperature"] == 0.7 and "max_tokens" not in b for b in gen)
    queries = []

    class Recorder:
        def chat_query(self, query, retry=True, generate_args=None):
            queries.append((query, generate_args))
            return {"choices": [{"message": {"content": "Yes"}}]}

    for r in rows.values():
        clomo_ses.eval_func_decomposed(r["input_info"], {"pred_str": "Statement1: an edited argument.\nThe edit explained."},
                                       r["qtype"], r["id_string"], Recorder())
    assert sorted(json.dumps(b["messages"]) for b in judged) == sorted(json.dumps(q) for q, _ in queries)
    assert all(b["temperature"] == 1.0 and "max_tokens" not in b for b in judged)
    report = done.report.read_text()
    assert "Table 5 (SES, GPT-4 as the judge)" in report and f"Table 7, {setup} setting" in report
    assert "| GPT-4o | 0.680 | 0.696 | 0.667 | 0.800 | 0.625 |" in report
    assert "**this run: openai:stub** (200 items) | **1.000** |" in report
