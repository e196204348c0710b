"""Export CEC/CRR questions as an lm-evaluation-harness task folder.

One JSON-lines data file and one YAML config per (task, level), plus a group config:
``lm_eval --model ... --tasks eventkg_ev2 --include_path DIR``. Documents carry the
plain-style prompt (ending in "The answer is"), the choice letters and the gold index, so
the harness scores them as loglikelihood multiple choice (acc, acc_norm).

``dataset_kwargs.data_files`` holds absolute paths (the harness resolves relative paths
against the working directory, not the YAML): re-export after moving the folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from eventkg.graphstore.atomic import atomic_folder, ensure_free
from eventkg.tasks.base import letters
from eventkg.tasks.errors import TaskError
from eventkg.tasks.registry import get_task

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

GROUP = "eventkg_ev2"


def export_lm_eval(store: GraphStore, out: str | Path, *, origin: str | None = None, split: str | None = None) -> dict[str, int]:
    """Write the task folder, complete or not at all (:func:`~eventkg.graphstore.atomic.atomic_folder`:
    built beside ``out``, moved into place at the end); returns {lm-eval task name: document count}.

    Every file is rendered in memory first, so a disk that cannot hold them is refused, in one line
    (:class:`~eventkg.errors.DiskFullError`), before anything is written.
    """
    out = Path(out).resolve()
    files, counts = _render(store, out, origin, split)
    ensure_free(out, sum(len(text) for text in files.values()), f"export lm-eval into {out}",
                detail=f"its {sum(counts.values()):,} documents and their configs")
    with atomic_folder(out, last=("README.md",), what=f"export lm-eval into {out}") as tmp:
        for name, text in files.items():
            (tmp / name).write_bytes(text)
    return counts


def _render(store: GraphStore, out: Path, origin: str | None, split: str | None) -> tuple[dict[str, bytes], dict[str, int]]:
    """The task folder's files ({name: bytes}, README.md last) naming their final place ``out``, and
    the documents per task."""
    files: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    for task_name in ("ev2-cec", "ev2-crr"):
        for level in ("schema", "instance"):
            task = get_task(task_name, level=level, origin=origin)
            items = task.build(store, split=split)
            if not items:
                continue
            name = f"eventkg_{task_name.replace('-', '_')}_{level}"
            data = out / f"{name}.jsonl"  # where the YAML finds it once the folder is in place
            lines = []
            for it in items:
                doc = {
                    "id": it.meta["qid"], "prompt": task.render(it), "options": list(letters(len(it.choices))),
                    "label": it.choices.index(it.gold), "choices": it.choices, "gold": it.gold,
                    "rel": it.meta["rel"], "family": it.meta["family"], "level": level, "origin": it.meta["origin"],
                }
                lines.append(json.dumps(doc, ensure_ascii=False) + "\n")
            files[data.name] = "".join(lines).encode("utf-8")
            files[f"{name}.yaml"] = yaml.safe_dump(_config(name, data), sort_keys=False, allow_unicode=True).encode("utf-8")
            counts[name] = len(items)
    if not counts:
        raise TaskError(f"export lm-eval: the store {getattr(store, 'url', '')} holds no CEC/CRR Question nodes (ingest EV² or run eventkg questions first)")
    files["README.md"] = (
        "# eventkg EV² tasks for lm-evaluation-harness\n\n"
        f"Run all: `lm_eval --model hf --model_args pretrained=MODEL --tasks {GROUP} --include_path {out}`\n\n"
        + "\n".join(f"- `{k}`: {v} documents" for k, v in counts.items()) + "\n"
    ).encode("utf-8")
    return files, counts


def _config(name: str, data: Path) -> dict:
    """The YAML config of one task: its data file ``data`` scored as multiple choice."""
    return {
        "task": name,
        "tag": [GROUP],
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "prompt",
        "doc_to_choice": "options",
        "doc_to_target": "label",
        "target_delimiter": " ",
        "metric_list": [
            {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
        ],
        "metadata": {"version": 1.0, "source": "eventkg export lm-eval"},
    }
