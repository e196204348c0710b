"""``eventkg questions``: EV²-style CEC and CRR questions generated from the graph.

Thin skin over :func:`eventkg.queries.questions.make.make_questions`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from eventkg.cli.shared import Bars, OldModelOpt, err_console, notice, renamed_option, state
from eventkg.errors import UsageError
from eventkg.graphstore.atomic import atomic_file, check_output_file
from eventkg.queries.questions.spec import NEGATIVES


def questions_cmd(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="cec or crr.")],
    level: Annotated[str, typer.Option("--level", help="schema or instance.")] = "schema",
    n: Annotated[int, typer.Option("-n", min=1, help="How many questions.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same questions).")] = 0,
    out: Annotated[str, typer.Option("--out", help="Output JSON-lines file ('-' for stdout).")] = "-",
    store_q: Annotated[bool, typer.Option("--store-questions", help="Also write them as Question nodes.")] = False,
    negatives: Annotated[str, typer.Option("--negatives", help=f"CEC negatives: {' or '.join(NEGATIVES)} (faiss: hard, from embeddings).")] = NEGATIVES[0],
    embed_model: Annotated[str | None, typer.Option("--embed-model", help="Sentence-embedding model of --negatives faiss and --similar (default $EVENTKG_EMBED_MODEL or bundled MiniLM; --model, its old name, works for one release).")] = None,
    size: Annotated[int, typer.Option("--size", min=2, help="Component size N (walks keep N..N+2 nodes).")] = 3,
    repeat: Annotated[bool, typer.Option("--repeat", help="Allow an (event, relation, answer) to be asked again.")] = False,
    similar: Annotated[bool | None, typer.Option("--similar/--no-similar", help="CEC negatives also matched to the answer's similarity to the query, as often below as above it (sentence model --embed-model; default: on when the graph's linked events are few enough to encode).")] = None,
    one_story: Annotated[bool, typer.Option("--one-story", help="Instance level: query, answer and context from one story's instances.")] = False,
    adversarial: Annotated[bool, typer.Option("--filter", help="CEC: over-generate twice, drop what the audit's baselines solve (AFLite-style, seeded); says how many and why.")] = False,
    old_model: OldModelOpt = None,
) -> None:
    """Generate EV²-style CEC or CRR questions from the graph, as EV² JSON lines.

    The Python call: eventkg.queries.questions.make.make_questions(store, QuestionSpec(TASK, LEVEL, N, SEED, ...)).

    Example:  eventkg questions cec --level schema -n 500 --seed 1 --out S_CEC.jsonl --negatives random
    """
    from eventkg.queries.questions.make import make_questions
    from eventkg.queries.questions.spec import QuestionSpec

    embed_model = renamed_option(embed_model, old_model, "--embed-model", "--model")
    if seed < 0:  # numpy's generators refuse it, after the graph was read
        raise UsageError(f"--seed {seed}: must be 0 or more")
    if out != "-":
        check_output_file(out, "--out")  # before the work, not after it
    # saving: drawn with the store read-only, then saved (make_questions' read_only_phase)
    with state(ctx).open(read_only=not store_q, complete=True) as store, Bars() as bars:
        bars.update("questions", 0, n)
        spec = QuestionSpec(task, level, n, seed, negatives=negatives, embed_model=embed_model, size=size, save=store_q, repeat=repeat,
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
    """Add ``questions`` to the ``eventkg`` app."""
    app.command("questions")(questions_cmd)
