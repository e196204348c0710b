"""``eventkg induce``, ``eventkg paths`` and ``eventkg questions``: the query-layer algorithms.

Thin skins over :func:`eventkg.queries.induction.induce.induce`, :func:`eventkg.queries.lookup.paths_between` and
:func:`eventkg.queries.questions.make.make_questions`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from eventkg.cli.shared import Bars, console, err_console, notice, state
from eventkg.errors import UsageError
from eventkg.graphstore.atomic import atomic_file, check_output_file
from eventkg.queries.questions.spec import NEGATIVES


def induce_cmd(
    relations: Annotated[str, typer.Argument(help="Comma-separated relations, e.g. Before,Causes,Before.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print {relations, induced} as JSON.")] = False,
) -> None:
    """Print the relation Table 1 of the EV² paper induces for a relation sequence, or "none".

    Example:  eventkg induce Before,Causes,Before
    """
    from eventkg.queries.induction.induce import induce, parse_relations

    rels = parse_relations(relations)
    result = induce(rels)
    if as_json:
        print(json.dumps({"relations": rels, "induced": result}))
    else:
        print(result or "none")


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


def questions_cmd(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="cec or crr.")],
    level: Annotated[str, typer.Option("--level", help="schema or instance.")] = "schema",
    n: Annotated[int, typer.Option("-n", min=1, help="How many questions.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same questions).")] = 0,
    out: Annotated[str, typer.Option("--out", help="Output JSON-lines file ('-' for stdout).")] = "-",
    store_q: Annotated[bool, typer.Option("--store-questions", help="Also write them as Question nodes.")] = False,
    negatives: Annotated[str, typer.Option("--negatives", help=f"CEC negatives: {' or '.join(NEGATIVES)} (faiss: hard, from embeddings).")] = NEGATIVES[0],
    model: Annotated[str | None, typer.Option("--model", help="Embedding model for --negatives faiss.")] = None,
    size: Annotated[int, typer.Option("--size", min=2, help="Component size N (walks keep N..N+2 nodes).")] = 3,
    repeat: Annotated[bool, typer.Option("--repeat", help="Allow an (event, relation, answer) to be asked again.")] = False,
    similar: Annotated[bool | None, typer.Option("--similar/--no-similar", help="CEC negatives also matched to the answer's similarity to the query, as often below as above it (sentence model --model; default: on when the graph's linked events are few enough to encode).")] = None,
    one_story: Annotated[bool, typer.Option("--one-story", help="Instance level: query, answer and context from one story's instances.")] = False,
    adversarial: Annotated[bool, typer.Option("--filter", help="CEC: over-generate twice, drop what the audit's baselines solve (AFLite-style, seeded); says how many and why.")] = False,
) -> None:
    """Generate EV²-style CEC or CRR questions from the graph, as EV² JSON lines.

    The Python call: eventkg.queries.questions.make.make_questions(store, QuestionSpec(TASK, LEVEL, N, SEED, ...)).

    Example:  eventkg questions cec --level schema -n 500 --seed 1 --out S_CEC.jsonl --negatives random
    """
    from eventkg.queries.questions.make import make_questions
    from eventkg.queries.questions.spec import QuestionSpec

    if seed < 0:  # numpy's generators refuse it, after the graph was read
        raise UsageError(f"--seed {seed}: must be 0 or more")
    if out != "-":
        check_output_file(out, "--out")  # before the work, not after it
    # saving: drawn with the store read-only, then saved (make_questions' read_only_phase)
    with state(ctx).open(read_only=not store_q, complete=True) as store, Bars() as bars:
        bars.update("questions", 0, n)
        spec = QuestionSpec(task, level, n, seed, negatives=negatives, model=model, size=size, save=store_q, repeat=repeat,
                            similar=similar, one_story=one_story, adversarial=adversarial)
        made = make_questions(store, spec, progress=lambda _stage, done, _total: bars.update("questions", done, n), notice=notice)
    rows = [q.row for q in made]
    if out == "-":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        with atomic_file(out, what=f"cannot write --out {out}") as fh:  # whole or not at all
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    where = "stdout" if out == "-" else out
    note = (f" (asked for {n}: the graph has no more components of the asked size with a question of this kind)"
            if len(rows) < n else "")
    err_console.print(f"{len(rows)} {task.upper()} {level} questions -> {where}{note}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add the query-layer commands to the ``eventkg`` app."""
    app.command("induce")(induce_cmd)
    app.command("paths")(paths_cmd)
    app.command("questions")(questions_cmd)
