"""``eventkg negatives`` and ``eventkg subgraph``: the embedding-backed queries.

Both are thin skins over :class:`eventkg.queries.negatives.NegativeSampler` and
:func:`eventkg.queries.retrieve.retrieve`; the FAISS index they share is built on first use and
reused afterwards (see :mod:`eventkg.queries.vector_index`). A first build says on stderr how
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

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import CANONICAL, event_id, family_of, normalise_text
from eventkg.queries.negatives import NegativeSampler, NegativesError, require_event_relations
from eventkg.queries.vector_index import LEVELS, clear_index, index_dir, open_index

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
    if level is not None and level not in LEVELS:
        raise NegativesError(f"--level {level!r}: expected one of {', '.join(LEVELS)}")


def find_event(store: GraphStore, text: str, level: str | None) -> tuple[str, dict]:
    """The Event node of a text (schema level first when no level is given)."""
    for lvl in [level] if level else list(LEVELS):
        eid = event_id(text, lvl)
        node = store.get_nodes("Event", [eid]).get(eid)
        if node is not None:
            return eid, node
    where = f"at level {level}" if level else "at any level"
    raise NegativesError(f"no Event with text {normalise_text(text)!r} {where} in store {store.url}")


def default_answer(store: GraphStore, query_id: str, relation: str) -> str:
    """An event the query has a direct ``relation`` edge to (the first by text)."""
    rtype, forward = CANONICAL[relation]
    g = store.neighbourhood([query_id], hops=1, rel_types=[rtype], direction="out" if forward else "in")
    others = sorted((g.nodes[n].get("text") or n, n) for n in g.nodes if n != query_id)
    if not others:
        raise NegativesError(f"the event has no {relation} edge to take as the answer; give --answer TEXT")
    return others[0][1]


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
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, hnsw (default $EVENTKG_INDEX or auto).")] = None,
) -> None:
    """Hard negative events for a question: close to the answer, not linked to the event.

    Example:  eventkg negatives "learn" --rel Causes -k 3 --level schema --json
    """
    from eventkg.cli import state

    _check_level(level)
    if rel not in CANONICAL:
        raise NegativesError(f"--rel {rel!r}: expected one of {', '.join(CANONICAL)}")
    with state(ctx).open(read_only=True) as store:
        require_event_relations(store, family_of(rel))
        qid, _ = find_event(store, event, level)
        aid = find_event(store, answer, level)[0] if answer else default_answer(store, qid, rel)
        if rebuild:
            clear_index(store)
        sampler = NegativeSampler(store, model_name=model, level=level, similarity_cap=cap, clusters=clusters)
        ans_level = level or store.get_nodes("Event", [aid])[aid].get("level")
        with _progress("embedding events") as cb:
            vi = open_index(store, model, ans_level if ans_level in LEVELS else None, progress=cb, notice=_notice,
                            device=device, index_kind=index_kind)
        scored = sampler.sample_scored(qid, rel, aid, k=k, rng=seed)
        nodes = store.get_nodes("Event", [qid, aid, *(i for i, _ in scored)])
    text = {i: n.get("text") for i, n in nodes.items()}
    if as_json:
        out = {
            "event": {"id": qid, "text": text.get(qid)},
            "relation": rel,
            "answer": {"id": aid, "text": text.get(aid)},
            "negatives": [{"id": i, "text": text.get(i), "similarity": round(s, 4)} for i, s in scored],
            "index": {"path": str(index_dir(store)), "built": vi.built, "size": len(vi), "model": vi.manifest["model"],
                      "kind": vi.manifest["params"]["kind"]},
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return
    table = Table(title=f'negatives for "{text.get(qid)}" {rel} "{text.get(aid)}"')
    table.add_column("#", justify="right")
    table.add_column("negative")
    table.add_column("similarity to answer", justify="right")
    table.add_column("id")
    for n, (i, s) in enumerate(scored, 1):
        table.add_row(str(n), text.get(i) or "", f"{s:.3f}", i)
    console.print(table)
    if len(scored) < k:
        err_console.print(f"only {len(scored)} candidates passed the filters")


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
    index_kind: Annotated[str | None, typer.Option("--index-kind", help="FAISS index for a build: auto, flat, ivf, hnsw (default $EVENTKG_INDEX or auto).")] = None,
) -> None:
    """Retrieve the typed subgraph around the events nearest to a text, as a prompt, JSON or triples.

    Example:  eventkg subgraph --text "PersonX studies all night" -k 5 --hops 2 --format prompt --max-tokens 200
    """
    from eventkg.cli import state
    from eventkg.queries.retrieve import RetrieveError, retrieve

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
