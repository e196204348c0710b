"""``eventkg eval`` (benchmarks over the store); the ``export`` commands live in :mod:`eventkg.cmd_export`.

Thin skin over :mod:`tasks`: ``eval`` is :func:`eventkg.tasks.runner.evaluate` per model followed by
:func:`eventkg.tasks.report.write_report`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from eventkg.graphstore import StoreError

console = Console()


def _print_tasks(as_json: bool) -> None:
    from eventkg.tasks.registry import list_tasks

    specs = list_tasks()
    if as_json:
        print(json.dumps([{"name": s.name, "source": s.source, "summary": s.summary, "styles": s.styles} for s in specs], indent=2))
        return
    table = Table(title="eventkg tasks")
    for col in ("task", "source", "styles", "what"):
        table.add_column(col)
    for s in specs:
        table.add_row(s.name, s.source, ", ".join(s.styles), s.summary)
    console.print(table)


def eval_command(
    ctx: typer.Context,
    task: Annotated[str | None, typer.Argument(help="Task name (see --list).")] = None,
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="Model spec, repeatable: openai:MODEL@BASE_URL, hf:PATH, random[:SEED], majority, embed-sim, kg-oracle.")] = None,
    n: Annotated[int | None, typer.Option("--n", help="Evaluate a seeded sample of N items.")] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only items of this split (train/valid/test...).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Output folder (default ./eventkg-eval/TASK).")] = None,
    style: Annotated[str | None, typer.Option("--style", help="Prompt style: plain/direct/cot (EV²), zero/few/cot (CLoMo).")] = None,
    level: Annotated[str | None, typer.Option("--level", help="EV²: schema or instance (default both).")] = None,
    origin: Annotated[str | None, typer.Option("--origin", help="EV²: imported or generated questions (default both).")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="CLoMo: model spec of the SES judge (default: the model).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for sampling and random baselines.")] = 0,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Parallel HTTP requests.")] = 4,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per HTTP request.")] = 60.0,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="Response cache folder (default ~/.cache/eventkg/responses or $EVENTKG_CACHE).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List the registered tasks and exit.")] = False,
    clear_cache: Annotated[bool, typer.Option("--clear-cache", help="Delete every cached model response and exit.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print metrics as JSON.")] = False,
) -> None:
    """Evaluate models on a benchmark built from the store; writes predictions, metrics and report.md.

    Example:  eventkg eval ev2-cec --model kg-oracle --model random --model openai:llama3@http://localhost:11434/v1 --n 200
    """
    from eventkg.tasks.models.cache import ResponseCache

    if list_:
        _print_tasks(as_json)
        return
    if clear_cache:
        cache = ResponseCache(cache_dir)
        removed = cache.clear()
        console.print(f"removed {removed} cached responses from {cache.directory}")
        return
    if not task:
        raise StoreError("give a TASK (eventkg eval --list shows them)")
    if not model:
        raise StoreError("give at least one --model SPEC (e.g. --model random)")
    from eventkg.cli import state
    from eventkg.tasks.models import load_model
    from eventkg.tasks.registry import get_task
    from eventkg.tasks.report import write_report
    from eventkg.tasks.runner import evaluate, slug

    options = {"style": style, "level": level, "origin": origin, "judge": judge, "seed": seed}
    task_obj = get_task(task, **options)
    out_dir = out or Path("eventkg-eval") / task
    http = {"timeout": timeout, "concurrency": concurrency, "use_cache": not no_cache,
            "cache": ResponseCache(cache_dir) if cache_dir else None}
    summary = {}
    with state(ctx).open(read_only=True) as store:
        if hasattr(task_obj, "set_judge"):
            task_obj.set_judge(load_model(judge, store=store, seed=seed, **_http(judge, http)) if judge else None)
        for spec in model:
            mdl = load_model(spec, store=store, seed=seed, **_http(spec, http))
            try:
                with Progress(transient=True, console=Console(stderr=True)) as bar:
                    job = bar.add_task(f"{task} · {spec}", total=None)

                    def progress(done: int, total: int, bar=bar, job=job) -> None:
                        bar.update(job, completed=done, total=total)

                    result = evaluate(store, task_obj, mdl, n=n, split=split, seed=seed,
                                      out_dir=out_dir / slug(spec), progress=progress)
            finally:
                mdl.close()
            summary[spec] = {k: v for k, v in result.metrics.items() if not k.startswith("_")}
    report = write_report(out_dir, task)
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
        return
    table = Table(title=f"{task} ({out_dir})")
    table.add_column("model")
    keys = [k for k in next(iter(summary.values())) if isinstance(next(iter(summary.values()))[k], int | float)]
    for k in keys:
        table.add_column(k, justify="right")
    for spec, m in summary.items():
        table.add_row(spec, *(f"{m[k]:.4f}" if isinstance(m[k], float) else str(m[k]) for k in keys))
    console.print(table)
    console.print(f"report: {report}")


def _http(spec: str, http: dict) -> dict:
    """HTTP options only for the HTTP adapter; the others take none."""
    if not spec.startswith("openai:"):
        return {}
    return {k: v for k, v in http.items() if v is not None}


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
