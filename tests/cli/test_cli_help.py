"""Every command teaches: --help works, has text and an ``Example:`` line (sqlite-utils' habit)."""

from __future__ import annotations

import re

import typer.main
from typer.testing import CliRunner

from eventkg.cli.app import app

EXAMPLE = re.compile(r"^\s*Example:\s+\S*eventkg\b", flags=re.M)


def walk(command, path: tuple[str, ...] = ()):
    """Every (path, command) under ``command``: the root, groups, their commands."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, (*path, name))


def test_every_command_and_group_has_help_with_an_example():
    runner = CliRunner()
    seen = []
    for path, command in walk(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], terminal_width=250)
        assert result.exit_code == 0, (path, result.output)
        assert (command.help or "").strip(), f"eventkg {' '.join(path)} has no help text"
        assert EXAMPLE.search(result.output), f"eventkg {' '.join(path)} --help has no 'Example:' line"
        seen.append(" ".join(path))
    for expected in ("stats", "cypher", "ingest", "induce", "paths", "questions", "negatives", "subgraph", "eval",
                     "export", "demo", "saved", "browser style"):
        assert expected in seen, expected


def test_example_check_fails_without_an_example():
    assert not EXAMPLE.search("Usage: eventkg thing\n\n Do a thing.\n\n Options: --x")
    assert EXAMPLE.search(" Do a thing.\n\n Example:  eventkg thing --x 1")
