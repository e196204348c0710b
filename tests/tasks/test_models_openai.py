"""The OpenAI-compatible adapter against a real HTTP server on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.errors import EventKGError
from eventkg.tasks.errors import ModelSpecError, ModelUnreachable
from eventkg.tasks.models import load_model
from eventkg.tasks.models.cache import ResponseCache
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate
from tests.support.chat_stub import ChatStub


@pytest.fixture
def server():
    s = ChatStub()
    yield s
    s.close()


def test_end_to_end_retries_timeout_and_cache(embedded_store, samples_dir: Path, server, tmp_path: Path, monkeypatch) -> None:
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    cache = ResponseCache(tmp_path / "cache")
    opts = {"timeout": 0.5, "backoff": 0.01, "concurrency": 1, "cache": cache}
    task = get_task("ev2-cec")
    server.script = ["429", "500", "slow"]
    model = load_model(f"openai:tiny-model@{server.url}", **opts)
    first = evaluate(embedded_store, task, model, n=5, out_dir=tmp_path / "run1")
    assert len(server.requests) == 5 + 3  # each failure (429, 500, timeout) was retried once
    first_req = server.requests[0]
    assert first_req["path"] == "/v1/chat/completions"
    assert first_req["auth"] == "Bearer sk-test-123"
    assert first_req["body"]["model"] == "tiny-model"
    assert first_req["body"]["messages"][-1] == {"role": "user", "content": first.records[0].prompt}
    items = task.build(embedded_store, n=5)
    assert [r.parsed for r in first.records] == [it.choices[0] for it in items]  # "The answer is A."
    assert cache.info()["entries"] == 5

    seen = len(server.requests)
    again = evaluate(embedded_store, task, load_model(f"openai:tiny-model@{server.url}", **opts), n=5, out_dir=tmp_path / "run2")
    assert len(server.requests) == seen  # answered wholly from the cache
    assert all(r.cached for r in again.records) and again.metrics["_run"]["cached_responses"] == 5
    assert [r.response for r in again.records] == [r.response for r in first.records]
    assert cache.clear() == 5 and cache.info()["entries"] == 0


def test_unreachable_and_bad_specs_are_one_line_store_errors(tmp_path: Path, server) -> None:
    server.close()
    model = load_model(f"openai:m@{server.url}", timeout=0.3, backoff=0.01, max_retries=1, cache=ResponseCache(tmp_path))
    from eventkg.tasks.models.base import Request

    with pytest.raises(ModelUnreachable) as err:
        model.generate([Request(prompt="hi")])
    assert isinstance(err.value, EventKGError) and "\n" not in str(err.value) and "2 attempts" in str(err.value)
    for spec in ("gpt4", "openai:", "random:x", "kg-oracle", "openai:m@ftp://x", "hf:/no/such/folder"):
        with pytest.raises(EventKGError):
            load_model(spec)
    with pytest.raises(ModelSpecError, match="unknown model spec"):
        load_model("claude")


def test_client_errors_are_not_retried(server, tmp_path: Path) -> None:
    server.script = ["400"] * 3
    from eventkg.tasks.models.base import Request

    model = load_model(f"openai:m@{server.url}", backoff=0.01, cache=ResponseCache(tmp_path))
    with pytest.raises(ModelUnreachable, match="HTTP 400"):
        model.generate([Request(prompt="hi")])
    assert len(server.requests) == 1


def test_refused_connection_fails_fast_with_default_retries(embedded_store, samples_dir: Path, server,
                                                            tmp_path: Path) -> None:
    """Nothing listening: one quick retry, then the one-line error - not ~18 s of backoff (the
    default options back off 1+2+4+8 s on 429/5xx and timeouts), even with many items queued."""
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    server.close()
    model = load_model(f"openai:m@{server.url}", cache=ResponseCache(tmp_path))  # default retries and backoff
    assert model.max_retries >= 3 and model.backoff >= 1
    started = time.perf_counter()
    with pytest.raises(ModelUnreachable, match="cannot connect") as err:
        evaluate(embedded_store, get_task("ev2-cec"), model, n=20, out_dir=tmp_path / "run")
    assert time.perf_counter() - started < 5
    assert "after 2 attempts" in str(err.value) and "\n" not in str(err.value)
    assert model.sent <= 2 * model.concurrency  # queued requests were dropped, not each tried in turn
