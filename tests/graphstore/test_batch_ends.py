"""A batch says its edges' ends are known only when every chunk in it says so (``Batch.ends_known``):
then the embedded store skips its endpoint lookups, so one row-built edge must turn it off."""

from __future__ import annotations

import pyarrow as pa

from eventkg.ingest.pipeline import Chunk, Row, _Batcher


def _edges() -> dict[str, pa.Table]:
    return {"CAUSES": pa.table({"src": ["a"], "dst": ["b"], "sources": ['["t"]'], "weight": [1.0]})}


def test_chunks_that_know_their_ends_make_a_batch_that_does():
    batcher = _Batcher()
    batcher.add_chunk(Chunk(1, {}, _edges(), ends_known=True))
    batcher.add_chunk(Chunk(1, {"Event": pa.table({"id": ["c"]})}))  # nodes only: says nothing of ends
    assert batcher.take().ends_known


def test_one_chunk_or_row_that_does_not_turns_it_off_until_the_next_batch():
    batcher = _Batcher()
    batcher.add_chunk(Chunk(1, {}, _edges(), ends_known=True))
    batcher.add_chunk(Chunk(1, {}, _edges()))
    assert not batcher.take().ends_known
    batcher.add_chunk(Chunk(1, {}, _edges(), ends_known=True))
    batcher.add(Row(nodes=[], edges=[("CAUSES", {"src": "a", "dst": "b", "sources": ["t"]})]))
    assert not batcher.take().ends_known
    batcher.add_chunk(Chunk(1, {}, _edges(), ends_known=True))
    assert batcher.take().ends_known
