"""``eventkg ingest SOURCE PATH``: one command for every loader of :data:`eventkg.ingest.registry.LOADERS`.

A thin skin over :func:`eventkg.ingest.registry.ingest_source`: this module parses options, draws the
progress bar and prints the summary. Each registry entry declares its own options
(:class:`~eventkg.ingest.registry.LoaderOption`); they are added to the command's signature
here, under a help panel naming their source, so ``eventkg ingest --help`` teaches them and
the library refuses them (one line) for a source that does not take them.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from eventkg.cli.shared import Bars, console, state
from eventkg.errors import EXIT_CODE, EventKGError
from eventkg.ingest.registry import LOADERS, loader_options, option_flag, option_owners

SourceArg = Annotated[str | None, typer.Argument(metavar="SOURCE", help=f"The source: {', '.join(LOADERS)} (see --list).", show_default=False)]
PathArg = Annotated[Path | None, typer.Argument(metavar="PATH", help="A file of the source, or a folder of its files.", show_default=False)]
ListOpt = Annotated[bool, typer.Option("--list", help="List the registered loaders with their formats and options.")]
OnError = Annotated[str, typer.Option("--on-error", help="fail: stop at the first bad row (default); skip: keep going.")]
Rejects = Annotated[Path | None, typer.Option("--rejects", help="Append bad rows here as JSON lines (file, line, reason, raw).")]
Limit = Annotated[int | None, typer.Option("--limit", help="Stop after N source rows.")]
BatchSize = Annotated[int | None, typer.Option("--batch-size", help=(
    "Typed rows per store write (default: the loader's own, measured best; leave it unless memory is short). "
    "It trades memory for speed and store size: each write has a fixed cost, so small batches are slow "
    "and each write keeps some space in the store; large ones hold more rows in memory at once "
    "(figures: docs/performance.md)."))]
AsJson = Annotated[bool, typer.Option("--json", help="Print the report (or --list) as JSON.")]


def ingest_command(
    ctx: typer.Context, source: SourceArg = None, path: PathArg = None, list_: ListOpt = False,
    on_error: OnError = "fail", rejects: Rejects = None, limit: Limit = None, batch_size: BatchSize = None,
    as_json: AsJson = False, **source_options: Any,
) -> None:
    """Load a source into the store: parse -> validate -> normalise -> batch -> store."""
    if list_:
        print_loaders(as_json)
        return
    if source is None or path is None:
        console.print(ctx.get_help())
        raise typer.Exit(0 if source is None else EXIT_CODE)
    from eventkg.ingest.checks import check_disk_room
    from eventkg.ingest.registry import check_options, get_loader, ingest_source

    options: dict[str, Any] = {"on_error": on_error, "rejects": rejects, "limit": limit}
    if batch_size is not None:  # otherwise each loader's measured default applies
        options["batch_size"] = batch_size
    options |= {k: v for k, v in source_options.items() if ctx.get_parameter_source(k).name != "DEFAULT"}
    try:
        check_options(get_loader(source), options)  # refused before the store is opened (or created)
        check_paths(state(ctx).store_url, rejects)
        check_disk_room(state(ctx).store_url, path, source, limit=limit)  # before the store is opened (or created)
        with state(ctx).open() as store, IngestProgress(source, disabled=as_json) as bar:
            store.on_bulk_write = bar.stage
            report = ingest_source(store, source, path, progress=bar.progress, **options)
    except EventKGError as exc:  # one line even under typer's test runner (cli.main is not in the way)
        typer.echo(f"error: {with_flag(exc)}", err=True)
        raise typer.Exit(EXIT_CODE) from None
    except OSError as exc:  # a file system refusal met past the checks: still one line
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_CODE) from None
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print_report(report)


def check_paths(store_url: str, rejects: Path | None) -> None:
    """The paths this ingest writes to, checked before the store is opened: the rejects file and,
    for an embedded store, its file and folder (one-line errors, nothing written)."""
    from eventkg.graphstore.open import NEO4J_SCHEMES
    from eventkg.ingest.checks import check_rejects_path, check_store_folder

    check_rejects_path(rejects)
    if not store_url.startswith(NEO4J_SCHEMES):
        check_store_folder(store_url.removeprefix("ladybug://"))


def with_flag(exc: EventKGError) -> str:
    """The library's one-line message, and the command-line option it concerns when it names one
    (the library names its keyword, ``on_error``; the user typed ``--on-error``)."""
    option = getattr(exc, "option", None)
    return f"{exc} ({option_flag(option)})" if option else str(exc)


class IngestProgress:
    """The bar of one ingest on :class:`~eventkg.cli.shared.Bars`: rows read, rows rejected, the store's
    bulk-write stage (a stage starting ``note: `` is kept above the bar instead)."""

    def __init__(self, source: str, *, disabled: bool) -> None:
        self._source = source
        self._bars = Bars(SpinnerColumn(), TextColumn(f"ingest {source}"), BarColumn(),
                          TextColumn("{task.fields[rows]:,} rows, {task.fields[rejected]:,} rejected {task.fields[stage]}"),
                          TimeElapsedColumn(), disable=disabled)

    def __enter__(self) -> IngestProgress:
        self._bars.__enter__()
        self._bars.update(self._source, rows=0, rejected=0, stage="")
        return self

    def __exit__(self, *exc: object) -> None:
        self._bars.__exit__(*exc)

    def progress(self, what: str, count: int, _total: int | None) -> None:
        """The ingest's :data:`~eventkg.progress.Progress`: ``rows`` read or ``rejected`` so far."""
        self._bars.update(self._source, **{what: count})

    def stage(self, message: str | None) -> None:
        if message and message.startswith("note: "):
            self._bars.note(message)
            return
        self._bars.update(self._source, stage=f"- {message}" if message else "")


