"""`eventkg questions` says why a store cannot give questions, before reading the graph."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from eventkg.cli.app import app

runner = CliRunner()


def _ingest(store: Path, *args: str) -> None:
    result = runner.invoke(app, ["--store", str(store), "ingest", *args])
    assert result.exit_code == 0, result.output


def _questions(store: Path, level: str, out: Path):
    return runner.invoke(app, ["--store", str(store), "questions", "cec", "--level", level, "-n", "3",
                               "--negatives", "random", "--out", str(out)], terminal_width=200)


def test_aser_without_map_events_is_told_to_reingest_with_it(tmp_path: Path, samples_dir: Path) -> None:
    store = tmp_path / "aser.lbug"
    _ingest(store, "aser", str(samples_dir / "aser" / "KG.db"))  # discourse relations only
    result = _questions(store, "schema", tmp_path / "q.jsonl")
    assert result.exit_code != 0
    text = str(result.exception)  # an EventKGError: `eventkg` prints it as one line, exit 2
    assert "--map-events" in text and "ran out of components" not in text
    assert not (tmp_path / "q.jsonl").exists()


def test_a_store_without_instance_events_says_so(tmp_path: Path, samples_dir: Path) -> None:
    store = tmp_path / "aser.lbug"
    _ingest(store, "aser", str(samples_dir / "aser" / "KG.db"), "--map-events")  # schema-level events only
    result = _questions(store, "instance", tmp_path / "q.jsonl")
    assert result.exit_code != 0
    text = str(result.exception)
    assert "no instance-level events" in text and "ran out of components" not in text
    # the schema level of the same store does not hit either message
    ok = _questions(store, "schema", tmp_path / "s.jsonl")
    assert ok.exception is None, ok.exception
