"""64-bit hashes of strings computed with numpy over Arrow buffers: the one string hash of the store.

Two users: key sets (:mod:`eventkg.graphstore.keyset`: 128-bit fingerprints of node ids and edge
keys, in memory only) and table digests (:mod:`eventkg.graphstore.digest`: sums of row hashes,
saved in ``<store>.digests``, so the values below must never change for a given seed).

The hash of a string under a seed ``s``: the string is cut into 8-byte little-endian words
(bytes past its end zero); word ``j`` is mixed as ``mix(word ^ mix(j * GOLDEN + s))``; the mixed
words are summed (mod 2^64) and the sum is mixed with the length:
``mix(sum + mix(length ^ s))``. ``mix`` is splitmix64's finaliser, a bijection on uint64. No Python
object is made per string; strings of one length (ids, the hot path) are one reshape and a row sum.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
CHUNK_BYTES = 8 << 20  # string bytes hashed at a time (bounds the temporaries: ~6 B per byte)
_KEEP_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], np.uint64)  # the low k bytes of a word


def mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, a bijection on uint64 (wrapping arithmetic)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def as_binary(values) -> pa.Array:
    """``values`` (an Arrow string/binary array or chunked array, or a list of str) as one binary array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not isinstance(values, pa.Array):
        values = pa.array(values, type=pa.string())
    if pa.types.is_string(values.type):
        return values.cast(pa.binary())
    if pa.types.is_large_string(values.type):
        return values.cast(pa.large_binary())
    return values


def string_buffers(values) -> tuple[np.ndarray, np.ndarray]:
    """The strings of ``values`` (see :func:`as_binary`) as Arrow holds them: ``n + 1`` offsets (int64)
    into their bytes (uint8), no copy of the bytes."""
    arr = as_binary(values)
    width = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    n = len(arr)
    if n == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.uint8)
    offsets = np.frombuffer(arr.buffers()[1], width, n + 1, arr.offset * np.dtype(width).itemsize).astype(np.int64)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return offsets, data


def string_hashes(values, seeds: tuple[np.uint64, ...]) -> tuple[np.ndarray, ...]:
    """One uint64 hash per string of ``values`` (no nulls) under each seed (see the module docstring)."""
    offsets, data = string_buffers(values)
    n = len(offsets) - 1
    out = tuple(np.empty(n, np.uint64) for _ in seeds)
    if n == 0:
        return out
    lengths = np.diff(offsets)
    same_length = bool((lengths == lengths[0]).all())
    words_of = _same_length_words if same_length else _any_length_words
    start = 0
    while start < n:  # rows in chunks of about CHUNK_BYTES bytes
        stop = max(start + 1, int(np.searchsorted(offsets, offsets[start] + CHUNK_BYTES, "right")) - 1)
        stop = min(stop, n)
        words, position, per_string = words_of(data, offsets[start : stop + 1], lengths[start:stop])
        for target, seed in zip(out, seeds, strict=True):
            sums = per_string(mix(words ^ mix(position * GOLDEN + seed)))
            length_keys = lengths[:1] if same_length else lengths[start:stop]  # one length: one key
            target[start:stop] = mix(sums + mix(length_keys.astype(np.uint64) ^ seed))
        start = stop
    return out


Words = tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray]]


def _same_length_words(data: np.ndarray, offsets: np.ndarray, lengths: np.ndarray) -> Words:
    """Strings of one length: their words as a (strings, words) view, each column's position, a row sum."""
    n, length = len(lengths), int(lengths[0])
    count = (length + 7) // 8
    padded = np.zeros((n, count * 8), np.uint8)
    padded[:, :length] = data[int(offsets[0]) : int(offsets[-1])].reshape(n, length)
    return padded.view(np.uint64).reshape(n, count), np.arange(count, dtype=np.uint64), _row_sums


def _row_sums(mixed: np.ndarray) -> np.ndarray:
    """Sums of the rows of a (strings, words) array, column by column: numpy's row reduction over a
    few columns is slower than adding the columns."""
    sums = np.zeros(len(mixed), np.uint64)
    for column in mixed.T:
        sums += column
    return sums


def _any_length_words(data: np.ndarray, offsets: np.ndarray, lengths: np.ndarray) -> Words:
    """Strings of any lengths: every word read unaligned at its string's start + 8 x position (the
    work is per word, not per byte), each word's position, and a sum per string by a cumulative sum."""
    base, end = int(offsets[0]), int(offsets[-1])
    counts = (lengths + 7) // 8
    wend = np.cumsum(counts)
    wstart = wend - counts
    unaligned = unaligned_words(data, base, end)
    position = np.arange(int(wend[-1]), dtype=np.int64) - np.repeat(wstart, counts)
    first_byte = np.repeat(offsets[:-1] - base, counts) + 8 * position
    left = np.minimum(np.repeat(lengths, counts) - 8 * position, 8)

    def per_string(mixed: np.ndarray) -> np.ndarray:
        sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(mixed, dtype=np.uint64)])
        return sums[wend] - sums[wstart]

    return low_bytes(unaligned[first_byte], left), position.astype(np.uint64), per_string


def unaligned_words(data: np.ndarray, base: int, end: int) -> np.ndarray:
    """Every byte offset of ``data[base:end]`` as the start of a little-endian uint64 (an unaligned,
    overlapping view of a copy with 8 zero bytes past its end, for the last word's read)."""
    window = np.zeros(end - base + 8, np.uint8)
    window[: end - base] = data[base:end]
    return np.ndarray((len(window) - 7,), np.dtype("<u8"), window, 0, (1,))


def low_bytes(words: np.ndarray, count: np.ndarray | int) -> np.ndarray:
    """The low ``count`` bytes (0-8, per word or one for all) of each little-endian word, the rest zero."""
    return words & _KEEP_BYTES[count]