def print_loaders(as_json: bool) -> None:
    """``--list``: the registry as a table (or JSON), each loader with its own options."""
    if as_json:
        print(json.dumps([info.to_dict() for info in LOADERS.values()], indent=2))
        return
    table = Table(title="eventkg loaders")
    for col in ("source", "title", "formats", "from", "size", "options"):
        table.add_column(col)
    for i in LOADERS.values():
        table.add_row(i.name, i.title, i.formats, i.citation, i.size, " ".join(o.flag for o in i.options))
    console.print(table)


def print_report(report: Any) -> None:
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
    if report.repeated:
        console.print(f"{report.repeated:,} row(s) repeat an earlier row's key with the same content: stored once")
    if report.left_out:
        console.print(f"left out (--partial): {', '.join(report.left_out)}")
    if report.extra.get("instances_without_text"):
        console.print(
            f"{report.extra['instances_without_text']:,} instance event(s) named by a question without text "
            "(no entry in 'instances', or an empty one): stored with text '' and linked as the question says"
        )
    rate = report.rows / report.seconds if report.seconds else 0.0
    console.print(f"{report.rows:,} rows in {report.seconds:.2f} s ({rate:,.0f} rows/s)")


def _help_text() -> str:
    """The command's help: what it does, then one example per registered source."""
    examples = "\n\n".join(f"Example:  {info.example}" for info in LOADERS.values() if info.example)
    return (f"{inspect.getdoc(ingest_command)}\n\nSources: {', '.join(LOADERS)} (eventkg ingest --list).\n\n"
            f"{examples}\n\nExample:  eventkg --store ./kg.lbug ingest ev2 ingest/samples/ev2 "
            "--on-error skip --rejects bad.jsonl")


def _with_source_options(func: Any) -> Any:
    """``func`` with one keyword option per registry-declared loader option (typer reads ``__signature__``)."""
    params = [p for p in inspect.signature(func, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
    for name, opt in loader_options().items():
        panel = f"Options of {', '.join(option_owners(name))} only"
        if opt.type is bool:
            hint: Any = Annotated[bool, typer.Option(opt.flag, help=opt.help, rich_help_panel=panel)]
            default: Any = False
        else:
            hint = Annotated[opt.type | None, typer.Option(opt.flag, help=opt.help, rich_help_panel=panel)]
            default = None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
    func.__signature__ = inspect.Signature(params)
    return func


def register(app: typer.Typer) -> None:
    """Add the ``ingest`` command to the eventkg CLI."""
    app.command("ingest", help=_help_text())(_with_source_options(ingest_command))
