"""``eventkg negatives``: hard negative events for a question, from the store's vector index.

Thin skin over :func:`eventkg.queries.negatives.for_question.negatives_for`. The FAISS index it
shares with ``eventkg subgraph`` is built on first use and reused afterwards (see
:mod:`eventkg.queries.vectors.index`); each event is embedded once per model, whichever command
and level asked first (the other reuses its vectors). A first build says on stderr how many events
it will embed and its ETA, shows a progress bar with rate and time left, and saves its work in
chunks: interrupt it and run the command again to resume. ``--device`` picks the encoder's device
(``auto``: CUDA when torch sees a GPU), ``--index-kind`` the FAISS index (``$EVENTKG_INDEX``).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from eventkg.cli.shared import (
    EMBEDDING,
    OldModelOpt,
    console,
    err_console,
    index_build_bars,
    notice,
    renamed_option,
    state,
)


def negatives(
    ctx: typer.Context,
    event: Annotated[str, typer.Argument(help="Text of the query event (e.g. 'learn').")],
    rel: Annotated[str, typer.Option("--rel", help="Asked relation: Causes, IsResult, Before, After, HasSubevent, IsSubevent.")],
    k: Annotated[int, typer.Option("-k", help="How many negatives.")] = 3,
    answer: Annotated[str | None, typer.Option("--answer", help="Text of the answer event (default: a direct --rel neighbour).")] = None,
    level: Annotated[str | None, typer.Option("--level", help="Event level: schema or instance (default: the answer's).")] = None,
    embed_model: Annotated[str | None, typer.Option("--embed-model", help="Sentence-embedding model folder or name (default $EVENTKG_EMBED_MODEL or bundled MiniLM; --model, its old name, works for one release).")] = None,
    clusters: Annotated[int | None, typer.Option("--clusters", help="Spread negatives over this many k-means clusters.")] = None,
    cap: Annotated[float, typer.Option("--similarity-cap", help="Reject candidates at least this similar to the answer.")] = 0.9,
    seed: Annotated[int | None, typer.Option("--seed", help="Draw among the best 4k candidates with this seed.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Drop the store's vector index and build it again.")] = False,
    device: Annotated[str, typer.Option("--device", help="Encoder device for an index build: auto (CUDA when present), cpu, cuda, mps.")] = "auto",
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, ivfpq, hnsw (default $EVENTKG_INDEX or auto).")] = None,
    old_model: OldModelOpt = None,
) -> None:
    """Hard negative events for a question: close to the answer, not linked to the event.

    Example:  eventkg negatives "learn" --rel Causes -k 3 --level schema --json
    """
    from eventkg.queries.negatives.for_question import negatives_for

    embed_model = renamed_option(embed_model, old_model, "--embed-model", "--model")

    with state(ctx).open(read_only=True) as store, index_build_bars() as bars:
        out = negatives_for(store, event, rel, k=k, answer=answer, level=level, embed_model=embed_model, clusters=clusters,
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


def register(app: typer.Typer) -> None:
    """Add ``negatives`` to the ``eventkg`` app."""
    app.command("negatives")(negatives)
