"""The loader thread: items in order, loader errors raised at the consumer, early stops close the loader."""

from __future__ import annotations

import threading

import pytest

from ingest.pipeline import Prefetch


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
