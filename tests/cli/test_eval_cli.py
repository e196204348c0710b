
"""``eventkg eval`` user errors: a wrong ``--model`` spec, an unreachable server or an unknown
task is one line on stderr and exit code 2, never a traceback, and writes no report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eventkg import ingest_source
from tests.support.paths import CHECKOUT

ROOT = CHECKOUT


@pytest.fixture
def ev2_url(embedded_store, samples_dir: Path) -> str:
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    url = embedded_store.url
    embedded_store.close()
    return url


def _eval(url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eventkg", "--store", url, "eval", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("spec", ["nonsense:x", "random:abc", "openai:"])
def test_bad_model_spec(ev2_url: str, tmp_path: Path, spec: str) -> None:
    line = _one_line_error(_eval(ev2_url, tmp_path, "ev2-cec", "--model", spec))
    assert repr(spec) in line
    assert not (tmp_path / "eventkg-eval").exists()


def test_unreachable_server(ev2_url: str, tmp_path: Path) -> None:
    # port 1 refuses at once; the retries' backoff (1+2+4+8 s) is the cost of this test
    proc = _eval(ev2_url, tmp_path, "ev2-cec", "--model", "openai:m@http://127.0.0.1:1/v1", "--n", "2",
                 "--no-cache", "--timeout", "2")
    line = _one_line_error(proc)
    assert "127.0.0.1:1" in line and "cannot connect" in line
    assert not (tmp_path / "eventkg-eval" / "ev2-cec" / "report.md").exists()


def test_unknown_task(ev2_url: str, tmp_path: Path) -> None:
    line = _one_line_error(_eval(ev2_url, tmp_path, "ev2-nope", "--model", "random"))
    assert "unknown task 'ev2-nope'" in line
