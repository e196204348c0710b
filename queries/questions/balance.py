"""What a CEC negative (and a CRR Vague partner) is matched to the answer on, so that nothing but the
reasoning tells them apart: one named function per matching rule.

- **Keys** (:func:`degree_band`, :func:`infile_key`, :func:`named_key`, :func:`match_key`,
  :func:`group_by_key`): negatives come from the population answers come from
  (:func:`linked_population`), drawn among the events of the answer's key: its store degree band and
  its degree in the graph the file's contexts state (:func:`infile_degree`), preferring those the file
  names as often (:func:`infile_named`, :func:`named_first`).
- **Similarity** (:func:`rank_split`, :func:`band_tries`, :func:`within_band`): a negative's cosine to
  the queried event within a band of the answer's, on a side drawn at random, so the answer holds each
  similarity rank as often; the band widens (:data:`BAND_STEPS`) only where it holds too few.
- **Uses** (:class:`UseBalance`): a negative is preferably a text the file never shows as an answer and
  shows as a negative once, so a classifier that learns texts learns nothing.
  :class:`LazyVectors` encodes only the events a question considers (query, answer, candidates), once each.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

#: linked events above which similarity matching is off unless asked (encoding them costs more than the run)
SIMILAR_AUTO_MAX = 50_000
#: how far a negative's cosine to the query may be from the answer's, when negatives are matched in similarity
SIMILARITY_BAND = 0.10
#: the similarity band's widths tried in turn (multiples of the band), the next only when the last matched
#: too few: a wider band keeps the answer's similarity rank at chance (negatives as often below as above)
#: and costs no question the narrow band could match
BAND_STEPS = (1.0, 2.0)
#: in-file degrees matched exactly below this, by band above
EXACT_INFILE = 8
#: named counts matched exactly below this, by band above
EXACT_NAMED = 4


class Named(Protocol):
    """A drafted question as the file-level counts read it: its queried event, its answer (CRR: the related
    partner) and its context triples."""

    h: int
    t: int
    context: list[tuple[int, str, int]]


def degree_band(degree: np.ndarray) -> np.ndarray:
    """Each event's degree band: -1 without relations, else floor(log2(degree)) (1, 2-3, 4-7, ...)."""
    band = np.full(len(degree), -1, dtype=np.int8)
    has = degree > 0
    band[has] = np.minimum(np.floor(np.log2(degree[has])), 126).astype(np.int8)
    return band


def linked_population(pool: np.ndarray, band: np.ndarray) -> np.ndarray:
    """The events of ``pool`` with relations (``band`` >= 0), in ``pool``'s order: the population answers
    come from, and so the one negatives and Vague partners are drawn from."""
    return pool[band[pool] >= 0]


def exact_then_band(values: np.ndarray, exact: int) -> np.ndarray:
    """``values`` kept as they are below ``exact``, else ``exact`` plus their :func:`degree_band`."""
    band = degree_band(values).astype(np.int32)
    return np.where(values < exact, values, exact + band).astype(np.int32)


def infile_key(degree: np.ndarray) -> np.ndarray:
    """Each event's in-file degree key: the degree itself below :data:`EXACT_INFILE` (so that no choice
    has fewer or more links than the answer more often than chance), else its band above it."""
    return exact_then_band(degree, EXACT_INFILE)


def named_key(named: np.ndarray) -> np.ndarray:
    """Each event's key of how many questions name it (:func:`infile_named`): exact below
    :data:`EXACT_NAMED`, by band above (finer keys leave too few negatives per key on a small graph)."""
    return exact_then_band(named, EXACT_NAMED)


def infile_degree(size: int, contexts: Iterable[list[tuple[int, str, int]]]) -> np.ndarray:
    """Each event's degree in the graph the questions' contexts state: its distinct neighbours over
    every context triple (the audit's in-file degree, :func:`eventkg.queries.audit.checks.infile_graph`)."""
    pairs = {(a, b) for context in contexts for h, _, t in context for a, b in ((h, t), (t, h))}
    if not pairs:
        return np.zeros(size, dtype=np.int64)
    return np.bincount(np.fromiter((a for a, _ in pairs), dtype=np.int64, count=len(pairs)), minlength=size)


def infile_named(size: int, pending: Iterable[Named]) -> np.ndarray:
    """Each event's count of questions that name it as their queried event or in their context (the
    audit's "named elsewhere", :func:`eventkg.queries.audit.checks.infile_named`): answers are often the
    events other questions ask about, and a negative named so less often is told apart by that alone."""
    counts = np.zeros(size, dtype=np.int64)
    for p in pending:
        named = {p.h, *(x for h, _, t in p.context for x in (h, t))}
        counts[np.fromiter(named, dtype=np.int64, count=len(named))] += 1
    return counts


def match_key(infile: np.ndarray, band: np.ndarray) -> np.ndarray:
    """Each event's matching key once the file's contexts are known: its in-file degree key
    (:func:`infile_key`) and its store :func:`degree_band` in one integer (two events share a key exactly
    when they share both)."""
    return (infile + 1) * 256 + band.astype(np.int32) + 1


