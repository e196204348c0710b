"""The task registry: name -> where the task lives, loaded only when asked for.

Importing this module imports no task module, no model and no torch (the harness lesson:
eager task imports made start-up slow).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import TaskError

if TYPE_CHECKING:  # the base module is imported where a task is made, not before
    from eventkg.tasks.base import Task


@dataclass(frozen=True)
class TaskSpec:
    name: str
    target: str  # "module:Class"
    source: str  # the paper / dataset it comes from
    summary: str
    styles: tuple[str, ...]


TASKS: dict[str, TaskSpec] = {
    s.name: s
    for s in [
        TaskSpec("ev2-cec", "eventkg.tasks.ev2.tasks:CECTask", "EV², Tao et al. 2024, arXiv:2404.17513 (TZWwww/EV2)",
                 "Contextual Event Classification, 4-way, schema + instance level (Question nodes)",
                 ("plain", "direct", "cot", "release", "release-direct", "template", "rag")),
        TaskSpec("ev2-crr", "eventkg.tasks.ev2.tasks:CRRTask", "EV², Tao et al. 2024, arXiv:2404.17513 (TZWwww/EV2)",
                 "Contextual Relation Reasoning, 3-way (relation / inverse / Vague), schema + instance",
                 ("plain", "direct", "cot", "release", "release-direct", "template", "rag")),
        TaskSpec("ev2-alignment", "eventkg.tasks.ev2.alignment:AlignmentTask", "EV², Tao et al. 2024, section 5.3 (TZWwww/EV2)",
                 "name each instance's event type (20 candidates) and the schema triplets used",
                 ("plain", "release")),
        TaskSpec("abspyramid-det", "eventkg.tasks.abspyramid.tasks:DetectionTask", "AbsPyramid, Wang et al. 2023, arXiv:2311.09174 (HKUST-KnowComp/AbsPyramid)",
                 "is the concept a valid abstraction of the instance? Acc, Macro-F1, AUC (no release style: the "
                 "release's detectors classify premise/hypothesis pairs, they send no prompt)",
                 ("plain", "cot")),
        TaskSpec("abspyramid-gen", "eventkg.tasks.abspyramid.tasks:GenerationTask", "AbsPyramid, Wang et al. 2023, arXiv:2311.09174 (HKUST-KnowComp/AbsPyramid)",
                 "generate an abstract concept; BLEU-1/2, ROUGE-2/L, METEOR",
                 ("plain", "release")),
        TaskSpec("clomo", "eventkg.tasks.clomo.tasks:ClomoTask", "CLoMo, Huang, Hong et al., ACL 2024 (Eleanor-H/CLOMO)",
                 "counterfactual logical modification; SES by the paper's formula and the authors' rule",
                 ("zero", "few", "cot", "release", "release-few", "release-cot")),
    ]
}


def list_tasks() -> list[TaskSpec]:
    """Every registered task (``eventkg eval --list``), without importing any task module.

    Returns:
        The task specs: name, where the task lives, its paper, a summary and its styles.
    """
    return list(TASKS.values())


def get_task(name: str, **options: Any) -> Task:
    """An instance of task ``name`` (its module imported now, not before).

    Args:
        name: A registered task name (:func:`list_tasks`).
        **options: The task's own options (``style``, ``release``, ``template``, ``level``...); None is left out.

    Returns:
        The task object.

    Raises:
        TaskError: An unknown task name.
    """
    if name not in TASKS:
        raise TaskError(f"unknown task {name!r}; known tasks: {', '.join(TASKS)}")
    module, _, cls = TASKS[name].target.partition(":")
    task_cls = getattr(importlib.import_module(module), cls)
    return task_cls(**{k: v for k, v in options.items() if v is not None})
