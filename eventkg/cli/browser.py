"""``eventkg browser style``: the Neo4j Browser style (GraSS) shipped beside the saved queries.

Prints the GraSS file's path or text; :func:`parse_grass` reads one back (to check it). The saved
exploration queries themselves are ``eventkg saved`` (:mod:`eventkg.cli.saved`).
"""

from __future__ import annotations

import re
from typing import Annotated

import typer

from eventkg.graphstore.saved_cypher import SAVED_FILE

STYLE_FILE = SAVED_FILE.with_name("browser_style.grass")
browser_app = typer.Typer(help="Neo4j Browser helpers (see docs/browser.md).\n\nExample:  eventkg browser style > eventkg.grass", no_args_is_help=True)

_DECL = re.compile(r"\s*([\w-]+)\s*:\s*(\"[^\"]*\"|[^;]*);?")


def parse_grass(text: str) -> dict[str, dict[str, str]]:
    """GraSS -> ``{selector: {property: value}}`` (quotes removed), to check a style file."""
    rules: dict[str, dict[str, str]] = {}
    selector, body, in_body, in_string = "", "", False, False
    for ch in text:  # braces inside quoted captions ("{text}") are not rule delimiters
        if ch == '"':
            in_string = not in_string
        if ch == "{" and not in_string:
            in_body = True
        elif ch == "}" and not in_string:
            props = {}
            for decl in _DECL.findall(body):
                props[decl[0]] = decl[1].strip().strip('"')
            rules[selector.strip()] = props
            selector, body, in_body = "", "", False
        elif in_body:
            body += ch
        else:
            selector += ch
    return rules


@browser_app.command("style")
def style_cmd(
    path_only: Annotated[bool, typer.Option("--path", help="Print only the file's path.")] = False,
) -> None:
    """Print the Neo4j Browser style (GraSS): in Browser run :style and drop this file on it.

    Example:  eventkg browser style --path
    """
    print(STYLE_FILE if path_only else STYLE_FILE.read_text(encoding="utf-8"), end="\n" if path_only else "")


def register(app: typer.Typer) -> None:
    """Add the ``browser`` command group to the ``eventkg`` app."""
    app.add_typer(browser_app, name="browser")
