"""``eventkg questions`` says before the work how many it expects when the graph holds fewer than asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eventkg.graphstore import Batch, open_store
from eventkg.graphstore.model import event_id

#: the chain x -> a -> b -> c (BEFORE) and two lone CAUSES edges: 4 schema CEC keys by hand
#: (tests/queries/questions/test_question_capacity.py works them out)
EDGES = [("x", "BEFORE", "a"), ("a", "BEFORE", "b"), ("b", "BEFORE", "c"), ("d", "CAUSES", "e"), ("f", "CAUSES", "g")]


def eventkg(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eventkg", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def chain_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = str(tmp_path_factory.mktemp("expected") / "chain.lbug")
    with open_store(url) as store:
        b = Batch()
        for e in "xabcdefg":
            b.add_node("Event", {"id": event_id(f"event {e}"), "text": f"event {e}", "level": "schema", "sources": ["cli"]})
        for s, rel, d in EDGES:
            b.add_edge(rel, {"src": event_id(f"event {s}"), "dst": event_id(f"event {d}"), "sources": ["cli"]})
        store.write_batch(b)
    return url


def _ask(store: str, n: int, out: Path) -> subprocess.CompletedProcess:
    proc = eventkg("--store", store, "questions", "cec", "-n", str(n), "--seed", "1", "--negatives", "random",
                   "--no-similar", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc


def test_expects_fewer_than_asked(chain_store: str, tmp_path: Path) -> None:
    out = tmp_path / "q.jsonl"
    lines = _ask(chain_store, 100, out).stderr.splitlines()
    expects = [i for i, line in enumerate(lines) if line.startswith("expects at most")]
    assert len(expects) == 1, lines
    assert lines[expects[0]].startswith("expects at most 4 schema CEC questions from this store (100 asked): ")
    made = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(made) <= 4  # the expectation bounds what came
    done = next(i for i, line in enumerate(lines) if "questions ->" in line)
    assert expects[0] < done  # said before the result


def test_no_notice_when_the_graph_holds_enough(chain_store: str, tmp_path: Path) -> None:
    assert "expects at most" not in _ask(chain_store, 4, tmp_path / "q.jsonl").stderr
    assert "expects at most" not in _ask(chain_store, 2, tmp_path / "q.jsonl").stderr
