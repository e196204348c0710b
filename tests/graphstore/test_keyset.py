"""Key sets: a :class:`KeySet` filled in batches answers as the set of every key added, and the
staging of a held node table picks the rows whose id is among the repeated ones exactly as
``pc.is_in`` does, with fingerprints that share a first hash settled on the ids themselves."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from eventkg.graphstore.keyset import KeySet, fingerprints
from eventkg.graphstore.ladybug.bulk.held_tables import _among, _id_set, _repeat_masks

IDS = st.text(alphabet="abcdefgh", min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(st.lists(IDS, max_size=60), st.lists(st.lists(IDS, max_size=30), max_size=4))
def test_ids_among_the_repeated_ones_equal_is_in(wanted, slices):
    ids = pa.chunked_array([pa.array(wanted[:5], pa.string()), pa.array(wanted[5:], pa.string())])
    keys = _id_set(ids)
    for part in slices:
        column = pa.chunked_array([pa.array(part, pa.string())])
        assert _among(column, ids, keys).to_pylist() == pc.is_in(column, value_set=ids).to_pylist()


def test_a_first_hash_shared_with_another_id_is_settled_on_the_ids():
    """A set whose only entry has "a"'s first hash but another second hash: "a" is unsure there,
    so it is compared with the ids themselves (found), and "b" (not in the set) is not."""
    h1, h2 = fingerprints(pa.array(["a"]))
    keys = KeySet()
    keys.add(h1, h2 + np.uint64(1))
    assert keys.lookup(h1, h2)[1].tolist() == [True]  # unsure
    ids = pa.chunked_array([pa.array(["a"])])
    assert _among(pa.array(["a", "b"]), ids, keys).to_pylist() == [True, False]
    assert _among(pa.array(["a"]), pa.chunked_array([pa.array(["c"])]), keys).to_pylist() == [False]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=40), max_size=12),
       st.lists(st.integers(0, 2**64 - 1), max_size=40))
def test_a_key_set_filled_in_batches_answers_as_the_set_of_its_keys(batches, asked):
    keys, added = KeySet(), []
    for batch in batches:
        batch = [k for k in dict.fromkeys(batch) if k not in set(added)]  # the callers add each key once
        keys.add(np.array(batch, np.uint64), np.array(batch, np.uint64) ^ np.uint64(0xABCDEF))
        added += batch
        assert len(keys) == len(added)
    q = np.array(asked + added[:20], np.uint64)
    present, unsure = keys.lookup(q, q ^ np.uint64(0xABCDEF))
    assert present.tolist() == [int(k) in set(added) for k in q] and not unsure.any()
    absent, unsure = keys.lookup(q, q ^ np.uint64(1))  # same first hash, another second: unsure when stored
    assert not absent.any() and unsure.tolist() == [int(k) in set(added) for k in q]


def test_many_keys_asked_at_once_over_several_runs():
    """Past 4096 needles the lookup sorts them once for every run; answers come back in the
    order asked."""
    rng = np.random.default_rng(3)
    keys, added = KeySet(), []
    for size in (9000, 3000, 1000, 200, 5000, 40):
        batch = rng.integers(0, 2**63, size).astype(np.uint64)
        keys.add(batch, ~batch)
        added.append(batch)
    stored = np.concatenate(added)
    q = rng.permutation(np.concatenate([stored[rng.integers(0, len(stored), 6000)],
                                        rng.integers(0, 2**63, 6000).astype(np.uint64)]))
    present, unsure = keys.lookup(q, ~q)
    assert present.tolist() == np.isin(q, stored).tolist() and not unsure.any()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=60))
def test_repeat_masks_mark_each_repeated_keys_first_row_and_its_later_rows(keys):
    """Against a dict of the rows seen: keys drawn from few values, so first hashes are shared with
    and without the second, and a key is held once, twice or more."""
    h1 = np.array([a for a, _ in keys], np.uint64)
    h2 = np.array([b for _, b in keys], np.uint64)
    first, later = _repeat_masks(h1, h2)
    seen: dict[tuple[int, int], int] = {}
    want_first, want_later = [False] * len(keys), [False] * len(keys)
    for i, key in enumerate(keys):
        if key in seen:
            want_later[i] = True
            want_first[seen[key]] = True
        else:
            seen[key] = i
    assert first.tolist() == want_first and later.tolist() == want_later
