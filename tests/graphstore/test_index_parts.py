"""The engine's key hash ported to numpy (checked against LadybugDB's own ``hash()``), and the
ranges of hash indexes a big node table's COPYs are cut by."""

from __future__ import annotations

import ladybug
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventkg.graphstore.ladybug.index_parts import (
    FILL,
    HASH_INDEXES,
    index_positions,
    index_ranges,
    key_hashes,
    split_by_range,
)


@pytest.fixture(scope="module")
def engine():
    return ladybug.Connection(ladybug.Database(":memory:"))


def _engine_hashes(conn, keys: list[str]) -> list[int]:
    return [int(conn.execute("RETURN hash($k)", {"k": k}).get_next()[0]) for k in keys]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=30))
def test_key_hashes_are_the_engines(engine, keys):
    """Any strings, any lengths (multiple of 8 or not, empty, non-ASCII), in one array."""
    assert key_hashes(keys).tolist() == _engine_hashes(engine, keys)


def test_key_hashes_of_ids_of_one_length_and_of_a_sliced_array(engine):
    """The hot path (every id 12 characters) and an Arrow array that starts at an offset."""
    ids = [f"{i:012x}" for i in range(0, 5000, 7)]
    assert key_hashes(pa.array(ids)).tolist() == _engine_hashes(engine, ids)
    sliced = pa.chunked_array([pa.array(["x" * 9, "abcdefgh", "ü" * 5, ""]).slice(1)])
    assert key_hashes(sliced).tolist() == _engine_hashes(engine, ["abcdefgh", "ü" * 5, ""])


@pytest.mark.parametrize(("rows", "limit"), [(10, 100), (100, 40), (9_650_000, 2_684_354), (53_000_000, 2_684_354),
                                             (10**12, 100_000)])
def test_index_ranges_are_the_fewest_whose_expected_rows_fit_one_copy(rows, limit):
    bounds = index_ranges(rows, limit)
    widths = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == HASH_INDEXES and (widths >= 1).all() and widths.max() - widths.min() <= 1
    parts = len(widths)
    if parts < HASH_INDEXES:
        assert rows * widths.max() / HASH_INDEXES <= FILL * limit
    if parts > 1:  # one range fewer would not fit
        assert rows * -(-HASH_INDEXES // (parts - 1)) / HASH_INDEXES > FILL * limit
    assert (rows <= FILL * limit) == (parts == 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=16), unique=True, max_size=200), st.integers(1, 8))
def test_split_by_range_keeps_every_row_once_each_in_its_range_in_order(keys, parts):
    bounds = np.linspace(0, HASH_INDEXES, parts + 1).round().astype(np.int64)
    table = pa.table({"id": pa.array(keys, pa.string()), "n": pa.array(range(len(keys)), pa.int64())})
    pieces = list(split_by_range(table, bounds))
    assert len(pieces) == parts
    assert sorted(n for p in pieces for n in p.column("n").to_pylist()) == list(range(len(keys)))
    positions = (np.array([h for h in key_hashes(keys)], np.uint64) >> np.uint64(56)).astype(int)
    for i, piece in enumerate(pieces):
        n = piece.column("n").to_pylist()
        assert n == sorted(n)  # the order held
        assert all(bounds[i] <= positions[k] < bounds[i + 1] for k in n)
    assert index_positions(keys).tolist() == positions.tolist()
