"""``eventkg eval`` (benchmarks over the store); the ``export`` commands live in :mod:`eventkg.cli.export`.

Thin skin over :mod:`eventkg.tasks`: ``eval`` is :func:`eventkg.tasks.evaluate_models` (each model
through :func:`eventkg.tasks.evaluate`, then :func:`eventkg.tasks.report.write_report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from eventkg.cli.shared import Bars, console, state
from eventkg.errors import UsageError


def _print_tasks(as_json: bool) -> None:
    from eventkg.tasks import list_tasks

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


TaskArg = Annotated[str | None, typer.Argument(help="Task name (see --list).")]
ModelOpt = Annotated[list[str] | None, typer.Option("--model", "-m", help="Model spec, repeatable: openai:MODEL@BASE_URL, hf:PATH, random[:SEED], majority, embed-sim, kg-oracle, kg-rag (EV² --style rag: answers from the retrieved facts alone).")]
NOpt = Annotated[int | None, typer.Option("--n", help="Evaluate a seeded sample of N items.")]
SplitOpt = Annotated[str | None, typer.Option("--split", help="Only items of this split (train/valid/test...).")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Output folder (default ./eventkg-eval/TASK).")]
StyleOpt = Annotated[str | None, typer.Option("--style", help="Prompt style: plain/direct/cot/release/release-direct/rag (EV²; rag: retrieved knowledge, the item's own story hidden, instance level), zero/few/cot/release/release-few/release-cot (CLoMo), plain/release (abspyramid-gen; abspyramid-det has no release style, its release classifies premise/hypothesis pairs). Release styles need --release, except EV²'s when the store's questions were ingested from a checkout's data/.")]
ReleaseOpt = Annotated[Path | None, typer.Option("--release", help="A checkout of the paper's release (EV²: TZWwww/EV2, CLoMo: Eleanor-H/CLOMO, AbsPyramid: HKUST-KnowComp/AbsPyramid) whose own code builds the prompts of a release style (EV² default: the checkout the questions were ingested from).")]
TemplateOpt = Annotated[Path | None, typer.Option("--template", help="EV² CEC/CRR: your own prompt file with $placeholders (docs/reproduce.md lists them), e.g. the paper's CoT figure.")]
MaxTokensOpt = Annotated[str | None, typer.Option("--max-tokens", help="Reply token limit (default: the style's; 'none' sends no limit).")]
TemperatureOpt = Annotated[str | None, typer.Option("--temperature", help="Sampling temperature (default: the style's; 'none' sends none, the server's default).")]
SystemOpt = Annotated[str | None, typer.Option("--system", help="A system message sent with every prompt (default: the style's, usually none).")]
LevelOpt = Annotated[str | None, typer.Option("--level", help="EV²: schema or instance (default both).")]
OriginOpt = Annotated[str | None, typer.Option("--origin", help="EV²: imported or generated questions (default both).")]
JudgeOpt = Annotated[str | None, typer.Option("--judge", help="CLoMo: model spec of the SES judge (default: the model).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for sampling and random baselines.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", help="Parallel HTTP requests.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Seconds per HTTP request.")]
CacheDirOpt = Annotated[Path | None, typer.Option("--cache-dir", help="Response cache folder (default ~/.cache/eventkg/responses or $EVENTKG_CACHE).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")]
ListOpt = Annotated[bool, typer.Option("--list", help="List the registered tasks and exit.")]
ClearCacheOpt = Annotated[bool, typer.Option("--clear-cache", help="Delete every cached model response and exit.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print metrics as JSON.")]


def eval_command(
    ctx: typer.Context, task: TaskArg = None, model: ModelOpt = None, n: NOpt = None, split: SplitOpt = None,
    out: OutOpt = None, style: StyleOpt = None, level: LevelOpt = None, origin: OriginOpt = None,
    judge: JudgeOpt = None, seed: SeedOpt = 0, concurrency: ConcurrencyOpt = 4, timeout: TimeoutOpt = 60.0,
    cache_dir: CacheDirOpt = None, no_cache: NoCacheOpt = False, list_: ListOpt = False,
    clear_cache: ClearCacheOpt = False, as_json: JsonOpt = False, release: ReleaseOpt = None,
    template: TemplateOpt = None, max_tokens: MaxTokensOpt = None, temperature: TemperatureOpt = None,
    system: SystemOpt = None,
) -> None:
    """Evaluate models on a benchmark built from the store; writes predictions, metrics and report.md.

    The Python call: eventkg.tasks.evaluate_models(store, TASK, [MODEL, ...], ...) -> OUT/<model>/, OUT/report.md.

    Example:  eventkg eval ev2-cec --model kg-oracle --model random --model openai:llama3@http://localhost:11434/v1 --n 200
    """
    from eventkg.tasks.models.cache import ResponseCache

    if list_:
        return _print_tasks(as_json)
    if clear_cache:
        cache = ResponseCache(cache_dir)
        return console.print(f"removed {cache.clear()} cached responses from {cache.directory}")
    if not task:
        raise UsageError("give a TASK (eventkg eval --list shows them)")
    if not model:
        raise UsageError("give at least one --model SPEC (e.g. --model random)")
    from eventkg.tasks import evaluate_models

    http = {"timeout": timeout, "concurrency": concurrency, "use_cache": not no_cache,
            "cache": ResponseCache(cache_dir) if cache_dir else None}
    options = {"style": style, "level": level, "origin": origin, "release": release, "template": template,
               "max_tokens": _number("--max-tokens", max_tokens, int), "temperature": _number("--temperature", temperature, float),
               "system": system}
    with state(ctx).open(read_only=True, complete=True) as store, Bars() as bars:  # one bar per model
        done = evaluate_models(store, task, model, out_dir=out, n=n, split=split, seed=seed, task_options=options,
                               judge=judge, http=http,
                               progress=lambda spec, k, total: bars.update(spec, k, total, description=f"{task} · {spec}"))
    if as_json:
        print(json.dumps(done.summary(), indent=2, default=str))
        return
    console.print(metrics_table(f"{task} ({done.out_dir})", done.summary()))
    console.print(f"report: {done.report}")


def _number(flag: str, value: str | None, kind: type) -> int | float | str | None:
    """A numeric option, or ``"none"`` (send nothing); a one-line error otherwise."""
    if value is None or value.lower() in ("none", "default"):
        return value and "none"
    try:
        number = kind(value)
    except ValueError:
        raise UsageError(f"{flag} {value!r}: expected a {'whole number' if kind is int else 'number'} or 'none'") from None
    if number < 0:
        raise UsageError(f"{flag} {value!r}: must not be negative")
    return number


def metrics_table(title: str, summary: dict[str, dict]) -> Table:
    """Models by their numeric metrics (the keys of the first model's metrics)."""
    table = Table(title=title)
    table.add_column("model")
    first = next(iter(summary.values()))
    keys = [k for k in first if isinstance(first[k], int | float)]
    for k in keys:
        table.add_column(k, justify="right")
    for spec, m in summary.items():
        table.add_row(spec, *(f"{m[k]:.4f}" if isinstance(m[k], float) else str(m[k]) for k in keys))
    return table


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
