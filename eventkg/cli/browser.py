"""``eventkg saved`` and ``eventkg browser style``: the shipped exploration queries and Browser style.

Thin skins over :mod:`eventkg.graphstore.saved_cypher`: ``eventkg saved`` lists the queries,
runs one with its sample defaults (``--param`` overrides them), or ``--show``s the text
to paste into Neo4j Browser; ``eventkg browser style`` prints the GraSS file's path or text.
"""

from __future__ import annotations

import re
from typing import Annotated

import typer
from rich.table import Table

from eventkg.cli.output import parse_params, print_rows
from eventkg.cli.shared import console, err_console, state
from eventkg.graphstore.saved_cypher import (
    GRAPH_COLUMN,
    SAVED_FILE,
    get_saved_query,
    load_saved_queries,
    run_saved_query,
)

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


def saved_cmd(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Saved query to run; omit to list them.")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="Override a parameter: NAME=VALUE.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of row objects.")] = False,
    show: Annotated[bool, typer.Option("--show", help="Print the :params line and Cypher for Neo4j Browser.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many rows (per part), strongest first; the default is the query's.")] = None,
) -> None:
    """List the shipped exploration queries, or run one (defaults fit the project's samples).

    Each query returns at most --limit rows (per part: causes and effects, each hop), strongest
    or most frequent first, and says on stderr when it cut.

    Example:  eventkg --store neo4j://localhost:7687 saved paths-between -p head=cram -p "tail=fail exam"
    """
    if name is None:
        table = Table(title="saved queries (graphstore/saved.cypher)")
        for col in ("name", "description", "params", "backends"):
            table.add_column(col)
        for q in load_saved_queries().values():
            backends = "neo4j only: " + q.neo4j_only if q.neo4j_only else "neo4j, ladybug"
            table.add_row(q.name, q.description, ", ".join(f"{k}={v}" for k, v in q.params.items()), backends)
        console.print(table)
        return
    overrides = parse_params(param or [])
    if limit is not None:
        overrides["limit"] = limit
    if show:
        print(get_saved_query(name, backend="neo4j").browser_text(overrides))
        return
    with state(ctx).open(read_only=True) as store:
        result = run_saved_query(store, name, overrides, graph=as_json)
    print_rows(console, result.rows, as_json, hide=(GRAPH_COLUMN,))
    if result.cut:
        err_console.print(result.cut_message(), highlight=False, soft_wrap=True)


@browser_app.command("style")
def style_cmd(
    path_only: Annotated[bool, typer.Option("--path", help="Print only the file's path.")] = False,
) -> None:
    """Print the Neo4j Browser style (GraSS): in Browser run :style and drop this file on it.

    Example:  eventkg browser style --path
    """
    print(STYLE_FILE if path_only else STYLE_FILE.read_text(encoding="utf-8"), end="\n" if path_only else "")


def register(app: typer.Typer) -> None:
    """Add ``saved`` and ``browser`` to the ``eventkg`` app."""
    app.command("saved")(saved_cmd)
    app.add_typer(browser_app, name="browser")
