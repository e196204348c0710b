"""``BucketIndex.search`` answers what ``np.searchsorted`` answers (side left), for any sorted
uint64 keys: repeated keys, the ends of the range, keys crowded into one bucket, no keys at all."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from eventkg.graphstore.keyset import BucketIndex

U64 = st.integers(0, 2**64 - 1)


def _check(keys: list[int], needles: list[int]) -> None:
    hay = np.array(sorted(keys), np.uint64)
    q = np.array(needles, np.uint64)
    assert BucketIndex(hay).search(q).tolist() == np.searchsorted(hay, q).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(U64, max_size=300), st.lists(U64, max_size=100))
def test_bucket_search_equals_searchsorted(keys, needles):
    _check(keys, needles + keys[:50])  # stored keys asked too: their first position


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=200), st.integers(0, 63), st.lists(st.integers(0, 60), max_size=60))
def test_crowded_buckets_and_repeats(small, shift, asked):
    """Keys sharing their top bits (one bucket holds most of them) and repeated keys."""
    keys = [min(v << shift, 2**64 - 1) for v in small]
    _check(keys, [min(v << shift, 2**64 - 1) for v in asked] + [0, 2**64 - 1])


def test_many_uniform_keys():
    rng = np.random.default_rng(3)
    hay = np.sort(rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64, endpoint=True))
    q = np.concatenate([hay[::7], rng.integers(0, 2**64 - 1, 50_000, dtype=np.uint64, endpoint=True),
                        np.array([0, 2**64 - 1], np.uint64)])
    assert (BucketIndex(hay).search(q) == np.searchsorted(hay, q)).all()
