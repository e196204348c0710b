"""Event texts read by position, from memory (small graphs) or from the store for the events asked.

Question generation shows a few events per question: 50,000 CEC questions name ~300K events,
3% of ASER 10M. Reading every text into memory to show those (the previous ``EventCSR``: ~40
bytes an event in an Arrow array, plus the engine's pages of the whole text column) made the
memory grow with the graph. :class:`StoreTexts` asks the store, by id, for the texts of the
positions given to :meth:`~StoreTexts.prefetch` (one keyed lookup per batch of questions) and
keeps only those until the next prefetch; a text asked for without a prefetch is fetched on
its own (correct, only slower: :attr:`~StoreTexts.misses` counts them).

:class:`ArrowTexts` holds every text (graphs built from rows or networkx, tests).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import pyarrow as pa

from eventkg.queries.event_ids import EventIds

FETCH_CHUNK = 20_000  # ids per keyed lookup


class Texts(Protocol):
    """Where an :class:`~eventkg.queries.csr.EventCSR` reads its events' texts."""

    def get(self, p: int) -> str | None: ...

    def prefetch(self, positions: Iterable[int]) -> None: ...

    def all(self) -> list[str | None]: ...


class ArrowTexts:
    """Every text in memory, by position."""

    def __init__(self, texts: pa.Array) -> None:
        self.array = texts

    def get(self, p: int) -> str | None:
        return self.array[p].as_py()

    def prefetch(self, positions: Iterable[int]) -> None:
        return None

    def all(self) -> list[str | None]:
        return self.array.to_pylist()

    def nbytes(self) -> int:
        return int(self.array.nbytes)


class StoreTexts:
    """Texts fetched from the store by id for the positions prefetched (module docstring)."""

    def __init__(self, store: Any, ids: EventIds) -> None:
        self.store, self.ids = store, ids
        self._held: dict[int, str | None] = {}
        self.fetched = 0  # texts read from the store so far
        self.misses = 0  # texts asked for that no prefetch had brought

    def get(self, p: int) -> str | None:
        p = int(p)
        if p not in self._held:
            self.misses += 1
            self._held.update(self._fetch([p]))
        return self._held[p]

    def prefetch(self, positions: Iterable[int]) -> None:
        """Hold the texts of ``positions`` (and no others) until the next prefetch."""
        want = sorted({int(p) for p in positions})
        kept = {p: self._held[p] for p in want if p in self._held}
        self._held = kept
        self._held.update(self._fetch([p for p in want if p not in kept]))

    def _fetch(self, positions: list[int]) -> dict[int, str | None]:
        if not positions:
            return {}
        from eventkg.queries.columnar import texts_by_id

        ids = self.ids.take(positions)
        found: dict[str, str | None] = {}
        for i in range(0, len(ids), FETCH_CHUNK):
            found.update(texts_by_id(self.store, ids[i:i + FETCH_CHUNK]))
        self.fetched += len(positions)
        return {p: found.get(i) for p, i in zip(positions, ids, strict=True)}

    def all(self) -> list[str | None]:
        """Every text (one read of the whole column: for small graphs and tools, not at scale)."""
        from eventkg.queries.columnar import event_texts_all

        found = event_texts_all(self.store)
        return [found.get(i) for i in self.ids]
