"""The registered loaders, with their sources and formats (``eventkg ingest --list``).

Kept lazy (lm-evaluation-harness lesson): listing loaders imports no loader module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from eventkg.graphstore import StoreError


@dataclass(frozen=True)
class LoaderInfo:
    """One source: where its ``load`` lives and what it reads."""

    name: str
    module: str
    title: str
    formats: str
    citation: str
    size: str

    def load_module(self) -> ModuleType:
        return importlib.import_module(self.module)


LOADERS: dict[str, LoaderInfo] = {
    info.name: info
    for info in [
        LoaderInfo(
            "ev2", "eventkg.ingest.ev2", "EV² event-relation reasoning benchmark",
            "S_CEC/S_CRR/I_CEC/I_CRR .jsonl + clustering.json",
            "seed 001 (EV², schema and instance level)",
            "2,442 questions; ~1,570 event types; 1,000 clusters",
        ),
        LoaderInfo(
            "eeckg", "eventkg.ingest.eeckg", "EECKG eventuality-centric commonsense graph",
            "ConceptNet 5 assertions CSV (tab) or head,relation,tail[,weight] TSV/CSV",
            "seed 001 §3.1 (Wang et al., 2022b)",
            "verb-phrase events; Causes/Before/HasSubevent",
        ),
        LoaderInfo(
            "aser", "eventkg.ingest.aser", "ASER eventuality graph (streamed)",
            "KG.db SQLite (Eventualities, Relations) [+ concept.db]",
            "ASER toolkit (HKUST-KnowComp)",
            "tens of millions of eventualities; 15 discourse relations",
        ),
        LoaderInfo(
            "abspyramid", "eventkg.ingest.abspyramid", "AbsPyramid abstraction benchmark",
            "{Detection,Generation}/{noun,verb,event,merged}_dataset/{train,valid,test}.json (JSON lines)",
            "seed 004 (AbsPyramid)",
            "220,797 tuples; Noun/Verb/Event-Entail",
        ),
        LoaderInfo(
            "clomo", "eventkg.ingest.clomo", "CLoMo counterfactual logical modification",
            "zero_/few_/cot_<split>.json (JSON lists)",
            "seed 002 (CLoMo)",
            "1,000 items (600/200/200)",
        ),
    ]
}


def get_loader(name: str) -> LoaderInfo:
    """The loader registered as ``name``; a one-line error lists the known ones."""
    try:
        return LOADERS[name]
    except KeyError:
        raise StoreError(f"unknown source {name!r}; known: {', '.join(LOADERS)}") from None


def load(store, source: str, path, **options):
    """``eventkg.ingest.registry.load(store, "ev2", path)`` == ``eventkg.ingest.ev2.load(store, path)``."""
    return get_loader(source).load_module().load(store, path, **options)
