"""The ``eventkg`` typer app: its global options, the commands ``stats`` and ``cypher``, error handling.

Each command group lives in its own ``eventkg/cli/<group>.py`` module exposing ``register(app)``;
the state, consoles and progress bars they share are :mod:`eventkg.cli.shared`'s. Invariant: an
:class:`~eventkg.errors.EventKGError` reaches the user as one line on stderr and exit code
:data:`~eventkg.errors.EXIT_CODE`, never as a traceback.
"""

from __future__ import annotations

import errno
import importlib
import json
import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from eventkg.cli.output import parse_params, print_error, print_rows
from eventkg.cli.shared import State, console, deprecated, err_console, state
from eventkg.errors import EXIT_CODE, CommandModuleError, EventKGError, UsageError
from eventkg.graphstore.atomic import output_error
from eventkg.queries.stats import store_stats

__all__ = ["app", "main"]

app = typer.Typer(
    name="eventkg",
    help=(
        "eventkg — one typed graph for EV², EECKG, ASER, AbsPyramid and CLoMo.\n\n"
        "Example:  eventkg --store ./my.lbug ingest ev2 data/ev2  &&  eventkg stats"
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
#: the command modules, each named by the commands it holds and defining ``register(app)``; one
#: that fails to import stops the app with an ImportError naming it (see :func:`_register_commands`)
COMMAND_MODULES = (
    "eventkg.cli.ingest",
    "eventkg.cli.induce",
    "eventkg.cli.paths",
    "eventkg.cli.questions",
    "eventkg.cli.negatives",
    "eventkg.cli.subgraph",
    "eventkg.cli.eval",
    "eventkg.cli.export",
    "eventkg.cli.demo",
    "eventkg.cli.saved",
    "eventkg.cli.browser",
    "eventkg.cli.neo4j",
    "eventkg.cli.audit",
)


@app.callback()
def main_callback(
    ctx: typer.Context,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Store URL: a LadybugDB path (default ~/.local/share/eventkg/store.lbug) or neo4j://host:7687; "
            "unset, $EVENTKG_STORE (read by eventkg.settings, like every setting).",
        ),
    ] = None,
    allow_incomplete: Annotated[
        bool,
        typer.Option("--allow-incomplete", help="Let questions, eval and export read a store whose last ingest "
                     "did not complete (by default they refuse it; every command warns)."),
    ] = False,
) -> None:
    ctx.obj = State(store, allow_incomplete)


@app.command()
def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Count nodes per label and edges per type (eventkg.queries.stats.store_stats(store)).

    Example:  eventkg --store neo4j://localhost:7687 stats --json
    """
    with state(ctx).open(read_only=True) as store:
        counts = store_stats(store)
    if as_json:
        print(json.dumps(counts, indent=2))
        return
    table = Table(title=f"eventkg store {escape(state(ctx).store_url)}")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("count", justify="right")
    for kind in ("nodes", "edges"):
        for name, n in counts[kind].items():
            if n:
                table.add_row(kind, name, f"{n:,}")
    table.add_row("total", "nodes", f"{sum(counts['nodes'].values()):,}")
    table.add_row("total", "edges", f"{sum(counts['edges'].values()):,}")
    if counts["instances_without_text"]:
        table.add_row("events", "instances without text", f"{counts['instances_without_text']:,}")
    console.print(table)


@app.command()
def cypher(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="The Cypher query (read-only unless --write).")] = None,
    write: Annotated[bool, typer.Option("--write", help="Allow the query to change the graph.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of row objects.")] = False,
    saved: Annotated[str | None, typer.Option("--saved", hidden=True, help="Deprecated, goes in the next release: "
                                              "eventkg saved NAME.")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="Query parameter NAME=VALUE.")] = None,
) -> None:
    """Run Cypher against the store; refuses writes unless --write is given.

    The saved exploration queries are `eventkg saved NAME`; the hidden `--saved NAME` here is its deprecated spelling, kept for one release.

    Example:  eventkg cypher "MATCH (e:Event) RETURN e.text AS text LIMIT 5" --json
    """
    params = parse_params(param or [])
    if saved:
        from eventkg.cli.saved import saved_cmd

        deprecated("eventkg cypher --saved NAME", "eventkg saved NAME")
        saved_cmd(ctx, saved, param, as_json)  # the saved query's limit, ids and cut message
        return
    if not query:
        raise UsageError("give a QUERY or --saved NAME")
    with state(ctx).open(read_only=not write) as store:
        rows = store.query(query, params, write=write)
    print_rows(console, rows, as_json)


def _register_commands() -> None:
    """Import every command module and add its commands to :data:`app`.

    Raises:
        CommandModuleError: A module failed to import; the message names it and the cause.
    """
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            raise CommandModuleError(f"eventkg: command module {name} failed to import: "
                                     f"{type(exc).__name__}: {exc}", name=name) from exc
        module.register(app)


_register_commands()


def main() -> None:
    """Console-script entry point: an EventKGError becomes one line on stderr and exit code 2; so does
    a file system refusal that reached this far (a full disk, a read-only mount: the user's to fix)."""
    try:
        app()
    except EventKGError as exc:
        print_error(str(exc), err_console)
        sys.exit(EXIT_CODE)
    except OSError as exc:
        if exc.errno not in USER_ERRNOS:
            raise
        print_error(str(output_error(exc, exc.filename or ".", None if exc.filename else "cannot write")), err_console)
        sys.exit(EXIT_CODE)
    except KeyboardInterrupt:
        err_console.print("interrupted", markup=False)
        sys.exit(130)


#: file system errors that are the user's to fix, printed as one line by :func:`main`
USER_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})

