"""Compact in-memory key sets: which node ids / edge (src, dst) keys a table holds.

A bulk write must know which of its rows already exist; asking the engine costs ~5-15 µs per
key (LadybugDB), more than writing the row. A :class:`KeySet` answers from memory at
16 bytes per key: each key is reduced to a 128-bit fingerprint (two independent 64-bit
hashes, :func:`eventkg.graphstore.hashing.string_hashes` under two seeds: numpy over the Arrow
string buffers, no Python object per key) kept in a sorted array.

* ``absent`` is exact: a key whose first hash is not in the set was never added.
* ``present`` (both hashes match) is wrong only on a 128-bit collision (~n²/2¹²⁸).
* Two stored keys sharing a first hash (~n²/2⁶⁵) make a lookup ``unsure``; callers ask
  the engine about those, so the answer stays exact.
"""

from __future__ import annotations

import numpy as np

from eventkg.graphstore.hashing import mix, string_hashes

_SEEDS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03))


def fingerprints(values) -> tuple[np.ndarray, np.ndarray]:
    """Two uint64 hashes per string of ``values`` (Arrow array or list; no nulls)."""
    return string_hashes(values, _SEEDS)


def edge_fingerprints(src, dst) -> tuple[np.ndarray, np.ndarray]:
    """Fingerprints of (src, dst) pairs, from the fingerprints of each side."""
    s1, s2 = fingerprints(src)
    d1, d2 = fingerprints(dst)
    return mix(mix(s1 ^ _SEEDS[1]) ^ d1), mix(mix(s2 + _SEEDS[0]) ^ d2)


def search(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """``np.searchsorted(haystack, needles)``, sorting many needles first.

    numpy resumes each search from the previous one when needles come in order, so sorting
    many needles first is cheaper than searching them as they come.
    """
    if len(needles) < 4096:
        return np.searchsorted(haystack, needles)
    order = np.argsort(needles)
    pos = np.empty(len(needles), np.intp)
    pos[order] = np.searchsorted(haystack, needles[order])
    return pos


class BucketIndex:
    """A sorted uint64 array that answers ``np.searchsorted(keys, needles)`` (side left) in a few
    probes whatever its size: a directory of where each value of the keys' top bits starts
    (``BUCKET_KEYS`` keys a bucket on average, hashes being uniform), then a binary search inside
    the needle's bucket, all needles at once. A plain binary search over tens of millions of
    keys misses the cache at nearly every one of its ~24 steps; for a map built once and asked
    many times (the ASER loader's eid map). Costs 4 bytes a bucket."""

    BUCKET_KEYS = 8

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = keys
        bits = max(1, min(28, (max(len(keys), 2) // self.BUCKET_KEYS).bit_length()))
        self._shift = np.uint64(64 - bits)
        counts = np.bincount((keys >> self._shift).astype(np.intp), minlength=1 << bits)
        self._starts = np.zeros((1 << bits) + 1, np.int64 if len(keys) >= 2**31 else np.int32)
        np.cumsum(counts, out=self._starts[1:])
        self._steps = int(counts.max()).bit_length() if len(keys) else 0  # no keys: no probe (all at 0)

    @property
    def nbytes(self) -> int:
        """Memory of the directory (the keys are the caller's)."""
        return self._starts.nbytes

    def search(self, needles: np.ndarray) -> np.ndarray:
        """The insertion points of ``needles`` (uint64), as ``np.searchsorted(keys, needles)``."""
        bucket = (needles >> self._shift).astype(np.intp)
        lo = self._starts[bucket].astype(np.intp)
        hi = self._starts[bucket + 1].astype(np.intp)
        last = max(len(self.keys) - 1, 0)
        for _ in range(self._steps):  # the first index in [lo, hi) whose key is not below the needle
            mid = (lo + hi) >> 1
            right = (mid < hi) & (self.keys[np.minimum(mid, last)] < needles)
            lo = np.where(right, mid + 1, lo)
            hi = np.where(right, hi, mid)
        return lo


class KeySet:
    """The fingerprints of every key in one table, sorted by the first hash."""

    def __init__(self) -> None:
        self.h1 = np.empty(0, np.uint64)
        self.h2 = np.empty(0, np.uint64)

    def __len__(self) -> int:
        return len(self.h1)

    def lookup(self, h1: np.ndarray, h2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(present, unsure) boolean masks; a key in neither is certainly absent."""
        if not len(self.h1):
            none = np.zeros(len(h1), bool)
            return none, none.copy()
        pos = np.minimum(search(self.h1, h1), len(self.h1) - 1)
        first = self.h1[pos] == h1
        present = first & (self.h2[pos] == h2)
        return present, first & ~present

    def add(self, h1: np.ndarray, h2: np.ndarray) -> None:
        """Add fingerprints (the caller adds only keys it just wrote, so no duplicates)."""
        if not len(h1):
            return
        order = np.argsort(h1, kind="stable")
        h1, h2 = h1[order], h2[order]
        pos = search(self.h1, h1)
        self.h1 = np.insert(self.h1, pos, h1)
        self.h2 = np.insert(self.h2, pos, h2)

