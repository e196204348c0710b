"""EV² under ``--style rag``: retrieved knowledge in the prompt, the item's own story hidden, kg-rag, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore.model import event_id
from eventkg.queries.retrieval.facts import fact_line, parse_facts
from eventkg.tasks.errors import TaskError
from eventkg.tasks.models.base import Request
from eventkg.tasks.models.kg_rag import KGRagModel
from eventkg.tasks.rag import RagContext, choose_from_facts, story_of
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate_models
from tests.support.chat_stub import ChatStub


@pytest.fixture
def ev2_store(embedded_store, samples_dir: Path):
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    return embedded_store


def _rows(samples_dir: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (samples_dir / "ev2" / name).read_text().splitlines() if line.strip()]


def _retrieved(prompt: str) -> str:
    """The retrieved-knowledge section of a rendered prompt."""
    start = prompt.index("### Retrieved event knowledge:")
    end = prompt.find("###", start + 5)
    return prompt[start: end if end > 0 else None]


def test_own_story_is_hidden_from_retrieval(ev2_store, samples_dir: Path) -> None:
    rag = RagContext(ev2_store, budget=1000)
    leaked_without_filter = 0
    for row in _rows(samples_dir, "I_CEC.jsonl"):
        own = {event_id(t, "instance") for t in (row.get("instances") or {}).values() if t}
        assert own <= rag.hidden(row["id"]), "every instance of the row is hidden"
        block, _ = rag.block(row, "CEC")
        texts = [t for t in (row.get("instances") or {}).values() if t]
        assert not any(t in block for t in texts), f"{row['id']}: its own story's sentence reached the prompt"
        # the question's only evidence at instance level is its own story: without the filter it leaks
        from eventkg.queries.retrieval.retrieve import retrieve

        open_prompt = retrieve(ev2_store, row["instances"][row["e0"]]).to_prompt(max_tokens=1000)
        leaked_without_filter += any(t in open_prompt for t in texts)
    assert leaked_without_filter > 0  # the filter is what keeps it out
    assert story_of("230-1") == "230"


def test_rag_run_on_the_stub_and_kg_rag_report(ev2_store, tmp_path: Path) -> None:
    stub = ChatStub(lambda body: "The answer is A.")
    try:
        done = evaluate_models(ev2_store, "ev2-cec", [f"openai:stub@{stub.url}", "kg-rag"], out_dir=tmp_path / "run",
                               task_options={"style": "rag", "level": "instance"}, http={"use_cache": False})
    finally:
        stub.close()
    assert stub.bodies, "the stub was asked"
    for body in stub.bodies:
        content = body["messages"][-1]["content"]
        block = _retrieved(content)
        assert block and parse_facts(block.replace("### Retrieved event knowledge:\n", "")) is not None
    report = done.report.read_text()
    assert "Retrieved knowledge (rag)" in report and "budget_tokens" in report and "needed_fact_in_prompt" in report
    assert "Table 6" in report and "**this run: kg-rag**" in report
    metrics = json.loads((done.runs["kg-rag"].out_dir / "metrics.json").read_text())
    assert metrics["rag"]["budget_tokens"] == 300
    (tmp_path / "report_excerpt.md").write_text(report)


def test_rag_refuses_the_schema_level() -> None:
    with pytest.raises(TaskError, match="instance"):
        get_task("ev2-cec", style="rag", level="schema")


def test_kg_rag_reads_the_facts_only() -> None:
    facts = [("study", "Causes", "pass exam"), ("fail exam", "IsResult", "skip class")]
    # Causes asked from e0: the choice typed "pass exam"; IsResult: "skip class" causes "fail exam"
    assert choose_from_facts(facts, "Causes", {"A": "sleep", "B": "pass exam"}) == "B"
    assert choose_from_facts(facts, "IsResult", {"A": "skip class", "B": "pass exam"}) == "A"
    assert choose_from_facts(facts, "Before", {"A": "skip class"}) is None
    task = get_task("ev2-cec", style="rag")
    from eventkg.tasks.base import Item

    item = Item(id="x", gold="e1", choices=["e9", "e1"], doc={"rel": "Causes", "event_type": {"e9": "sleep", "e1": "pass exam"}})
    prompt = "### Retrieved event knowledge:\n" + fact_line("study", "Causes", "pass exam")
    got = KGRagModel().generate([Request(prompt, item=item, task=task)])
    assert got[0].text == "B"
    assert KGRagModel().generate([Request("no facts", item=item, task=task)])[0].text == "I cannot tell."
