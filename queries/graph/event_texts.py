"""Event texts read by position, from memory (small graphs) or from the store for the events asked.

Question generation shows a few events per question, a small share of a big graph; reading every
text into memory to show those made the memory grow with the graph (figures: ``docs/performance.md``). :class:`StoreTexts` asks the store, by id, for the texts of the
positions given to :meth:`~StoreTexts.prefetch` (one keyed lookup per batch of questions) and
keeps only those until the next prefetch; a text asked for without a prefetch is fetched on
its own (correct, only slower: :attr:`~StoreTexts.misses` counts them).

:class:`FileTexts` reads them from the file :mod:`eventkg.queries.graph.csr_cache` keeps beside an
embedded store (one ``pread`` a text: the page cache holds the file, not the process, and
random keyed lookups in the engine cost its page cache more with every event the graph holds). :class:`ArrowTexts` holds every text (graphs built from rows or networkx, tests).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from eventkg.queries.graph.event_ids import EventIds

FETCH_CHUNK = 20_000  # ids per keyed lookup


class Texts(Protocol):
    """Where an :class:`~eventkg.queries.graph.csr.EventCSR` reads its events' texts."""

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
        from eventkg.queries.graph.columnar import texts_by_id

        ids = self.ids.take(positions)
        found: dict[str, str | None] = {}
        for i in range(0, len(ids), FETCH_CHUNK):
            found.update(texts_by_id(self.store, ids[i:i + FETCH_CHUNK]))
        self.fetched += len(positions)
        return {p: found.get(i) for p, i in zip(positions, ids, strict=True)}

    def all(self) -> list[str | None]:
        """Every text (one read of the whole column: for small graphs and tools, not at scale)."""
        from eventkg.queries.graph.columnar import event_texts_all

        found = event_texts_all(self.store)
        return [found.get(i) for i in self.ids]


class PendingTexts:
    """Texts still being read in another thread (``future``: the :class:`Texts` once read): the
    first text asked for waits for them; :meth:`ready` says whether that would wait."""

    def __init__(self, future: Any) -> None:
        self.future = future

    def ready(self) -> bool:
        return self.future.done()

    def wait(self) -> Texts:
        """The texts, once read; from then on every call goes straight to them (no lock per text)."""
        texts = self.future.result()
        self.get, self.prefetch, self.all = texts.get, texts.prefetch, texts.all  # type: ignore[method-assign]
        return texts

    def get(self, p: int) -> str | None:
        return self.wait().get(p)

    def prefetch(self, positions: Iterable[int]) -> None:
        self.wait().prefetch(positions)

    def all(self) -> list[str | None]:
        return self.wait().all()


class FileTexts:
    """Texts in one UTF-8 file, found by ``start``/``length`` per position (length -1: no text)."""

    def __init__(self, path: Path, start: np.ndarray, length: np.ndarray) -> None:
        self.path, self.start, self.length = path, start, length
        self._fd = os.open(path, os.O_RDONLY)
        self._held: dict[int, str | None] = {}

    def get(self, p: int) -> str | None:
        held = self._held.get(p, self)
        return self._read(p) if held is self else held  # type: ignore[return-value]

    def _read(self, p: int) -> str | None:
        n = int(self.length[p])
        return None if n < 0 else os.pread(self._fd, n, int(self.start[p])).decode()

    def prefetch(self, positions: Iterable[int]) -> None:
        """Hold the texts of ``positions`` (and no others) until the next prefetch: a row names
        each of its events several times, one read each."""
        self._held = {p: self._read(p) for p in sorted({int(p) for p in positions})}

    def all(self) -> list[str | None]:
        return [self.get(p) for p in range(len(self.length))]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


def write_text_file(path: Path, pages: Iterable[tuple[np.ndarray, pa.Array]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Write texts given as ``(positions, Arrow strings)`` pages to ``path``, as they come;
    ``(start, length)`` per position (-1 where a position has no text or none was given)."""
    start = np.zeros(n, dtype=np.int64)
    length = np.full(n, -1, dtype=np.int32)
    at = 0
    with open(path, "wb") as fh:
        for pos, texts in pages:
            texts = texts.cast(pa.large_string())
            offsets = np.frombuffer(texts.buffers()[1], np.int64)[texts.offset:texts.offset + len(texts) + 1]
            if len(texts):
                data = texts.buffers()[2]
                fh.write(memoryview(data)[offsets[0]:offsets[-1]] if data is not None else b"")
            valid = texts.is_valid().to_numpy(zero_copy_only=False)
            start[pos] = at + offsets[:-1] - offsets[0]
            length[pos] = np.where(valid, np.diff(offsets), -1)
            at += int(offsets[-1] - offsets[0]) if len(texts) else 0
    return start, length
