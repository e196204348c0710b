"""What keeps CEC negatives from telling the answer apart: how often each text is gold or a negative, and
where the answer sits among its negatives in similarity to the queried event.

Negatives come from the population answers come from, so a text may be an answer in one question and a
negative in others. :class:`UseBalance` draws negatives among texts never gold and not yet a negative,
so a classifier that learns texts learns nothing. :class:`LazyVectors` encodes
only the events a question considers (query, answer, candidates), once each; :func:`rank_split` draws a
negative's side of the answer's similarity at random, so the answer is the most (or least) similar
choice as often as chance says.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: linked events above which similarity matching is off unless asked (encoding them costs more than the run)
SIMILAR_AUTO_MAX = 50_000


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

    def __init__(self, text_of: Callable[[int], str], model: str | None = None, encode: Any = None) -> None:
        self.text_of, self.model, self._encode = text_of, model, encode
        self.rows: dict[int, np.ndarray] = {}

    def _encoder(self) -> Any:
        if self._encode is None:
            from eventkg.queries.vectors.embeddings import Embedder

            self._encode = Embedder(self.model, device="cpu").encode
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


def rank_split(cos: np.ndarray, target: float, width: float, rng: random.Random) -> tuple[np.ndarray, np.ndarray, int]:
    """The candidates below and above ``target`` within ``width`` (indices into ``cos``), and how many of
    three negatives to take below: uniform over 0..3, so the answer holds each similarity rank as often."""
    below = np.flatnonzero((cos < target) & (cos >= target - width))
    above = np.flatnonzero((cos >= target) & (cos <= target + width))
    return below, above, rng.randrange(4)
