"""``eventkg subgraph``: the facts that answer a text, as a prompt, JSON or triples.

Thin skin over :func:`eventkg.queries.retrieval.retrieve.retrieve`, on the FAISS index it shares
with ``eventkg negatives`` (built on first use, with a progress bar and a resumable build; see
:mod:`eventkg.cli.negatives`).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from eventkg.cli.shared import EMBEDDING, OldModelOpt, err_console, index_build_bars, notice, renamed_option, state
from eventkg.errors import UsageError

#: what ``eventkg subgraph --format`` prints
FORMATS = ("prompt", "json", "triples")


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
    embed_model: Annotated[str | None, typer.Option("--embed-model", help="Sentence-embedding model folder or name (default $EVENTKG_EMBED_MODEL or bundled MiniLM; --model, its old name, works for one release).")] = None,
    device: Annotated[str, typer.Option("--device", help="Encoder device: auto (CUDA when present), cpu, cuda, mps.")] = "auto",
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, ivfpq, hnsw (default $EVENTKG_INDEX or auto).")] = None,
    old_model: OldModelOpt = None,
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

    embed_model = renamed_option(embed_model, old_model, "--embed-model", "--model")
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    with state(ctx).open(read_only=True) as store:
        with index_build_bars() as bars:
            vi = open_index(store, embed_model, level, progress=lambda _stage, done, total: bars.update(EMBEDDING, done, total),
                            notice=notice, device=device, index_kind=index_kind)
            sub = retrieve(store, text, k=k, hops=hops, rel_types=rel, level=level, embed_model=embed_model, index=vi,
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
    """Add ``subgraph`` to the ``eventkg`` app."""
    app.command("subgraph")(subgraph)
