"""``eventkg demo``: the bundled samples end to end, a thin skin over :func:`eventkg.demo.run_demo`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from eventkg.cli.shared import Bars, console, err_console, state
from eventkg.demo import DEFAULT_N, NEGATIVES

DEMO_STORE = Path("eventkg-demo") / "store.lbug"
DEMO_OUT = Path("eventkg-demo") / "report"


def demo_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Report folder (rewritten on every run).")] = DEMO_OUT,
    n: Annotated[int, typer.Option("--n", min=1, help="Questions to generate per task (CEC, CRR) and level.")] = DEFAULT_N,
    seed: Annotated[int, typer.Option("--seed", help="Seed for question generation and the random baseline.")] = 0,
    negatives: Annotated[str, typer.Option("--negatives", help=f"CEC negatives: {' or '.join(NEGATIVES)} (faiss: hard, from embeddings).")] = NEGATIVES[0],
) -> None:
    """Ingest every bundled sample, generate questions, score the offline baselines, write a report.

    Uses ./eventkg-demo/store.lbug unless the global --store (or $EVENTKG_STORE) is given. Safe to re-run: the ingest upserts and the report is rewritten.

    Example:  eventkg demo --out ./demo-report --n 50 --seed 1  &&  less ./demo-report/report.md
    """
    from eventkg.demo import check_options, run_demo
    from eventkg.graphstore import open_store

    check_options(n, negatives)
    st = state(ctx)
    url = st.store_url if ctx.find_root().params.get("store") else str(DEMO_STORE)
    started = time.perf_counter()
    err_console.print(f"eventkg demo: store {url}, report {out}", highlight=False)
    with Bars(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
              TimeElapsedColumn(), transient=False) as bars:
        current: list[str] = []

        def progress(step: str, done: int, total: int | None) -> None:
            key = step.split(" · ")[0]  # one line per suite, its models shown in turn
            if current != [key]:  # the previous step is over
                bars.finish()
                current[:] = [key]
            bars.update(key, done, total, description=step)  # the next model of a suite restarts its clock

        with open_store(url) as store:
            result = run_demo(store, out, n=n, seed=seed, negatives=negatives, progress=progress)
    console.print(headline_table(result.headline, result.items))
    questions = sum(result.questions.values())
    console.print(f"{questions} questions generated; report: {result.report.resolve()} "
                  f"(metrics: {result.metrics_file.name}, predictions: <suite>/<model>/predictions.jsonl) "
                  f"in {time.perf_counter() - started:.0f} s", highlight=False)


def headline_table(headline: dict[str, dict[str, float | None]], items: dict[str, int]) -> Table:
    """Suites by baselines, the headline metric of each (what the demo prints last)."""
    from eventkg.demo import BASELINES, SUITES

    table = Table(title="eventkg demo: headline accuracy (kg-oracle: own answer hidden, abstentions wrong; - = not run)", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False)
    table.add_column("suite", no_wrap=True, min_width=max(len(s.key) for s in SUITES))
    table.add_column("items", justify="right")
    for spec in BASELINES:
        table.add_column(spec, justify="right", no_wrap=True, min_width=len(spec))
    table.add_column("chance", justify="right", no_wrap=True)
    for s in SUITES:
        row = headline.get(s.key, {})
        cells = ["-" if row.get(spec) is None else f"{row[spec]:.3f}" for spec in BASELINES]
        table.add_row(s.key, str(items.get(s.key, "")), *cells, "-" if s.chance is None else f"{s.chance:.3f}")
    return table


def register(app: typer.Typer) -> None:
    """Add ``eventkg demo`` to the CLI."""
    app.command("demo")(demo_command)
