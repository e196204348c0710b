"""``eventkg negatives`` and ``eventkg subgraph``: the embedding-backed queries.

Both are thin skins over :func:`eventkg.queries.negatives.for_question.negatives_for` and
:func:`eventkg.queries.retrieval.retrieve.retrieve`; the FAISS index they share is built on first use and
reused afterwards (see :mod:`eventkg.queries.vectors.index`); each event is embedded once per model,
whichever command and level asked first (the other reuses its vectors). A first build says on stderr how
many events it will embed and its ETA, shows a progress bar with rate and time left, and
saves its work in chunks: interrupt it and run the command again to resume. ``--device``
picks the encoder's device (``auto``: CUDA when torch sees a GPU), ``--index-kind`` the
FAISS index (``$EVENTKG_INDEX``).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from eventkg.cli.shared import Bars, console, err_console, notice, state
from eventkg.errors import UsageError

#: what ``eventkg subgraph --format`` prints
FORMATS = ("prompt", "json", "triples")
#: the label of an index build's bar
EMBEDDING = "embedding events"


def _build_bars() -> Bars:
    """The bar of an index build, with rate and time left (silent unless a build happens)."""
    return Bars(TextColumn(EMBEDDING), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                lazy=True, rate="texts")


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
    from eventkg.queries.negatives.for_question import negatives_for

    with state(ctx).open(read_only=True) as store, _build_bars() as bars:
        out = negatives_for(store, event, rel, k=k, answer=answer, level=level, model=model, clusters=clusters,
                            similarity_cap=cap, seed=seed, rebuild=rebuild, device=device, index_kind=index_kind,
                            progress=lambda _stage, done, total: bars.update(EMBEDDING, done, total), notice=notice)
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
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="The prompt's token budget: facts packed best first (schema facts of the best types before other stories'), the rest left out.")] = None,
    style: Annotated[str, typer.Option("--style", help="Prompt style: direct or context.")] = "direct",
    question: Annotated[str | None, typer.Option("--question", help="Question appended after the knowledge.")] = None,
    relation: Annotated[str | None, typer.Option("--relation", help="The question's relation (Causes, IsResult, Before, After, HasSubevent, IsSubevent): its facts first, spelled as asked.")] = None,
    mode: Annotated[str, typer.Option("--mode", help="auto (lifted on a store with event types, else neighbourhood), lifted or neighbourhood.")] = "auto",
    search: Annotated[str | None, typer.Option("--search", help="Seeds from hybrid (dense + full-text), dense or fulltext search (default: hybrid when lifted, dense otherwise).")] = None,
    rel: Annotated[list[str] | None, typer.Option("--rel", help="Relation types to follow (repeatable; default event relations + HAS_TYPE).")] = None,
    level: Annotated[str | None, typer.Option("--level", help="Seed only from schema or instance events.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Embedding model folder or name.")] = None,
    device: Annotated[str, typer.Option("--device", help="Encoder device: auto (CUDA when present), cpu, cuda, mps.")] = "auto",
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, ivfpq, hnsw (default $EVENTKG_INDEX or auto).")] = None,
) -> None:
    """Retrieve the facts that answer a text, as a prompt, JSON or triples.

    On a store with event types (EV²) the text is lifted to the types it instantiates and their
    facts come first; --relation puts the question's relation first, as asked. Elsewhere (ASER):
    the k nearest events and their neighbourhood.

    Example:  eventkg subgraph --text "Julia went over her notes for weeks" --relation Causes --max-tokens 300

    Example:  eventkg subgraph --text "PersonX studies all night" -k 5 --hops 2 --mode neighbourhood --format triples
    """
    from eventkg.queries.retrieval.retrieve import retrieve
    from eventkg.queries.vectors.index import open_index

    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    with state(ctx).open(read_only=True) as store:
        with _build_bars() as bars:
            vi = open_index(store, model, level, progress=lambda _stage, done, total: bars.update(EMBEDDING, done, total),
                            notice=notice, device=device, index_kind=index_kind)
            sub = retrieve(store, text, k=k, hops=hops, rel_types=rel, level=level, model_name=model, index=vi,
                           relation=relation, mode=mode, search=search)
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
