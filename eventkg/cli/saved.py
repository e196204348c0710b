"""``eventkg saved``: the shipped exploration queries (``graphstore/saved.cypher``).

Thin skin over :mod:`eventkg.graphstore.saved_cypher`: lists the queries, runs one with its
sample defaults (``--param`` overrides them), or ``--show``s the text to paste into Neo4j Browser.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from eventkg.cli.output import parse_params, print_rows
from eventkg.cli.shared import console, err_console, state
from eventkg.graphstore.saved_cypher import GRAPH_COLUMN, get_saved_query, load_saved_queries, run_saved_query


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



def register(app: typer.Typer) -> None:
    """Add ``saved`` to the ``eventkg`` app."""
    app.command("saved")(saved_cmd)
