"""eventkg: one typed graph for EV², EECKG, ASER, AbsPyramid and CLoMo, and what papers derive from it.

The public API, importable from here (loaded on first use, so ``import eventkg`` stays light)::

    >>> from eventkg import open_store, ingest_source, retrieve, induce  # doctest: +SKIP
    >>> store = open_store("./my.lbug")                                   # doctest: +SKIP
    >>> ingest_source(store, "ev2", "ingest/samples/ev2")                 # doctest: +SKIP
    >>> retrieve(store, "she missed the train", k=5, hops=2).to_prompt()  # doctest: +SKIP
    >>> induce(["Before", "Causes"])                                      # doctest: +SKIP

The layers are subpackages: :mod:`eventkg.graphstore` (data model, backends),
:mod:`eventkg.ingest` (loaders), :mod:`eventkg.queries` (induction, questions, negatives,
retrieval, subgraphs), :mod:`eventkg.tasks` (evaluation); ``docs/architecture.md`` maps them.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> "module:attribute" (resolved lazily by ``__getattr__``)
_API: dict[str, str] = {
    # errors and settings
    "EventKGError": "eventkg.errors:EventKGError",
    "SettingError": "eventkg.errors:SettingError",
    # graphstore
    "open_store": "eventkg.graphstore.open:open_store",
    "GraphStore": "eventkg.graphstore.base:GraphStore",
    "Batch": "eventkg.graphstore.base:Batch",
    "StoreError": "eventkg.graphstore.errors:StoreError",
    # ingest
    "ingest_source": "eventkg.ingest.registry:ingest_source",
    "LOADERS": "eventkg.ingest.registry:LOADERS",
    # queries
    "induce": "eventkg.queries.induction.induce:induce",
    "induced_paths": "eventkg.queries.induction.induce:paths",
    "make_questions": "eventkg.queries.questions.make:make_questions",
    "QuestionSpec": "eventkg.queries.questions.spec:QuestionSpec",
    "NearestNegatives": "eventkg.queries.negatives.nearest:NearestNegatives",
    "retrieve": "eventkg.queries.retrieval.retrieve:retrieve",
    "question_subgraph": "eventkg.queries.retrieval.subgraphs:question_subgraph",
    "score_schema": "eventkg.queries.retrieval.scoring:score_schema",
    "store_stats": "eventkg.queries.stats:store_stats",
    "export_rdf": "eventkg.queries.export.rdf:export_rdf",
    "export_graphml": "eventkg.queries.export.graphml:export_graphml",
    # tasks
    "evaluate": "eventkg.tasks:evaluate",
    "evaluate_models": "eventkg.tasks:evaluate_models",
    "get_task": "eventkg.tasks.registry:get_task",
    "load_model": "eventkg.tasks.models:load_model",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _API[name].split(":")
    except KeyError:
        raise AttributeError(f"module 'eventkg' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
