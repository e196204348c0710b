"""``report.md`` with the tables of every model run side by side, and PNG bar charts.

The tables carry each task's own labels (released rule vs paper formula vs eventkg's other
readings); the ``rules`` a task writes into metrics.json are listed under "Scoring rules".

Each run folder (``OUT/<model>/``) holds its metrics.json; the report reads them back, so
it can be redrawn without re-running a model (``eventkg eval --report-only``).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from eventkg.graphstore.atomic import atomic_file, atomic_path
from eventkg.tasks.registry import get_task


def load_runs(out: Path) -> list[tuple[str, dict[str, Any]]]:
    """(model name, metrics) of every ``*/metrics.json`` under ``out``, in folder order."""
    runs = []
    for path in sorted(out.glob("*/metrics.json")):
        metrics = json.loads(path.read_text(encoding="utf-8"))
        runs.append((metrics.get("_run", {}).get("model", {}).get("name", path.parent.name), metrics))
    return runs


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "n/a" if math.isnan(v) else f"{v:.4f}" if abs(v) <= 1 else f"{v:.2f}"
    return "n/a" if v is None else str(v)


def bar_chart(title: str, runs: list[tuple[str, dict[str, float]]], path: Path) -> None:
    """A grouped bar chart as a PNG at ``path``: one bar group per column, one bar per named run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = sorted({c for _, row in runs for c in row})
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(columns) * max(1, len(runs)) / 2 + 2), 3.6))
    width = 0.8 / max(1, len(runs))
    for i, (name, row) in enumerate(runs):
        xs = [j + i * width for j in range(len(columns))]
        ys = [row.get(c) if isinstance(row.get(c), int | float) and not math.isnan(row.get(c)) else 0.0 for c in columns]
        ax.bar(xs, ys, width=width, label=name)
    ax.set_xticks([j + width * (len(runs) - 1) / 2 for j in range(len(columns))])
    ax.set_xticklabels(columns, rotation=30, ha="right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(path) as tmp:  # whole or not at all
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def _short(text: Any, limit: int = 80) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def paper_section(runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Markdown tables of the paper's figures with each release-style run as a last row."""
    from eventkg.tasks.paper_figures import run_row

    lines: list[str] = []
    drawn: dict[str, list[str]] = {}
    for name, m in runs:
        info = m.get("_run", {})
        tables, cols = run_row(str(info.get("task")), str(info.get("style")), m)
        for table in tables:
            fmt = ".2f" if table.scale == 100 else ".3f"
            if table.cite not in drawn:
                rows = [f"| {model} | " + " | ".join("" if v is None else format(v, fmt) for v in values) + " |"
                        for model, values in table.rows.items()]
                drawn[table.cite] = [f"## The paper's figures beside this run: {table.cite}", "",
                                     "| model | " + " | ".join(table.columns) + " |",
                                     "|---" * (len(table.columns) + 1) + "|", *rows]
                if table.note:
                    drawn[table.cite][1:1] = [f"Note: {table.note}.", ""]
            cells = [f"**{format(cols[c], fmt)}**" if c in cols else "" for c in table.columns]
            drawn[table.cite].append(f"| **this run: {name}** ({info.get('n')} items) | " + " | ".join(cells) + " |")
    for block in drawn.values():
        lines += [*block, ""]
    return lines


def write_report(out: str | Path, task_name: str | None = None) -> Path:
    """Write ``out/report.md`` (+ ``out/plots/*.png``) from the run folders under ``out``."""
    out = Path(out)
    runs = load_runs(out)
    if not runs:
        from eventkg.tasks.errors import TaskError

        raise TaskError(f"{out}: no run folders with metrics.json to report on")
    task_name = task_name or runs[0][1].get("_run", {}).get("task")
    task = get_task(task_name)
    plots = out / "plots"
    plots.mkdir(exist_ok=True)
    lines = [f"# {task_name}: evaluation report", ""]
    run0 = runs[0][1].get("_run", {})
    lines.append(f"Store: `{run0.get('store')}` · split: {run0.get('split') or 'all'} · items: {run0.get('n')} · "
                 f"style: {run0.get('style')}")
    lines.append("")
    for name, m in runs:
        gen = m.get("_run", {}).get("generation")
        if gen:
            lines.append(f"Generation ({name}): max_tokens {gen.get('max_tokens')} · temperature {gen.get('temperature')} · "
                         f"system message: {_short(gen.get('system'))}")
        judge = m.get("judge_generation")
        if judge:
            lines.append(f"SES judge ({name}): {judge.get('source')} · max_tokens {judge.get('max_tokens')} · "
                         f"temperature {judge.get('temperature')}")
    lines.append("")
    lines.append("| model | " + " | ".join(["n", "unparseable", "cached"]) + " |")
    lines.append("|---|---|---|---|")
    for name, m in runs:
        lines.append(f"| {name} | {m.get('n', m.get('_run', {}).get('n'))} | {m.get('unparseable', 'n/a')} | "
                     f"{m.get('_run', {}).get('cached_responses', 0)} |")
    lines.append("")
    titles: list[str] = []
    for _, m in runs:
        for t in task.table_rows(m):
            if t not in titles:
                titles.append(t)
    for title in titles:
        rows = [(name, task.table_rows(m).get(title, {})) for name, m in runs]
        columns = sorted({c for _, r in rows for c in r})
        if not columns:
            continue
        lines += [f"## {title}", "", "| model | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
        for name, r in rows:
            lines.append(f"| {name} | " + " | ".join(_fmt(r.get(c)) for c in columns) + " |")
        png = plots / (re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_") + ".png")
        bar_chart(f"{task_name}: {title}", rows, png)
        lines += ["", f"![{title}](plots/{png.name})", ""]
    lines += paper_section(runs)
    rules = next((m["rules"] for _, m in runs if isinstance(m.get("rules"), dict)), None)
    if rules:
        lines += ["## Scoring rules", "", "Defaults follow the paper's released scorer; other readings are labelled.", ""]
        lines += [f"- `{k}`: {v}" for k, v in rules.items()]
        lines.append("")
    path = out / "report.md"
    with atomic_file(path, what=f"eval: cannot write {path}") as fh:  # last, after its plots
        fh.write("\n".join(lines) + "\n")
    return path
