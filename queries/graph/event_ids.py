"""Event ids as one sorted numpy byte-string array, not a Python list of strings.

A Python list of ids costs a str object and a pointer per id; here an id is
its UTF-8 bytes in a fixed-width ``S`` array (12 bytes for the store's ids), read as
``str`` only when asked (:class:`EventIds`). The array may be memory-mapped: a lookup by id
is a binary search, so only the pages it touches are read.

:func:`id_order` sorts ids the way Python sorts their strings (UTF-8 byte order is code-point
order). The store's ids are 12 URL-safe base64 characters (``graphstore.model.stable_id``); for
those the first 10 characters, each as its rank in byte order among the 64, are packed into one
``uint64`` and sorted as numbers, the row index in the low bits (a plain sort is faster than an
argsort, and both faster than sorting the byte strings; figures: ``docs/performance.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from eventkg.graphstore.model import ID_ALPHABET

_RANK = np.full(256, 255, dtype=np.uint8)  # a stable id's character's place in byte order among the 64
_RANK[np.frombuffer(bytes(sorted(ID_ALPHABET)), np.uint8)] = np.arange(64, dtype=np.uint8)
_PREFIX_CHARS = 10  # 60 bits of a uint64


def as_bytes(ids: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
    """Ids (Arrow strings or Python strings) as a fixed-width ``S`` array, in the same order.

    Arrow strings of one length are copied from their data buffer as they lie; others go
    through Python (test graphs, hand-made ids)."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if isinstance(ids, pa.Array):
        ids = ids.cast(pa.large_string()) if ids.type != pa.large_string() else ids
        n = len(ids)
        if n and ids.null_count == 0:
            offsets = np.frombuffer(ids.buffers()[1], np.int64)[ids.offset:ids.offset + n + 1]
            width = int(offsets[1] - offsets[0])
            if width > 0 and offsets[-1] - offsets[0] == width * n:
                data = np.frombuffer(ids.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]
                return data.view(f"S{width}").copy()
        ids = ids.to_pylist()
    encoded = [i.encode() for i in ids]
    width = max((len(b) for b in encoded), default=1)
    return np.array(encoded, dtype=f"S{max(width, 1)}")


def _sortable_prefix(ids: np.ndarray, chunk: int = 1 << 20) -> np.ndarray | None:
    """The first 10 characters of each id packed into one ``uint64`` that sorts as the ids do
    (6 bits a character, its rank among the URL-safe base64 characters), or None when some id is
    shorter or has another character there (read a chunk at a time)."""
    n, width = len(ids), ids.dtype.itemsize
    if width < _PREFIX_CHARS:
        return None
    raw = ids.view(np.uint8).reshape(n, width)
    hi = np.zeros(n, np.uint64)
    for a in range(0, n, chunk):
        ranks = np.take(_RANK, raw[a:a + chunk, :_PREFIX_CHARS])
        if ranks.max() == 255:
            return None
        part = hi[a:a + chunk]
        for k in range(_PREFIX_CHARS):
            part |= ranks[:, k].astype(np.uint64) << np.uint64(58 - 6 * k)
    return hi


def id_order(ids: np.ndarray) -> np.ndarray:
    """Indices that sort an ``S`` array of distinct ids (int64).

    Ids that start with 10 URL-safe base64 characters (the store's) are sorted as one ``uint64``
    each: the characters' leading bits above the row index, so a plain sort (no argsort) orders
    them and the low bits give the order; the few rows whose kept leading bits tie are put in byte
    order after."""
    n = len(ids)
    if n == 0:
        return np.zeros(0, np.int64)
    hi = _sortable_prefix(ids)
    if hi is None:
        return np.argsort(ids, kind="stable")
    bits = max(1, (n - 1).bit_length())  # of a row index
    low = np.uint64((1 << bits) - 1)
    key = hi
    key &= ~low
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    order = (key & low).astype(np.int64)
    key >>= np.uint64(bits)
    tie = key[1:] == key[:-1]
    del key
    if tie.any():
        _order_ties(ids, order, tie)
    return order


def _order_ties(ids: np.ndarray, order: np.ndarray, tie: np.ndarray) -> None:
    """Put each run of ``order`` whose neighbours ``tie`` (``tie[i]``: rows ``i`` and ``i + 1``
    share their leading bits) in byte order of ``ids``, in place."""
    at = np.zeros(len(order), dtype=bool)
    at[:-1] |= tie
    at[1:] |= tie
    pos = np.flatnonzero(at)
    first = np.ones(len(pos), dtype=bool)
    first[1:] = ~tie[pos[1:] - 1]  # a run starts where a row does not tie with the one before
    run = np.cumsum(first)
    rows = order[pos]
    order[pos] = rows[np.lexsort((ids[rows], run))]


class EventIds:
    """Sorted event ids: ``ids[p]`` is a ``str``; :meth:`position` finds one by binary search."""

    def __init__(self, raw: np.ndarray) -> None:
        self.raw = raw  # sorted ``S`` array (possibly memory-mapped)

    @classmethod
    def of(cls, ids: Iterable[str]) -> EventIds:
        """From ids already sorted (tests, small graphs)."""
        return cls(as_bytes(list(ids)))

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, p: int) -> str:
        return self.raw[p].decode()

    def __iter__(self) -> Iterator[str]:
        for b in self.raw:
            yield b.decode()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventIds):
            return np.array_equal(self.raw, other.raw)
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def tolist(self) -> list[str]:
        return [b.decode() for b in self.raw.tolist()]

    def take(self, positions: Iterable[int]) -> list[str]:
        """The ids of ``positions``, in order."""
        return [b.decode() for b in self.raw[np.fromiter(positions, np.int64)].tolist()]

    def position(self, event_id: str) -> int | None:
        """Position of a store id, or None."""
        key = event_id.encode()
        if len(key) > self.raw.dtype.itemsize:
            return None
        i = int(np.searchsorted(self.raw, np.array(key, dtype=self.raw.dtype)))
        return i if i < len(self.raw) and self.raw[i] == key else None

    def positions_of(self, raw: np.ndarray) -> np.ndarray:
        """Positions of ids given as an ``S`` array, all of which are here (int64)."""
        raw = raw.astype(self.raw.dtype, copy=False)
        order = np.argsort(raw)  # sorted needles: each search starts where the last ended (~3x faster)
        pos = np.empty(len(raw), dtype=np.int64)
        pos[order] = np.searchsorted(self.raw, raw[order])
        if len(pos) and (pos.max() >= len(self.raw) or (self.raw[np.minimum(pos, len(self.raw) - 1)] != raw).any()):
            raise KeyError("an id is not among the events")
        return pos.astype(np.int64, copy=False)

    def nbytes(self) -> int:
        return int(self.raw.nbytes)

    def __repr__(self) -> str:
        return f"EventIds({len(self)} ids)"

