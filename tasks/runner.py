"""Run one task with one model: build, prompt, answer, parse, score, write.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.tasks.base import Item, Record, Task
from eventkg.tasks.errors import TaskError
from eventkg.tasks.models.base import Model, Request

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
    task: Task,
    model: Model,
    *,
    n: int | None = None,
    split: str | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch: int = 32,
) -> RunResult:
    """Evaluate ``model`` on ``task`` over the store's documents; write outputs if ``out_dir``."""
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
            progress(len(records), len(items))
    metrics = task.score(records)
    metrics["_run"] = {
        "task": task.name, "style": task.style, "level": task.level, "split": split, "n": len(items), "seed": seed,
        "model": model.describe(), "store": getattr(store, "url", None), "seconds": round(time.time() - started, 3),
        "cached_responses": sum(1 for r in records if r.cached),
        "prior_from": "held-out items" if train else "none held out (baselines that need a prior abstain)",
    }
    out = Path(out_dir) if out_dir else None
    if out:
        write_outputs(out, records, metrics)
    return RunResult(task.name, model.name, metrics, records, out)


def _answer(task: Task, model: Model, items: list[Item]) -> list[Record]:
    prompts = [task.render(it) for it in items]
    reqs = [Request(prompt=p, item=it, task=task, max_tokens=task.max_tokens) for p, it in zip(prompts, items, strict=True)]
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
    out.mkdir(parents=True, exist_ok=True)
    with (out / "predictions.jsonl").open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.to_json(), ensure_ascii=False, default=str) + "\n")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
