"""What every ``eventkg`` command shares: the invocation's state, the two consoles, one progress display.

Owns :class:`State` (the global options of one invocation and the store they open), the
``console`` (stdout: results) and ``err_console`` (stderr: notices, warnings, bars) and
:class:`Bars`, the one adapter from the library's progress callbacks to rich progress bars.
Command modules import these at module level; this module imports no command module and
nothing of :mod:`eventkg.cli.app`, so the CLI's imports stay a tree the architecture test
can see. Invariant: results go to stdout, everything else to stderr, so ``--json`` output
pipes cleanly.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from eventkg.errors import UsageError
from eventkg.graphstore import open_store, resolve_store_url
from eventkg.graphstore.errors import IncompleteStoreError

__all__ = ["EMBEDDING", "Bars", "OldModelOpt", "State", "console", "deprecated", "err_console", "index_build_bars",
           "notice", "renamed_option", "state"]

console = Console()
err_console = Console(stderr=True)


def notice(message: str) -> None:
    """A library notice (a build starting, its size and ETA) as one plain line on stderr."""
    err_console.print(message, highlight=False, markup=False)


def deprecated(old: str, new: str) -> None:
    """The one-line notice on stderr of a spelling kept for one release: ``old`` works, ``new`` is its name."""
    err_console.print(f"deprecated: {old} is now {new}; the old spelling goes in the next release",
                      highlight=False, markup=False, soft_wrap=True)


def renamed_option(value: Any, old_value: Any, new: str, old: str) -> Any:
    """The value of option ``new`` when it was given under its deprecated name ``old`` (with the notice).

    Raises:
        UsageError: Both spellings were given.
    """
    if old_value is None:
        return value
    if value is not None:
        raise UsageError(f"give {new} only ({old} is its deprecated name)")
    deprecated(old, new)
    return old_value


#: ``--model``, the old spelling of ``--embed-model`` in the commands that embed (questions, negatives, subgraph,
#: audit, export): accepted for one release with the deprecation line, hidden from --help
OldModelOpt = Annotated[str | None, typer.Option("--model", hidden=True, help="Deprecated: --embed-model.")]


class State:
    """Per-invocation settings shared by every command (set by the global callback)."""

    def __init__(self, store: str | None, allow_incomplete: bool = False) -> None:
        self.store_url = resolve_store_url(store)
        self.allow_incomplete = allow_incomplete

    def open(self, *, read_only: bool = False, complete: bool = False):
        """The store; one line on stderr when an ingest into it began and did not complete, and a
        refusal then when the command derives results from the graph (``complete``) unless
        ``--allow-incomplete`` was given."""
        store = open_store(self.store_url, read_only=read_only)
        unfinished = store.unfinished_ingests()
        running = store.ingest_running() if unfinished else None
        if running or unfinished:
            if running:  # its mark is of an ingest still writing, not of one that stopped
                what = f"is being written by an ingest now ({running}): its graph is not complete until it ends"
                refuse, warn = "Wait for it, or pass --allow-incomplete to read it as it stands", ""
            else:
                what = f"holds an unfinished ingest ({'; '.join(unfinished)}): its graph may be partial"
                refuse = "Run that ingest again to complete it, or pass --allow-incomplete"
                warn = "; run that ingest again to complete it"
            if complete and not self.allow_incomplete:
                store.close()
                raise IncompleteStoreError(f"store {self.store_url} {what}. {refuse}")
            err_console.print(f"warning: store {self.store_url} {what}{warn}", markup=False, soft_wrap=True)
        return store


def state(ctx: typer.Context) -> State:
    """The :class:`State` of this invocation (set by the global callback in :mod:`eventkg.cli.app`)."""
    return ctx.find_root().obj


#: the columns of a bar unless a command asks for others
DEFAULT_COLUMNS: tuple[ProgressColumn, ...] = (
    TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


class Bars:
    """The CLI's one progress display: rich bars on stderr, one per named step.

    Library callbacks map onto :meth:`update` (``(name, done, total)``) or :meth:`advance`
    (``k`` more done). A new description for a step restarts its clock (the next model of a
    suite); :meth:`finish` marks every bar done (a step is over). With ``lazy`` nothing is
    drawn until the first update (index builds: silent unless a build happens); ``rate`` adds
    ``{task.fields[rate]}`` as "N <rate>/s".
    """

    def __init__(self, *columns: ProgressColumn | str, transient: bool = True, disable: bool = False,
                 lazy: bool = False, rate: str | None = None) -> None:
        self._bar = Progress(*(columns or DEFAULT_COLUMNS), console=err_console, transient=transient, disable=disable)
        self._jobs: dict[str, TaskID] = {}
        self._lazy = lazy
        self._started = False
        self._rate = rate

    def __enter__(self) -> Bars:
        if not self._lazy:
            self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._started:
            self._bar.stop()

    def _start(self) -> None:
        if not self._started:
            self._bar.start()
            self._started = True

    def update(self, name: str, done: int | None = None, total: int | None = None, *,
               description: str | None = None, **fields: Any) -> None:
        """Bar ``name`` at ``done`` of ``total`` (``None``: unknown); extra ``fields`` for custom columns."""
        self._start()
        if self._rate is not None:
            fields.setdefault("rate", "")
        job = self._jobs.get(name)
        if job is None:
            self._jobs[name] = self._bar.add_task(description or name, total=total, completed=done or 0, **fields)
            return
        task = self._task(job)
        if description is not None and task.description != description:
            self._bar.reset(job, description=description, total=total)
        if self._rate is not None and task.speed:
            fields["rate"] = f"{task.speed:,.0f} {self._rate}/s"
        self._bar.update(job, completed=done, total=total, **fields)

    def advance(self, name: str, k: int = 1) -> None:
        """``k`` more done on bar ``name`` (made by an earlier :meth:`update`)."""
        self._bar.advance(self._jobs[name], k)

    def finish(self) -> None:
        """Every bar shown as complete and forgotten: the next update starts a new line."""
        for job in self._jobs.values():
            done = self._task(job).completed or 1
            self._bar.update(job, total=done, completed=done)
        self._jobs.clear()

    def note(self, message: str) -> None:
        """A line kept above the bars."""
        self._bar.console.print(message, markup=False, highlight=False)

    def _task(self, job: TaskID):
        return next(t for t in self._bar.tasks if t.id == job)


#: the label of a vector-index build's bar (``negatives``, ``subgraph``, ``export --text``)
EMBEDDING = "embedding events"


def index_build_bars() -> Bars:
    """The bar of a vector-index build, with rate and time left (silent unless a build happens)."""
    return Bars(TextColumn(EMBEDDING), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                lazy=True, rate="texts")
