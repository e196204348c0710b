"""``eventkg negatives`` and ``eventkg subgraph``: the embedding-backed queries.

Both are thin skins over :func:`eventkg.queries.negatives.for_question.negatives_for` and
:func:`eventkg.queries.retrieve.retrieve`; the FAISS index they share is built on first use and
reused afterwards (see :mod:`eventkg.queries.vectors.index`); each event is embedded once per model,
whichever command and level asked first (the other reuses its vectors). A first build says on stderr how
many events it will embed and its ETA, shows a progress bar with rate and time left, and
saves its work in chunks: interrupt it and run the command again to resume. ``--device``
picks the encoder's device (``auto``: CUDA when torch sees a GPU), ``--index-kind`` the
FAISS index (``$EVENTKG_INDEX``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from eventkg.errors import EventKGError

console = Console()
err_console = Console(stderr=True)


def _notice(message: str) -> None:
    err_console.print(message, highlight=False)


@contextmanager
def _progress(label: str) -> Iterator:
    """A progress callback for index builds (silent unless a build happens)."""
    bar = Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=err_console, transient=True,
    )
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:  # the first call carries what a resumed build already had
            bar.start()
            task = bar.add_task(label, total=total, completed=done, rate="")
            return
        speed = bar.tasks[0].speed
        bar.update(task, completed=done, rate=f"{speed:,.0f} texts/s" if speed else "")

    try:
        yield update
    finally:
        if task is not None:
            bar.stop()


def _check_level(level: str | None) -> None:
    from eventkg.queries.lookup import LEVELS

    if level is not None and level not in LEVELS:
        raise EventKGError(f"--level {level!r}: expected one of {', '.join(LEVELS)}")


def negatives(
    ctx: typer.Context,
    event: Annotated[str, typer.Argument(help="Text of the query event (e.g. 'learn').")],
    rel: Annotated[str, typer.Option("--rel", help="Asked relation: Causes, IsResult, Before, After, HasSubevent, IsSubevent.")],
    k: Annotated[int, typer.Option("-k", help="How many negatives.")] = 3,
    answer: Annotated[str | None, typer.Option("--answer", help="Text of the answer event (default: a direct --rel neighbour).")] = None,
    level: Annotated[str | None, typer.Option("--level", help="Event level: schema or instance (default: the answer's).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Embedding model folder or name (default $EVENTKG_EMBED_MODEL or bundled MiniLM).")] = None,
    clusters: Annotated[int | None, typer.Option("--clusters", help="Spread negatives over this many k-means clusters.")] = None,
    cap: Annotated[float, typer.Option("--similarity-cap", help="Reject candidates at least this similar to the answer.")] = 0.9,
    seed: Annotated[int | None, typer.Option("--seed", help="Draw among the best 4k candidates with this seed.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Drop the store's vector index and build it again.")] = False,
    device: Annotated[str, typer.Option("--device", help="Encoder device for an index build: auto (CUDA when present), cpu, cuda, mps.")] = "auto",
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, ivfpq, hnsw (default $EVENTKG_INDEX or auto).")] = None,
) -> None:
    """Hard negative events for a question: close to the answer, not linked to the event.

    Example:  eventkg negatives "learn" --rel Causes -k 3 --level schema --json
    """
    from eventkg.cli.app import state
    from eventkg.queries.negatives.for_question import negatives_for

    with state(ctx).open(read_only=True) as store, _progress("embedding events") as cb:
        out = negatives_for(store, event, rel, k=k, answer=answer, level=level, model=model, clusters=clusters,
                            similarity_cap=cap, seed=seed, rebuild=rebuild, device=device, index_kind=index_kind,
                            progress=cb, notice=_notice)
    if as_json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return
    asked, answered = out["event"]["text"], out["answer"]["text"]
    table = Table(title=f'negatives for "{asked}" {rel} "{answered}"')
    table.add_column("#", justify="right")
    table.add_column("negative")
    table.add_column("similarity to answer", justify="right")
    table.add_column("id")
    for n, neg in enumerate(out["negatives"], 1):
        table.add_row(str(n), neg["text"] or "", f"{neg['similarity']:.3f}", neg["id"])
    console.print(table)
    if len(out["negatives"]) < k:
        err_console.print(f"only {len(out['negatives'])} candidates passed the filters")


def subgraph(
    ctx: typer.Context,
    text: Annotated[str, typer.Option("--text", help="Text to retrieve events for.")],
    k: Annotated[int, typer.Option("-k", help="How many nearest events seed the subgraph.")] = 5,
    hops: Annotated[int, typer.Option("--hops", help="Neighbourhood radius around the seeds.")] = 2,
    fmt: Annotated[str, typer.Option("--format", help="prompt, json or triples.")] = "prompt",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="Trim the prompt to this many tokens, least relevant facts first.")] = None,
    style: Annotated[str, typer.Option("--style", help="Prompt style: direct or context.")] = "direct",
    question: Annotated[str | None, typer.Option("--question", help="Question appended after the knowledge.")] = None,
    rel: Annotated[list[str] | None, typer.Option("--rel", help="Relation types to follow (repeatable; default event relations + HAS_TYPE).")] = None,
    level: Annotated[str | None, typer.Option("--level", help="Seed only from schema or instance events.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Embedding model folder or name.")] = None,
    device: Annotated[str, typer.Option("--device", help="Encoder device: auto (CUDA when present), cpu, cuda, mps.")] = "auto",
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, ivfpq, hnsw (default $EVENTKG_INDEX or auto).")] = None,
) -> None:
    """Retrieve the typed subgraph around the events nearest to a text, as a prompt, JSON or triples.

    Example:  eventkg subgraph --text "PersonX studies all night" -k 5 --hops 2 --format prompt --max-tokens 200
    """
    from eventkg.cli.app import state
    from eventkg.queries.retrieve import RetrieveError, retrieve
    from eventkg.queries.vectors.index import open_index

    _check_level(level)
    if fmt not in ("prompt", "json", "triples"):
        raise RetrieveError(f"--format {fmt!r}: expected prompt, json or triples")
    with state(ctx).open(read_only=True) as store:
        with _progress("embedding events") as cb:
            vi = open_index(store, model, level, progress=cb, notice=_notice, device=device, index_kind=index_kind)
        sub = retrieve(store, text, k=k, hops=hops, rel_types=rel, level=level, model_name=model, index=vi)
    note = sub.truncation_note()
    if fmt == "json":
        print(sub.to_json(indent=2))
    elif fmt == "triples":
        for h, r, t in sub.triples:
            print(json.dumps([h, r, t], ensure_ascii=False))
        if note:
            err_console.print(note, highlight=False)
    else:
        print(sub.to_prompt(style=style, max_tokens=max_tokens, question=question))


def register(app: typer.Typer) -> None:
    """Add ``negatives`` and ``subgraph`` to the eventkg app."""
    app.command("negatives")(negatives)
    app.command("subgraph")(subgraph)
