"""Random negatives vetted against the graph: events with no induced relation of a family to the query.

The embedding-free sampler (``--negatives random``) and the fallback behind any other one.
Candidates are drawn from a pool in small batches and vetted together by
:class:`eventkg.queries.induction.vetting.MeetInTheMiddle` (one vector pass per batch, not one 4-step
search per query).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import FAMILIES, family_of
from eventkg.queries.errors import UnknownEventError
from eventkg.queries.graph.event_graph import EventGraph, EventIndex, as_csr
from eventkg.queries.induction.table1 import CODE
from eventkg.queries.induction.vetting import MeetInTheMiddle

#: family -> bitmask of its two relation codes
FAMILY_MASK = {fam: (1 << CODE[a]) | (1 << CODE[b]) for fam, (a, b) in FAMILIES.items()}


def _seeded_random(rng: Any) -> random.Random:
    """A ``random.Random`` as given, else one seeded with ``rng`` (None: seeded from the system)."""
    return rng if isinstance(rng, random.Random) else random.Random(rng)


def draw_unlinked(vet: MeetInTheMiddle, pool: Sequence[int], rng: random.Random, k: int, mask: int,
                  skip: set[int], tries: int = 64, accept: Callable[[int], bool] | None = None) -> list[int]:
    """Up to ``k`` distinct pool events, not in ``skip``, that no walk from the loaded event
    links by a relation in ``mask`` (and ``accept`` takes, if given); at most ``tries * k`` draws.
    Drawn events join ``skip``."""
    out: list[int] = []
    draws, limit = 0, tries * k
    while len(out) < k and draws < limit and len(pool):
        batch: list[int] = []
        while len(batch) <= k - len(out) and draws < limit:  # one spare: most candidates pass
            z = int(pool[rng.randrange(len(pool))])
            draws += 1
            if z not in skip:
                skip.add(z)
                if accept is None or accept(z):
                    batch.append(z)
        if not batch:
            break
        for z, linked in zip(batch, vet.linked(np.array(batch), mask).tolist(), strict=True):
            if not linked and len(out) < k:
                out.append(z)
    return out


class UnlinkedNegatives:
    """Random events from a pool (default: the query's level) not linked to the query by the family."""

    def __init__(self, source: GraphStore | EventGraph, *, pool: Sequence[int] | None = None, max_len: int = 4,
                 tries: int = 64) -> None:
        self.csr = as_csr(source)
        self.index = source if isinstance(source, EventIndex) else EventIndex(self.csr)
        self.max_len, self.tries = max_len, tries
        self.vet = MeetInTheMiddle(self.csr, max_len)
        self._pool = np.asarray(pool, dtype=np.int64) if pool is not None else None
        self._by_level: dict[int, np.ndarray] = {}

    def pool_for(self, level: int) -> np.ndarray:
        """Candidate positions: the pool given, else every event of ``level`` (0 schema, 1 instance)."""
        if self._pool is not None:
            return self._pool
        if level not in self._by_level:
            self._by_level[level] = np.flatnonzero(self.csr.level == level)
        return self._by_level[level]

    def sample(self, query_event_id: str, relation: str, answer_id: str, k: int = 3,
               exclude: set[str] = frozenset(), rng: Any = None) -> list[str]:  # type: ignore[assignment]
        """Up to ``k`` event ids; never the query, the answer, ``exclude`` or a family-linked event."""
        csr = self.csr
        q = csr.position(query_event_id)
        if q is None:
            raise UnknownEventError(f"query event {query_event_id!r} is not in the graph")
        skip = {p for p in (csr.position(x) for x in (*exclude, answer_id)) if p is not None} | {q}
        mask = FAMILY_MASK[family_of(relation)]
        self.vet.load(q, mask)
        got = draw_unlinked(self.vet, self.pool_for(int(csr.level[q])), _seeded_random(rng), k, mask, skip, self.tries)
        return [csr.ids[z] for z in got]
