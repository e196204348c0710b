"""Hybrid seeds: dense search and full-text search over the same events, fused.

The fusion is the one of neo4j-graphrag's ``HybridRetriever``: each event's dense score is its
cosine similarity to the text, its full-text score is its BM25 score divided by the best BM25
score of the query (so 1.0 for the best keyword match), and an event found by both keeps the
higher of the two. Dense search ranks paraphrases; full-text search finds an exact name or
phrase that the sentence embedding blurs.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.queries.vectors.fulltext import open_fulltext
from eventkg.queries.vectors.index import VectorIndex

SEARCHES = ("hybrid", "dense", "fulltext")


def seed_events(
    store: GraphStore,
    vi: VectorIndex,
    text: str,
    qvec: np.ndarray,
    n: int,
    *,
    search: str = "hybrid",
    exclude: Collection[str] = (),
) -> list[tuple[str, float]]:
    """Up to ``n`` (event id, fused score) for ``text``, best first (ties by id).

    Args:
        store: The store (its full-text index is opened beside ``vi``).
        vi: The vector index of the events to search.
        text: The query text (full-text half).
        qvec: Its embedding (dense half).
        n: How many to keep.
        search: ``hybrid``, ``dense`` or ``fulltext``.
        exclude: Event ids never returned.
    """
    extra = len(exclude)
    scores: dict[str, float] = {}
    if search in ("hybrid", "dense"):
        for i, s in vi.search(qvec, n + extra)[0]:
            scores[i] = max(scores.get(i, -1.0), s)
    if search in ("hybrid", "fulltext"):
        hits = open_fulltext(store, vi).search(text, n + extra)
        best = hits[0][1] if hits else 0.0
        for i, s in hits:
            scores[i] = max(scores.get(i, -1.0), s / best if best > 0 else 0.0)
    ranked = sorted(((i, s) for i, s in scores.items() if i not in exclude), key=lambda x: (-x[1], x[0]))
    return ranked[:n]
