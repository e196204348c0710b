"""The CLI reference page, generated from ``eventkg --help`` and every command's ``--help``.

An mkdocs hook (``hooks:`` in mkdocs.yml): :func:`on_files` adds ``reference/cli.md`` to the site
at build time, so the page is never written by hand or checked in and cannot drift from the
commands. Run as a script it prints the page (or writes it to a file) to read without a build.

    python scripts/gen_cli_docs.py              # the page on stdout
    python scripts/gen_cli_docs.py -o cli.md    # ... or into a file
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click
import typer.main
from typer.testing import CliRunner

from eventkg.cli.app import app

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

PAGE = "reference/cli.md"  # where the page goes in the site
WIDTH = 100  # columns the help is laid out in (fixed: the page must not depend on the terminal)
HEADER = """# CLI reference

Generated from `--help` by `scripts/gen_cli_docs.py` at each docs build. Every command also takes the global options of `eventkg` itself
(`--store`, `--allow-incomplete`), given before the command name.
"""


def commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every (path, command) under ``command``: the root, then groups and their commands, sorted by name."""
    yield path, command
    for name in sorted(getattr(command, "commands", {})):
        yield from commands(command.commands[name], (*path, name))


def help_text(path: tuple[str, ...]) -> str:
    """``eventkg PATH --help`` as a terminal of :data:`WIDTH` columns without colour shows it."""
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=WIDTH,
                                env={"COLUMNS": str(WIDTH), "TERMINAL_WIDTH": str(WIDTH), "NO_COLOR": "1"})
    if result.exit_code != 0:
        raise SystemExit(f"eventkg {' '.join(path)} --help failed: {result.output}")
    return "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())


def render() -> str:
    """The whole page."""
    parts = [HEADER]
    for path, _ in commands(typer.main.get_command(app)):
        name = " ".join(("eventkg", *path))
        parts.append(f"## {name}\n\n```text\n{help_text(path)}\n```\n")
    return "\n".join(parts)


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """mkdocs hook: add the generated page to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, help="write the page here instead of stdout")
    args = ap.parse_args(argv)
    if args.out:
        args.out.write_text(render(), encoding="utf-8")
    else:
        print(render(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
