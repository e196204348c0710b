"""``eventkg paths``: the paths between two events of the store, each with its induced relation.

Thin skin over :func:`eventkg.queries.lookup.paths_between`.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from eventkg.cli.shared import console, state


def paths_cmd(
    ctx: typer.Context,
    event_a: Annotated[str, typer.Argument(help="Text (or id) of the first event, e.g. learn.")],
    event_b: Annotated[str, typer.Argument(help="Text (or id) of the second event.")],
    max_len: Annotated[int, typer.Option("--max-len", min=1, max=6, help="Longest path, in edges.")] = 4,
    level: Annotated[str, typer.Option("--level", help="Event level: schema or instance.")] = "schema",
    all_paths: Annotated[bool, typer.Option("--all", help="Also list paths that induce nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of paths.")] = False,
) -> None:
    """List the paths of up to --max-len edges between two events, each with its induced relation.

    Edges are read both ways (a stored edge walked backwards reads as its inverse). Only the
    neighbourhood of the two events is fetched, not the whole graph
    (eventkg.queries.lookup.paths_between(store, A, B, max_len=...)).

    Example:  eventkg paths learn pass_exam --max-len 3 --json
    """
    from eventkg.queries.lookup import paths_between

    with state(ctx).open(read_only=True) as store:
        named = paths_between(store, event_a, event_b, max_len=max_len, level=level, inducing_only=not all_paths)
    if as_json:
        print(json.dumps(named, indent=2, ensure_ascii=False))
        return
    if not named:
        console.print(f"no path of at most {max_len} edges between {event_a!r} and {event_b!r}", markup=False)
        return
    table = Table(title=f"paths {event_a} -> {event_b}")
    table.add_column("len", justify="right")
    table.add_column("path")
    table.add_column("induced")
    for p in named:
        steps = p["nodes"][0] + "".join(f" -{r}-> {n}" for r, n in zip(p["relations"], p["nodes"][1:], strict=True))
        table.add_row(str(p["length"]), steps, p["induced"] or "none")
    console.print(table)



def register(app: typer.Typer) -> None:
    """Add ``paths`` to the ``eventkg`` app."""
    app.command("paths")(paths_cmd)
