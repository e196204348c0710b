"""Every project sample in one store: the saved-query and Neo4j Browser tests read all five sources."""

from __future__ import annotations

from pathlib import Path

from eventkg import ingest_source
from eventkg.graphstore.base import GraphStore

SOURCES = ("ev2", "eeckg", "aser", "abspyramid", "clomo")


def ingest_samples(store: GraphStore, samples: Path) -> None:
    """Ingest each of :data:`SOURCES` from its folder under ``samples``."""
    for source in SOURCES:
        ingest_source(store, source, samples / source)