def group_by_key(events: np.ndarray, key: np.ndarray) -> dict[int, np.ndarray]:
    """``events`` grouped by ``key[event]``: key -> its events, each group in ``events``' order (where a
    negative of the answer's key is drawn from)."""
    if not len(events):
        return {}
    keys = key[events]
    order = np.argsort(keys, kind="stable")
    uniq, starts = np.unique(keys[order], return_index=True)
    return {int(k): part for k, part in zip(uniq, np.split(events[order], starts[1:]), strict=True)}


def named_first(cands: list[int], first: Sequence[int], same_named: Callable[[int], bool],
                room: Callable[[int], bool]) -> list[int]:
    """``cands`` (already in seeded order) reordered, stably: the sampler's proposals (``first``) first,
    then those the file names as often as the answer (``same_named``), then those with uses to spare
    (``room``)."""
    return sorted(cands, key=lambda z: (z not in first, not same_named(z), not room(z)))


class UseBalance:
    """Gold and negative uses per event position. A negative is preferably a text the file never shows as
    gold and shows as a negative once: a text seen both ways is, under cross-validation, mostly seen the
    other way in the training folds (a classifier then falls below chance), and a text seen as a negative
    several times is learnt as one (above chance)."""

    def __init__(self, size: int) -> None:
        self.gold = np.zeros(size, dtype=np.int32)
        self.neg = np.zeros(size, dtype=np.int32)

    def set_gold(self, answers: Sequence[int]) -> None:
        """Count the file's answers (every drafted one, before any negative is drawn)."""
        self.gold[:] = 0
        np.add.at(self.gold, np.asarray(answers, dtype=np.int64), 1)

    def room(self, z: int) -> bool:
        """Whether ``z`` may be a negative once more."""
        return int(self.gold[z]) == 0 and int(self.neg[z]) == 0

    def never_gold(self, z: int) -> bool:
        """Whether the file shows ``z`` as no answer."""
        return int(self.gold[z]) == 0

    def used(self, negatives: Sequence[int]) -> None:
        for z in negatives:
            self.neg[z] += 1


class LazyVectors:
    """Unit-norm sentence vectors of event positions, encoded on first use only (texts from ``text_of``)."""

    def __init__(self, text_of: Callable[[int], str], embed_model: str | None = None, encode: Any = None) -> None:
        self.text_of, self.embed_model, self._encode = text_of, embed_model, encode
        self.rows: dict[int, np.ndarray] = {}

    def _encoder(self) -> Any:
        if self._encode is None:
            from eventkg.queries.vectors.embeddings import Embedder

            self._encode = Embedder(self.embed_model, device="cpu").encode
        return self._encode

    def of(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors of ``positions`` (one row each), encoding those not seen yet in one pass."""
        todo = [int(p) for p in dict.fromkeys(int(p) for p in positions) if int(p) not in self.rows]
        if todo:
            vec = np.asarray(self._encoder()([self.text_of(p) for p in todo]), dtype=np.float32)
            vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
            self.rows.update(zip(todo, vec, strict=True))
        return np.stack([self.rows[int(p)] for p in positions]) if len(positions) else np.zeros((0, 1), np.float32)

    def cosines(self, h: int, cands: Sequence[int] | np.ndarray) -> np.ndarray:
        """Each candidate's cosine to ``h``."""
        if not len(cands):
            return np.zeros(0, dtype=np.float32)
        return self.of(cands) @ self.of([h])[0]


def band_tries(k_below: int, steps: Sequence[float] = BAND_STEPS) -> list[tuple[float, int]]:
    """The (band width multiple, negatives below the answer) pairs tried in turn for three similarity-matched
    negatives: the seeded number below (:func:`rank_split`) at each width, then, at the widest, the other
    numbers, nearest to the seeded one first (an answer whose band is one-sided still gets negatives)."""
    tries = [(step, k_below) for step in steps]
    return tries + [(steps[-1], k) for k in sorted({0, 1, 2, 3} - {k_below}, key=lambda k: abs(k - k_below))]


def within_band(cos: np.ndarray, target: float, width: float,
                steps: Sequence[float] = BAND_STEPS) -> tuple[np.ndarray, float] | None:
    """The indices of ``cos`` within ``step * width`` of ``target``, at the first of ``steps`` that holds
    any, and that step; None when the widest holds none (a CRR Vague partner's similarity band)."""
    for step in steps:
        near = np.flatnonzero(np.abs(cos - target) <= step * width)
        if len(near):
            return near, step
    return None


def rank_split(cos: np.ndarray, target: float, width: float, rng: random.Random) -> tuple[np.ndarray, np.ndarray, int]:
    """The candidates below and above ``target`` within ``width`` (indices into ``cos``), and how many of
    three negatives to take below: uniform over 0..3, so the answer holds each similarity rank as often."""
    below = np.flatnonzero((cos < target) & (cos >= target - width))
    above = np.flatnonzero((cos >= target) & (cos <= target + width))
    return below, above, rng.randrange(4)
