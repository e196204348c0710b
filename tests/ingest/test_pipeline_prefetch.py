"""The loader thread: items in order, loader errors raised at the consumer, early stops close the loader."""

from __future__ import annotations

import threading

import pytest

from eventkg.ingest.pipeline import Prefetch


def test_items_arrive_in_order_and_the_loader_runs_in_another_thread():
    threads = []

    def items():
        for i in range(50):
            threads.append(threading.current_thread().name)
            yield i

    with Prefetch(items()) as got:
        assert list(got) == list(range(50))
        assert got.count == 50
    assert set(threads) == {"eventkg-loader"}


def test_a_loader_error_is_raised_where_the_items_are_consumed():
    def items():
        yield 1
        raise ValueError("bad row in the file")

    with Prefetch(items()) as got:
        assert next(got) == 1
        with pytest.raises(ValueError, match="bad row in the file"):
            next(got)
        assert list(got) == []


def test_stopping_early_closes_the_loader_and_its_thread():
    closed = threading.Event()

    def items():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()  # where a loader releases its cursor

    with Prefetch(items(), depth=2) as got:
        assert next(got) == 0
    assert closed.is_set()
    assert not got._thread.is_alive()


def test_nodes_done_writes_the_held_nodes_before_the_edges_come(tmp_path):
    """A loader's ``nodes_done`` chunk lets the store write its held nodes at once (while the
    loader reads on), instead of when the first batch with edges is ready."""
    import pyarrow as pa

    from eventkg.graphstore import open_store
    from eventkg.ingest.pipeline import Chunk, run

    seen: list[dict] = []

    def items(store):
        ids = [f"e{i}" for i in range(10)]
        nodes = pa.table({"id": ids, "text": ids, "level": ["schema"] * 10, "sources": ["t"] * 10})
        yield Chunk(10, {"Event": nodes})
        yield Chunk(0, nodes_done=True)
        seen.append(store.state().held_rows)  # what the session still holds when the edges come
        edges = pa.table({"src": ids[:-1], "dst": ids[1:], "sources": ["t"] * 9, "count": [1.0] * 9})
        yield Chunk(9, {}, {"SYNCHRONOUS": edges})

    with open_store(str(tmp_path / "s.lbug")) as store:
        report = run(store, "t", [], items(store))
        assert seen == [{}]  # the nodes were written before the edge chunk was made
        assert report.rows == 19 and store.counts()["edges"]["SYNCHRONOUS"] == 9
