"""The evaluation loop: run a task with a model (:func:`evaluate`) or with several, side by side
(:func:`evaluate_models`, what ``eventkg eval`` and ``eventkg demo`` call): build, prompt, answer,
parse, score, write.

Writes into ``out``: ``predictions.jsonl`` and ``metrics.json``; :func:`eventkg.tasks.report.write_report`
then draws the tables and plots. Each predictions line holds what a release's own scorer
needs to rescore the item: ``id``, ``prompt``, the raw ``response``, the ``parsed`` answer,
``gold``, ``correct``, ``meta``; for choice tasks also ``choices`` and ``gold_letter``
(EV²'s ``metrics_rq12`` takes the reply and the gold letter); for CLoMo the ``judgements``
and the three raw ``judge_responses`` (``c_p1_a`` = c11, ``c_p2_ap`` = c12_22, ``c_p2_a`` = c21).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.errors import OutputError
from eventkg.graphstore.atomic import atomic_folder
from eventkg.progress import Progress
from eventkg.tasks.base import Item, Record, Task
from eventkg.tasks.errors import TaskError
from eventkg.tasks.models import load_model
from eventkg.tasks.models.base import Model
from eventkg.tasks.registry import get_task

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore


@dataclass
class RunResult:
    task: str
    model: str
    metrics: dict[str, Any]
    records: list[Record]
    out_dir: Path | None


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def evaluate(
    store: GraphStore,
    task: Task | str,
    model: Model | str,
    *,
    n: int | None = None,
    split: str | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
    batch: int = 32,
) -> RunResult:
    """Evaluate ``model`` on ``task`` over the store's documents; write outputs if ``out_dir``.

    Args:
        store: The store the task builds its documents from.
        task: A task object, or a registered name (``"ev2-cec"``; ``eventkg eval --list``).
        model: A model object, or a spec (``"random"``, ``"kg-oracle"``, ``"openai:MODEL@URL"``, ``"hf:PATH"``).
        n: At most this many documents (all when None).
        split: Only the documents of this split, for tasks that have splits.
        seed: The seed of sampling and of seeded models.
        out_dir: Write the predictions and ``metrics.json`` here.
        progress: Hears (documents done, documents in all).
        batch: Documents sent to the model at a time.

    Returns:
        The run: its metrics (scored as the task's released scorer scores), predictions and settings.

    Raises:
        TaskError: The store holds no documents of the task (or of ``split``).
        ModelSpecError: A model spec that names no adapter.

    >>> evaluate(store, "ev2-cec", "random", n=50).metrics["accuracy"]  # doctest: +SKIP
    """
    if isinstance(task, str):
        task = get_task(task, seed=seed)
    if isinstance(model, str):
        loaded = load_model(model, store=store, seed=seed)
        try:
            return evaluate(store, task, loaded, n=n, split=split, seed=seed, out_dir=out_dir, progress=progress,
                            batch=batch)
        finally:
            loaded.close()
    items = task.build(store, split=split, n=n, seed=seed)
    if not items:
        raise TaskError(f"task {task.name}: the store {getattr(store, 'url', '')} holds no documents"
                        + (f" in split {split!r}" if split else "") + " (ingest the dataset first)")
    train = [it for it in task.train_items(store) if it.id not in {i.id for i in items}] if split != "train" else []
    # A baseline never learns from the gold of the items it is scored on: only the held-out
    # items are handed over; a model that groups its prior (majority: by EV² level, answering
    # from the other group only) may also see the scored items, never using an item's own group.
    model.held_out = train  # what a task-specific baseline prior may count (never the scored items)
    model.fit(task, train or (items if getattr(model, "fits_groups_apart", False) else []))
    started = time.time()
    records: list[Record] = []
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        records.extend(task.run_chunk(model, chunk) if hasattr(task, "run_chunk") else _answer(task, model, chunk))
        if progress:
            progress("items", len(records), len(items))
    metrics = task.score(records)
    metrics["_run"] = {
        "task": task.name, "style": task.style, "level": task.level, "split": split, "n": len(items), "seed": seed,
        "model": model.describe(), "generation": task.generation().to_json(), "store": getattr(store, "url", None), "seconds": round(time.time() - started, 3),
        "cached_responses": sum(1 for r in records if r.cached),
        "prior_from": "held-out items" if train else "none held out (baselines that need a prior abstain)",
    }
    out = Path(out_dir) if out_dir else None
    if out:
        write_outputs(out, records, metrics)
    return RunResult(task.name, model.name, metrics, records, out)


def _answer(task: Task, model: Model, items: list[Item]) -> list[Record]:
    prompts = [task.render(it) for it in items]
    reqs = [task.request(p, it) for p, it in zip(prompts, items, strict=True)]
    completions = model.generate(reqs)
    records = []
    for it, p, c in zip(items, prompts, completions, strict=True):
        parsed = task.parse(it, c.text)
        records.append(Record(id=it.id, prompt=p, response=c.text, parsed=parsed, gold=it.gold,
                              correct=task.is_correct(it, parsed), meta=it.meta, score=c.score, cached=c.cached,
                              extra=_rescore_fields(it)))
    return records


def _rescore_fields(item: Item) -> dict[str, Any]:
    """The choices and the gold's letter of a choice item (nothing for other items)."""
    if not item.choices:
        return {}
    out: dict[str, Any] = {"choices": list(item.choices)}
    if item.gold in item.choices:
        out["gold_letter"] = "ABCDEFGHIJ"[item.choices.index(item.gold)]
    return out


def write_outputs(out: Path, records: list[Record], metrics: dict[str, Any]) -> None:
    """A run's folder, ``predictions.jsonl`` and ``metrics.json``, complete or not at all
    (:func:`~eventkg.graphstore.atomic.atomic_folder`; the metrics moved in last, as the report reads them)."""
    with atomic_folder(out, last=("metrics.json",), what=f"eval --out: cannot write {out}") as tmp:
        with (tmp / "predictions.jsonl").open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r.to_json(), ensure_ascii=False, default=str) + "\n")
        (tmp / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False, default=str), encoding="utf-8")


