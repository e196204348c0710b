"""A reply with ``content: null`` (a real HTTP server that sends it): under eventkg's own EV² styles it
says nothing, so it is unparseable and wrong; only the release's reading (its styles) falls back to
the choice with the best overlap, which is A when nothing overlaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.tasks.models import load_model
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate
from tests.support.chat_stub import ChatStub


@pytest.fixture
def silent_server():
    s = ChatStub(reply=lambda body: None)  # {"content": null}
    yield s
    s.close()


@pytest.mark.parametrize("style", ["plain", "direct", "cot"])
def test_null_content_is_unparseable_under_eventkg_styles(embedded_store, samples_dir: Path, silent_server,
                                                          tmp_path: Path, style: str) -> None:
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    model = load_model(f"openai:m@{silent_server.url}", use_cache=False, concurrency=1)
    run = evaluate(embedded_store, get_task("ev2-cec", style=style), model, n=6)
    assert [r.response for r in run.records] == [""] * 6
    assert run.metrics["unparseable"] == 6
    assert all(r.parsed is None and not r.correct for r in run.records)
