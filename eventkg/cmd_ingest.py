"""``eventkg ingest``: one command per source, each a thin skin over ``ingest.<source>.load``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from eventkg.errors import EXIT_CODE, EventKGError
from eventkg.ingest.pipeline import IngestReport
from eventkg.ingest.registry import LOADERS

console = Console()
err_console = Console(stderr=True)

ingest_app = typer.Typer(
    help=(
        "Load a source into the store: parse -> validate -> normalise -> batch -> store.\n\n"
        "Example:  eventkg --store ./kg.lbug ingest ev2 ingest/samples/ev2 --on-error skip --rejects bad.jsonl"
    ),
    invoke_without_command=True,
    no_args_is_help=False,
)

OnError = Annotated[str, typer.Option("--on-error", help="fail: stop at the first bad row (default); skip: keep going.")]
Rejects = Annotated[Path | None, typer.Option("--rejects", help="Append bad rows here as JSON lines (file, line, reason, raw).")]
Limit = Annotated[int | None, typer.Option("--limit", help="Stop after N source rows.")]
BatchSize = Annotated[int | None, typer.Option("--batch-size", help="Rows per atomic store write (default: the loader's own).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
PathArg = Annotated[Path, typer.Argument(help="A file of the source, or a folder of its files.")]


@ingest_app.callback()
def ingest_callback(
    ctx: typer.Context,
    list_: Annotated[bool, typer.Option("--list", help="List the registered loaders with their formats.")] = False,
    as_json: AsJson = False,
) -> None:
    """Load EV², EECKG, ASER, AbsPyramid or CLoMo files into the one typed graph.

    Example:  eventkg ingest --list
    """
    if list_:
        if as_json:
            print(json.dumps([vars(i) for i in LOADERS.values()], indent=2))
        else:
            table = Table(title="eventkg loaders")
            for col in ("source", "title", "formats", "from", "size"):
                table.add_column(col)
            for i in LOADERS.values():
                table.add_row(i.name, i.title, i.formats, i.citation, i.size)
            console.print(table)
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        console.print(ctx.get_help())
        raise typer.Exit(0)


def _run(ctx: typer.Context, source: str, path: Path, options: dict[str, Any], as_json: bool) -> None:
    """Open the store, run the loader with a progress bar, print the summary; errors are one line."""
    from eventkg.cli import state

    loader = LOADERS[source].load_module()
    try:
        with state(ctx).open() as store:
            with Progress(
                SpinnerColumn(), TextColumn(f"ingest {source}"), BarColumn(),
                TextColumn("{task.fields[rows]:,} rows, {task.fields[rejected]:,} rejected {task.fields[stage]}"),
                TimeElapsedColumn(), console=err_console, transient=True, disable=as_json,
            ) as bar:
                task = bar.add_task(source, total=None, rows=0, rejected=0, stage="")

                def progress(rows: int, rejected: int) -> None:
                    bar.update(task, rows=rows, rejected=rejected)

                store.on_bulk_write = lambda message: bar.update(task, stage=f"- {message}" if message else "")
                report = loader.load(store, path, progress=progress, **options)
    except EventKGError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_CODE) from None
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print_report(report)


def print_report(report: IngestReport) -> None:
    """The end-of-ingest summary: rows, rejects, nodes/edges per type, seconds."""
    table = Table(title=f"ingest {report.source}: {len(report.files)} file(s), {report.seconds:.2f} s")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("written", justify="right")
    table.add_column("created", justify="right")
    table.add_row("rows", "read", f"{report.rows:,}", "")
    table.add_row("rows", "rejected", f"{report.rejected:,}", "")
    for kind, counts in (("nodes", report.nodes), ("edges", report.edges)):
        for name, n in sorted(counts.items()):
            table.add_row(kind, name, f"{n:,}", f"{report.created.get(name, 0):,}")
    console.print(table)
    if report.rejected and report.rejects_file:
        console.print(f"rejects appended to {report.rejects_file}")
    if report.limited:
        console.print("stopped early at --limit")
    if report.extra.get("instances_without_text"):
        console.print(
            f"{report.extra['instances_without_text']:,} instance event(s) named by a question without text "
            "(no entry in 'instances', or an empty one): stored with text '' and linked as the question says"
        )
    rate = report.rows / report.seconds if report.seconds else 0.0
    console.print(f"{report.rows:,} rows in {report.seconds:.2f} s ({rate:,.0f} rows/s)")


def _common(on_error: str, rejects: Path | None, limit: int | None, batch_size: int | None) -> dict[str, Any]:
    opts: dict[str, Any] = {"on_error": on_error, "rejects": rejects, "limit": limit}
    if batch_size is not None:  # otherwise each loader's measured default applies
        opts["batch_size"] = batch_size
    return opts


@ingest_app.command("ev2")
def ingest_ev2(
    ctx: typer.Context, path: PathArg, on_error: OnError = "fail", rejects: Rejects = None, limit: Limit = None,
    batch_size: BatchSize = None, as_json: AsJson = False,
) -> None:
    """EV²: S_CEC/S_CRR/I_CEC/I_CRR .jsonl and clustering.json.

    Example:  eventkg ingest ev2 ingest/samples/ev2
    """
    _run(ctx, "ev2", path, _common(on_error, rejects, limit, batch_size), as_json)


@ingest_app.command("eeckg")
def ingest_eeckg(
    ctx: typer.Context, path: PathArg, on_error: OnError = "fail", rejects: Rejects = None, limit: Limit = None,
    batch_size: BatchSize = None, as_json: AsJson = False,
) -> None:
    """EECKG: ConceptNet assertion CSV or head,relation,tail TSV/CSV.

    Example:  eventkg ingest eeckg ingest/samples/eeckg --on-error skip --rejects rejects.jsonl
    """
    _run(ctx, "eeckg", path, _common(on_error, rejects, limit, batch_size), as_json)


@ingest_app.command("aser")
def ingest_aser(
    ctx: typer.Context, path: PathArg, on_error: OnError = "fail", rejects: Rejects = None, limit: Limit = None,
    batch_size: BatchSize = None, as_json: AsJson = False,
    map_events: Annotated[bool, typer.Option("--map-events", help="Also add CAUSES/BEFORE from Result/Reason/Precedence/Succession.")] = False,
    concepts: Annotated[Path | None, typer.Option("--concepts", help="An ASER concept.db to add Concept nodes + ABSTRACTS_TO.")] = None,
) -> None:
    """ASER: a KG.db SQLite file, streamed.

    Example:  eventkg ingest aser ingest/samples/aser/KG.db --map-events --concepts ingest/samples/aser/concept.db
    """
    opts = _common(on_error, rejects, limit, batch_size) | {"map_events": map_events, "concepts": concepts}
    _run(ctx, "aser", path, opts, as_json)


@ingest_app.command("abspyramid")
def ingest_abspyramid(
    ctx: typer.Context, path: PathArg, on_error: OnError = "fail", rejects: Rejects = None, limit: Limit = None,
    batch_size: BatchSize = None, as_json: AsJson = False,
) -> None:
    """AbsPyramid: Detection/Generation JSON-lines (train/valid/test.json).

    Example:  eventkg ingest abspyramid ingest/samples/abspyramid
    """
    _run(ctx, "abspyramid", path, _common(on_error, rejects, limit, batch_size), as_json)


@ingest_app.command("clomo")
def ingest_clomo(
    ctx: typer.Context, path: PathArg, on_error: OnError = "fail", rejects: Rejects = None, limit: Limit = None,
    batch_size: BatchSize = None, as_json: AsJson = False,
) -> None:
    """CLoMo: zero_/few_/cot_<split>.json.

    Example:  eventkg ingest clomo ingest/samples/clomo
    """
    _run(ctx, "clomo", path, _common(on_error, rejects, limit, batch_size), as_json)


def register(app: typer.Typer) -> None:
    """Add the ``ingest`` command group to the eventkg CLI."""
    app.add_typer(ingest_app, name="ingest")
