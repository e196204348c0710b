"""The store's one string hash (graphstore.hashing) against a plain-Python reading of its definition,
and the digest values saved stores already hold (they must survive any rewrite of the numpy code)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from eventkg.graphstore import hashing
from eventkg.graphstore.digest import table_digest
from eventkg.graphstore.keyset import edge_fingerprints, fingerprints

M64 = (1 << 64) - 1
SEEDS = (np.uint64(0x1234567887654321), np.uint64(0x0F0F0F0F0F0F0F0F))


def ref_mix(z: int) -> int:
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def ref_hash(value: str, seed: int) -> int:
    """The module docstring's definition, one Python int at a time."""
    data = value.encode()
    total = 0
    for j in range(0, len(data), 8):
        word = int.from_bytes(data[j : j + 8].ljust(8, b"\0"), "little")
        total += ref_mix(word ^ ref_mix(j // 8 * 0x9E3779B97F4A7C15 + seed))
    return ref_mix(total + ref_mix(len(data) ^ seed))


def expected(values: list[str]) -> list[list[int]]:
    return [[ref_hash(v, int(s)) for v in values] for s in SEEDS]


def got(values) -> list[list[int]]:
    return [[int(x) for x in lane] for lane in hashing.string_hashes(values, SEEDS)]


IDS = [f"{i * 7919:020x}" for i in range(50)]  # one length: the reshape path
MIXED = ["", "a", "abcdefgh", "abcdefghi", "é" * 9, "an event with several words", "x" * 100, "\x00\x00"]


@pytest.mark.parametrize("values", [IDS, MIXED, [""] * 5, ["abc"]], ids=["ids", "mixed", "empty-strings", "one"])
def test_the_numpy_hash_is_the_definition(values):
    assert got(pa.array(values)) == expected(values)
    assert got(values) == expected(values)  # a Python list
    assert got(pa.array(values, pa.large_string())) == expected(values)


def test_slices_chunks_and_chunk_boundaries_do_not_change_a_hash(monkeypatch):
    arr = pa.array(MIXED * 20)
    assert got(arr.slice(3, 17)) == expected((MIXED * 20)[3:20])
    assert got(pa.chunked_array([arr.slice(0, 5), arr.slice(5)])) == expected(MIXED * 20)
    monkeypatch.setattr(hashing, "CHUNK_BYTES", 16)  # many small chunks, and strings longer than one
    assert got(arr) == expected(MIXED * 20)
    assert got(pa.array(IDS)) == expected(IDS)


def test_values_saved_before_the_hashers_were_one_are_unchanged():
    """Pinned from the code of 53d5b66 (two hashers): saved ``<store>.digests`` stay valid."""
    table = pa.table({"id": ["e1", "event-2", ""], "text": ["I eat an apple", "é", None],
                      "sources": [["aser"], ["ev2", "aser"], []], "frequency": [1.5, None, 3.0]})
    assert table_digest(table).to_json() == [3, 365438036082559210, 182436283394604247]


def test_fingerprints_are_two_independent_hashes_and_edges_are_ordered_pairs():
    h1, h2 = fingerprints(IDS)
    assert len(set(h1.tolist())) == len(IDS) and not (h1 == h2).any()
    a, b = edge_fingerprints(IDS[:10], IDS[10:20])
    c, d = edge_fingerprints(IDS[10:20], IDS[:10])
    assert not (a == c).any() and not (b == d).any()


@pytest.mark.parametrize("values", [[None], [None, "a"], ["a", "b", None, "a"]])
def test_a_long_string_column_of_few_values_or_only_nulls_digests_row_by_row(values):
    """A long string column of few distinct values is hashed through a dictionary: its digest is
    the sum of its rows' digests, each hashed alone, and a column of nulls only has one too (its
    empty dictionary raised IndexError, found saving 50,000 questions in one bulk session)."""
    from eventkg.graphstore.digest import FEW_SAMPLE

    rows = 4 * FEW_SAMPLE + 3
    column = pa.array([values[i % len(values)] for i in range(rows)], pa.string())
    whole = table_digest(pa.table({"id": [str(i) for i in range(rows)], "v": column}))
    parts = [table_digest(pa.table({"id": [str(i)], "v": column.slice(i, 1)})) for i in range(rows)]
    assert whole == sum(parts[1:], parts[0])