#: progress of :func:`evaluate_models`: (model spec, items done, items in all or None before the first)


@dataclass
class Evaluation:
    """Several models run on one task: one :class:`RunResult` per spec and the report drawn from them."""

    task: str
    out_dir: Path
    report: Path
    runs: dict[str, RunResult]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per model spec, the metrics without the ``_``-prefixed bookkeeping (what ``eval --json`` prints)."""
        return {spec: {k: v for k, v in run.metrics.items() if not k.startswith("_")} for spec, run in self.runs.items()}


def http_options(spec: str, http: dict[str, Any] | None) -> dict[str, Any]:
    """HTTP options (timeout, concurrency, use_cache, cache) only for the HTTP adapter; the others take none."""
    if not http or not spec.startswith("openai:"):
        return {}
    return {k: v for k, v in http.items() if v is not None}


def evaluate_models(
    store: GraphStore,
    task: Task | str,
    models: Sequence[str],
    *,
    out_dir: str | Path | None = None,
    n: int | None = None,
    split: str | None = None,
    seed: int = 0,
    task_options: dict[str, Any] | None = None,
    judge: str | None = None,
    http: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Run each model spec on ``task`` into ``out_dir/<spec>/`` and draw ``out_dir/report.md``.

    The loop behind ``eventkg eval`` and ``eventkg demo``.

    Args:
        store: The store the task builds its documents from.
        task: A registered name (built with ``task_options``) or a task object.
        models: Model specs, each run in turn (``eventkg eval --model``).
        out_dir: Where the runs and the report go (default ``./eventkg-eval/<task>``).
        n: At most this many documents per run.
        split: Only the documents of this split.
        seed: The seed of sampling and of seeded models.
        task_options: The task's own options, e.g. ``{"style": "release", "release": "~/EV2"}``.
        judge: The model spec of a task's judge (CLoMo's SES).
        http: The HTTP adapter's options (timeout, concurrency, cache, generation settings).
        progress: Hears each model's progress.

    Returns:
        The runs by spec and the report's path.

    Raises:
        TaskError: An unknown task or option, or a store without the task's documents; raised before
            anything is written.
        ModelSpecError: A model spec that names no adapter.
    """
    from eventkg.tasks.report import write_report

    if isinstance(task, str):
        task = get_task(task, seed=seed, judge=judge, **(task_options or {}))
    out = Path(out_dir) if out_dir else Path("eventkg-eval") / task.name
    if out.exists() and not out.is_dir():  # refused before any model answers
        raise OutputError(f"eval --out {out}: it is a file, not a folder")
    judge_model = load_model(judge, store=store, seed=seed, **http_options(judge, http)) if judge else None
    if hasattr(task, "set_judge"):
        task.set_judge(judge_model)
    runs: dict[str, RunResult] = {}
    try:
        for spec in models:
            if progress:
                progress(spec, 0, None)
            model = load_model(spec, store=store, seed=seed, **http_options(spec, http))
            try:
                runs[spec] = evaluate(store, task, model, n=n, split=split, seed=seed, out_dir=out / slug(spec),
                                      progress=(lambda _stage, done, total, spec=spec: progress(spec, done, total))
                                      if progress else None)
            finally:
                model.close()
    finally:
        if judge_model is not None:
            judge_model.close()
    return Evaluation(task.name, out, write_report(out, task.name), runs)
