"""The ingest command group: --list, --help with examples, --limit, the summary."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from eventkg.cli import app
from eventkg.ingest.registry import LOADERS, get_loader

runner = CliRunner()


def test_list_shows_every_loader():
    result = runner.invoke(app, ["ingest", "--list", "--json"])
    assert result.exit_code == 0
    assert [r["name"] for r in json.loads(result.stdout)] == list(LOADERS)
    table = runner.invoke(app, ["ingest", "--list"], terminal_width=200)
    for name in LOADERS:
        assert name in table.stdout


def test_every_ingest_command_has_help_with_example():
    for name in [None, *LOADERS]:
        args = ["ingest", "--help"] if name is None else ["ingest", name, "--help"]
        result = runner.invoke(app, args, terminal_width=200)
        assert result.exit_code == 0
        assert "Example:" in result.stdout, name


def test_registry_module_has_load():
    for info in LOADERS.values():
        assert callable(info.load_module().load)
    assert get_loader("ev2").name == "ev2"


def test_limit_stops_after_n_rows(tmp_path, samples_dir):
    result = runner.invoke(app, ["--store", str(tmp_path / "kg.lbug"), "ingest", "ev2", str(samples_dir / "ev2"),
                                 "--limit", "5", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rows"] == 5 and report["limited"]
    assert report["nodes"]["Question"] == 5


def test_summary_table(tmp_path, samples_dir):
    result = runner.invoke(app, ["--store", str(tmp_path / "kg.lbug"), "ingest", "clomo", str(samples_dir / "clomo")],
                           terminal_width=200)
    assert result.exit_code == 0, result.output
    for word in ("Argument", "PART_OF", "rejected", "rows/s"):
        assert word in result.stdout


def test_unknown_on_error_mode(tmp_path, samples_dir):
    result = runner.invoke(app, ["--store", str(tmp_path / "kg.lbug"), "ingest", "ev2", str(samples_dir / "ev2"),
                                 "--on-error", "ignore"])
    assert result.exit_code != 0
    assert "unknown mode 'ignore'" in result.stderr
