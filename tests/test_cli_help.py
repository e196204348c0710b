"""Every command teaches: --help works and shows an example (sqlite-utils' habit)."""

from __future__ import annotations

import typer.main
from typer.testing import CliRunner

from eventkg.cli import app


def walk(command, path: tuple[str, ...] = ()):
    yield path, command
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from walk(sub, (*path, name))


def test_every_command_has_help_with_an_example():
    root = typer.main.get_command(app)
    runner = CliRunner()
    seen = []
    for path, command in walk(root):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        if not hasattr(command, "commands") or not path:
            assert "Example" in result.output or "example" in result.output, f"eventkg {' '.join(path)} --help has no example"
        seen.append(" ".join(path))
    for expected in ("stats", "cypher", "ingest", "induce", "paths", "questions", "negatives", "subgraph", "eval", "export"):
        assert any(s.split(" ")[0] == expected for s in seen), expected
