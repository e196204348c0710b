"""The ingest command group: --list, --help with examples, --limit, the summary."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from eventkg.cli.app import app
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


def test_one_entry_point_to_ingest():
    """A loader module is its parse (the registry runs the pipeline on it); nothing else ingests."""
    for info in LOADERS.values():
        module = info.load_module()
        assert callable(module.parse) and not hasattr(module, "load")
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


def test_source_options_are_taught_and_checked(tmp_path, samples_dir):
    """ASER's own options show in the help under their source; given to another source they are one line, exit 2."""
    help_text = runner.invoke(app, ["ingest", "ev2", "--help"], terminal_width=200).stdout
    assert "--map-events" in help_text and "--concepts" in help_text and "Options of aser only" in help_text
    listed = {r["name"]: r["options"] for r in json.loads(runner.invoke(app, ["ingest", "--list", "--json"]).stdout)}
    assert [o["name"] for o in listed["aser"]] == ["--map-events", "--concepts"]
    assert [o["name"] for o in listed["ev2"]] == ["--partial"] and listed["eeckg"] == []
    store = tmp_path / "kg.lbug"
    result = runner.invoke(app, ["--store", str(store), "ingest", "ev2", str(samples_dir / "ev2"), "--map-events"])
    assert result.exit_code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert lines == ["error: source 'ev2' does not take map_events (an option of aser); ev2 takes partial (--map-events)"]
    assert not store.exists()  # refused before the store was touched


def test_aser_options_reach_the_loader(tmp_path, samples_dir):
    aser = samples_dir / "aser"
    result = runner.invoke(app, ["--store", str(tmp_path / "kg.lbug"), "ingest", "aser", str(aser / "KG.db"),
                                 "--map-events", "--concepts", str(aser / "concept.db"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["nodes"].get("Concept", 0) > 0 and report["edges"].get("ABSTRACTS_TO", 0) > 0
    assert sum(report["edges"].get(t, 0) for t in ("CAUSES", "BEFORE")) > 0
    plain = runner.invoke(app, ["--store", str(tmp_path / "plain.lbug"), "ingest", "aser", str(aser / "KG.db"), "--json"])
    edges = json.loads(plain.stdout)["edges"]
    assert not any(edges.get(t, 0) for t in ("CAUSES", "BEFORE", "ABSTRACTS_TO"))


def test_unknown_source_and_missing_path():
    result = runner.invoke(app, ["ingest", "nope", "x"])
    assert result.exit_code == 2 and "unknown source 'nope'; known: ev2, eeckg, aser" in result.stderr
    result = runner.invoke(app, ["ingest", "ev2"])
    assert result.exit_code == 2 and "Usage" in result.stdout


def test_library_load_refuses_an_option_of_another_source(embedded_store, samples_dir):
    from eventkg.ingest.errors import LoaderError
    from eventkg.ingest.registry import ingest_source

    with pytest.raises(LoaderError, match="source 'clomo' does not take concepts "):
        ingest_source(embedded_store, "clomo", samples_dir / "clomo", concepts="x.db")
    assert ingest_source(embedded_store, "clomo", samples_dir / "clomo", limit=3).rows == 3
