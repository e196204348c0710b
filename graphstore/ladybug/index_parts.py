"""Where LadybugDB files a node's key in its primary-key index, so that a node table too big for one
COPY goes in COPYs that each fill their own part of the index.

The engine splits a node table's primary-key index into 256 hash indexes, chosen by the top 8 bits
of the key's hash (``NUM_HASH_INDEXES``; ``storage/index/hash_index_utils.h``). A CHECKPOINT merges
each COPY's new keys into every hash index they fall in, page by page. COPYs of rows in the order
they were held each reach all 256, so each checkpoint rewrites the whole index and the node write
grows with the square of the table. COPYs of disjoint ranges of hash indexes each rewrite their own
(``docs/performance.md``).

:func:`key_hashes` is the engine's string hash (``function/hash/hash_functions.h``, 0.22), checked
against its Cypher ``hash()`` by the tests. Were a later engine to hash otherwise, the COPYs would
still hold every row; only their checkpoints would grow again.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from eventkg.graphstore.hashing import low_bytes, string_buffers, unaligned_words

HASH_INDEXES = 256  # the engine's hash indexes per primary key
_POSITION_SHIFT = np.uint64(56)  # the top 8 bits of a key's hash choose its hash index
FILL = 0.95  # of the rows one COPY may take, what a range of hash indexes is planned to hold
_MURMUR = np.uint64(0xD6E8FEB86659FD93)
_COMBINE = np.uint64(0xBF58476D1CE4E5B9)
_S32 = np.uint64(32)
CHUNK_ROWS = 1 << 20  # keys hashed at a time (bounds the temporaries)


def _murmur64(x: np.ndarray) -> np.ndarray:
    """The engine's ``murmurhash64`` finaliser (wrapping arithmetic)."""
    x = (x ^ (x >> _S32)) * _MURMUR
    x = (x ^ (x >> _S32)) * _MURMUR
    return x ^ (x >> _S32)


def key_hashes(values) -> np.ndarray:
    """The engine's 64-bit hash of each string of ``values`` (Arrow array or list; no nulls): over its
    8-byte little-endian words, then one more word of the bytes left (zero-padded, zero when none),
    ``h = h * C ^ murmurhash64(word)`` from ``h = 0``."""
    offsets, data = string_buffers(values)
    n = len(offsets) - 1
    out = np.empty(n, np.uint64)
    with np.errstate(over="ignore"):
        for start in range(0, n, CHUNK_ROWS):
            stop = min(n, start + CHUNK_ROWS)
            out[start:stop] = _hash_chunk(data, offsets[start : stop + 1])
    return out


def _hash_chunk(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`key_hashes` of the strings between consecutive ``offsets``."""
    lengths = np.diff(offsets)
    h = np.zeros(len(lengths), np.uint64)
    if not len(lengths):
        return h
    words = unaligned_words(data, int(offsets[0]), int(offsets[-1]))
    first = offsets[:-1] - offsets[0]
    counts = lengths // 8 + 1  # full words, then the word of the bytes left
    for j in range(int(counts.max())):
        rows = np.flatnonzero(counts > j) if counts.min() <= j else slice(None)
        left = np.minimum(lengths[rows] - 8 * j, 8)
        word = low_bytes(words[first[rows] + 8 * j], left)
        h[rows] = (h[rows] * _COMBINE) ^ _murmur64(word)
    return h


def index_positions(values) -> np.ndarray:
    """The hash index (0-255) the engine files each key of ``values`` in."""
    return (key_hashes(values) >> _POSITION_SHIFT).astype(np.uint8)


def index_ranges(rows: int, limit: int) -> np.ndarray:
    """Bounds (``parts + 1`` of them, from 0 to 256) of the fewest contiguous ranges of hash indexes
    such that each range is expected to hold at most ``FILL`` x ``limit`` of ``rows`` uniformly
    hashed keys (one range when they fit one COPY; at most 256)."""
    parts = 1
    while parts < HASH_INDEXES and rows * -(-HASH_INDEXES // parts) > FILL * limit * HASH_INDEXES:
        parts += 1
    return np.linspace(0, HASH_INDEXES, parts + 1).round().astype(np.int64)


def split_by_range(table: pa.Table, bounds: np.ndarray) -> Iterator[pa.Table]:
    """The rows of ``table`` (a node table: an ``id`` column) whose keys fall in each range of hash
    indexes between consecutive ``bounds``, in order, each range's rows in the order held. Each is
    a table of its own (not a slice of one reordered copy), so holding one holds only its rows."""
    part = np.searchsorted(bounds[1:-1], index_positions(table.column("id")), side="right").astype(np.uint8)
    order = np.argsort(part, kind="stable")
    ends = np.cumsum(np.bincount(part, minlength=len(bounds) - 1))
    start = 0
    for end in ends:
        yield table.take(pa.array(order[start:end]))
        start = int(end)
