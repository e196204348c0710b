"""Benchmarks over the store (EV², AbsPyramid, CLoMo) and the models that answer them.

The evaluation loop is :func:`evaluate` (one task, one model) and :func:`evaluate_models`
(several models side by side, with a report); ``eventkg eval`` and ``eventkg demo`` call them::

    >>> from eventkg.tasks import evaluate                          # doctest: +SKIP
    >>> evaluate(store, "ev2-cec", "random", n=50).metrics["accuracy"]  # doctest: +SKIP

Importing this package imports no task module, no model adapter and no torch.
"""

from eventkg.tasks.registry import TASKS, get_task, list_tasks
from eventkg.tasks.runner import Evaluation, RunResult, evaluate, evaluate_models

__all__ = ["TASKS", "Evaluation", "RunResult", "evaluate", "evaluate_models", "get_task", "list_tasks"]
