"""``tables.dedupe``: one row per key, merged as rows are (later non-null values win, sources
unioned), whether the repeats merge in one part or in several (``MERGE_ROWS``)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventkg.graphstore import tables
from eventkg.graphstore.model import DOUBLE, STRING

PROPS = {"text": STRING, "frequency": DOUBLE}
ROWS = st.lists(st.tuples(st.sampled_from("abcdefg"), st.sets(st.sampled_from(["aser", "ev2", "eeckg"]), max_size=2),
                          st.none() | st.sampled_from(["x", "y", "z"]), st.none() | st.floats(0, 9, allow_nan=False)),
                max_size=40)


def _expected(rows) -> dict[str, tuple]:
    """Written out by hand: per id, the union of its sources and each property's last non-null value."""
    out: dict[str, list] = {}
    for key, sources, text, freq in rows:
        sources_seen, last_text, last_freq = out.get(key, [set(), None, None])
        out[key] = [sources_seen | sources, text if text is not None else last_text,
                    freq if freq is not None else last_freq]
    return {k: (",".join(sorted(s)), t, f) for k, (s, t, f) in out.items()}


@pytest.mark.parametrize("merge_rows", [1, 3, 50_000])
@settings(max_examples=60, deadline=None)
@given(rows=ROWS)
def test_dedupe_merges_each_key_once_in_one_part_or_many(merge_rows, rows):
    table = pa.table({"id": [r[0] for r in rows], "sources": [",".join(sorted(r[1])) for r in rows],
                      "text": [r[2] for r in rows], "frequency": [r[3] for r in rows]},
                     schema=tables.row_schema(("id",), PROPS))
    kept, tables.MERGE_ROWS = tables.MERGE_ROWS, merge_rows
    try:
        out, (h1, h2) = tables.dedupe(table, ("id",), PROPS)
    finally:
        tables.MERGE_ROWS = kept
    got = {r["id"]: (r["sources"], r["text"], r["frequency"]) for r in out.to_pylist()}
    assert out.num_rows == len(got) == len(_expected(rows)) and got == _expected(rows)
    assert out.schema == table.schema and len(h1) == len(h2) == out.num_rows
