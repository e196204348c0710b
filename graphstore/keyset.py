"""Compact in-memory key sets: which node ids / edge (src, dst) keys a table holds.

A bulk write must know which of its rows already exist; asking the engine costs ~5-15 µs per
key (LadybugDB), more than writing the row. A :class:`KeySet` answers from memory at
16 bytes per key: each key is reduced to a 128-bit fingerprint (two independent 64-bit
hashes, :func:`eventkg.graphstore.hashing.string_hashes` under two seeds: numpy over the Arrow
string buffers, no Python object per key) kept in a few sorted arrays (:class:`KeySet`).

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
    return pair_fingerprints(fingerprints(src), fingerprints(dst))


def pair_fingerprints(src: tuple[np.ndarray, np.ndarray],
                      dst: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Fingerprints of (src, dst) pairs given the :func:`fingerprints` of each side's ids."""
    (s1, s2), (d1, d2) = src, dst
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
    """The fingerprints of every key in one table, in a few runs sorted by the first hash.

    Each run is more than ``GROWTH`` times the next: a batch added becomes the last run and is
    merged into the runs before it that are not more than ``GROWTH`` times as big, so adding n keys
    in batches of b moves each key a few times over log(n / b) merges, where inserting every batch
    into one array moved the whole set each time (quadratic in the table: many batches into a table
    of tens of millions). A lookup searches each run: a few, the small ones in cache (a higher
    ``GROWTH`` keeps fewer runs for the lookups and merges the big run more often)."""

    GROWTH = 8

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(h1) for h1, _ in self._runs)

    @property
    def nbytes(self) -> int:
        """Bytes the runs hold (16 a key)."""
        return sum(h1.nbytes + h2.nbytes for h1, h2 in self._runs)

    def lookup(self, h1: np.ndarray, h2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(present, unsure) boolean masks; a key in neither is certainly absent."""
        order = np.argsort(h1) if len(h1) >= 4096 and self._runs else None  # as search(): sorted needles, once
        q1, q2 = (h1[order], h2[order]) if order is not None else (h1, h2)
        present, first = np.zeros(len(h1), bool), np.zeros(len(h1), bool)
        for r1, r2 in self._runs:
            pos = np.minimum(np.searchsorted(r1, q1), len(r1) - 1)
            here = r1[pos] == q1
            present |= here & (r2[pos] == q2)
            first |= here
        if order is not None:
            present[order], first[order] = present.copy(), first.copy()
        return present, first & ~present

    def add(self, h1: np.ndarray, h2: np.ndarray) -> None:
        """Add fingerprints (the caller adds only keys it just wrote, so no duplicates)."""
        if not len(h1):
            return
        order = np.argsort(h1, kind="stable")
        h1, h2 = h1[order], h2[order]
        while self._runs and len(self._runs[-1][0]) <= self.GROWTH * len(h1):
            r1, r2 = self._runs.pop()
            pos = search(r1, h1)
            h1, h2 = np.insert(r1, pos, h1), np.insert(r2, pos, h2)
        self._runs.append((h1, h2))
