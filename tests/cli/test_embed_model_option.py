"""``--embed-model`` names the sentence-embedding model; ``--model`` is its old spelling there (one release,
with a deprecation line) and stays the model under evaluation in ``eval``."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eventkg import ingest_source
from eventkg.cli.app import app

runner = CliRunner()
MISSING = "/no/such/embedding-model"


@pytest.fixture(scope="module")
def ev2_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from eventkg.graphstore import open_store
    from tests.support.paths import SAMPLES

    path = tmp_path_factory.mktemp("embed") / "ev2.lbug"
    with open_store(str(path)) as store:
        ingest_source(store, "ev2", SAMPLES / "ev2")
    return str(path)


@pytest.mark.parametrize("flag", ["--embed-model", "--model"])
@pytest.mark.parametrize("command", [["subgraph", "--text", "learn", "--mode", "neighbourhood"],
                                     ["negatives", "learn", "--rel", "Causes"]], ids=lambda c: c[0])
def test_the_flag_reaches_the_embedder(ev2_url: str, command: list[str], flag: str) -> None:
    """A model that does not exist is refused by name: the flag is read, not ignored."""
    result = runner.invoke(app, ["--store", ev2_url, *command, flag, MISSING])
    assert result.exit_code != 0 and MISSING in str(result.exception), result.output
    deprecated = "deprecated: --model is now --embed-model" in result.stderr
    assert deprecated == (flag == "--model"), result.stderr


def test_both_spellings_at_once_are_refused(ev2_url: str) -> None:
    result = runner.invoke(app, ["--store", ev2_url, "subgraph", "--text", "learn", "--embed-model", "a", "--model", "b"])
    assert result.exit_code != 0 and "give --embed-model only" in str(result.exception)


def test_eval_model_is_the_model_under_evaluation(ev2_url: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["--store", ev2_url, "eval", "ev2-cec", "--model", "random", "--n", "4",
                                 "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    assert "random" in result.stdout and "deprecated" not in result.stderr
    assert runner.invoke(app, ["eval", "ev2-cec", "--embed-model", "x"]).exit_code == 2  # no such option there


def test_python_deprecated_keywords_warn_and_route() -> None:
    from eventkg.queries.questions.spec import QuestionSpec

    with pytest.warns(DeprecationWarning, match="embed_model"):
        spec = QuestionSpec("cec", model="m")
    assert spec.embed_model == "m"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert QuestionSpec("cec", embed_model="m").embed_model == "m"
