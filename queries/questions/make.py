"""Questions from a store, checked and optionally stored: ``eventkg questions`` and the demo call :func:`make_questions`.

:func:`eventkg.queries.questions.generate.generate_questions` does the work; this adds what a user of a
store needs around it: the options checked first, a store that cannot give questions refused
with its reason before any work, FAISS hard negatives set up for CEC, and the questions
written back as ``Question`` nodes on request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventkg.graphstore.base import GraphStore

TASKS = ("CEC", "CRR")
NEGATIVES = ("faiss", "random")


def make_questions(
    store: GraphStore,
    task: str,
    level: str = "schema",
    n: int = 100,
    seed: int = 0,
    *,
    negatives: str = "faiss",
    model: str | None = None,
    size: int = 3,
    save: bool = False,
    graph: Any = None,
    sampler: Any = None,
    progress: Callable[[int], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> list[Any]:
    """Up to ``n`` EV²-style ``task`` (cec or crr) questions of ``level`` from ``store``'s graph.

    ``negatives``: CEC distractors from the FAISS index (``faiss``, embeddings of ``model``) or
    drawn from the graph (``random``). ``save`` also writes them as Question nodes (same seed,
    same ids: a re-run changes nothing). ``graph`` (an :class:`~eventkg.queries.event_graph.EventIndex`)
    and ``sampler`` let a caller asking several times read the graph and the index once.
    Returns :class:`~eventkg.queries.questions.generate.GeneratedQuestion` objects (``.row`` is the EV² JSON row).

    >>> [q.row for q in make_questions(store, "cec", n=10, negatives="random")]  # doctest: +SKIP
    """
    from eventkg.queries.questions.generate import LEVELS, QuestionError, check_store_can_generate, generate_questions

    task = task.upper()
    if task not in TASKS:
        raise QuestionError(f"task {task!r}: expected cec or crr")
    if level not in LEVELS:
        raise QuestionError(f"--level {level!r}: expected schema or instance")
    if negatives not in NEGATIVES:
        raise QuestionError(f"--negatives {negatives!r}: expected faiss or random")
    check_store_can_generate(store, level)
    if graph is None:
        from eventkg.queries.event_graph import EventIndex

        if notice:
            notice("reading the event graph ...")
        graph = EventIndex.from_store(store)
    if task == "CEC" and negatives == "faiss" and sampler is None:
        sampler = _faiss_sampler(store, model)
    made = generate_questions(graph, task, level, n, seed, negatives=sampler if task == "CEC" else None, size=size,
                              progress=progress)
    if save and made:
        from eventkg.queries.questions.generate import store_questions

        store_questions(store, made, seed)
    return made


def _faiss_sampler(store: GraphStore, model: str | None) -> Any:
    """The schema-level hard-negative sampler; a one-line error when FAISS cannot be loaded."""
    from eventkg.graphstore.base import StoreError

    try:
        from eventkg.queries.negatives.nearest import NegativeSampler
    except ImportError as exc:
        raise StoreError(f"FAISS negatives unavailable ({exc}); use --negatives random") from None
    return NegativeSampler(store, model_name=model, level="schema")
