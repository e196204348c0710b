"""Read a source in a child process while this one writes to the store.

Parsing a big file and writing it cost about the same, and neither SQLite row fetching nor
LadybugDB's COPY lets another Python thread run, so a loader's item stream can be moved
to a child process: it yields items (Arrow tables pickle as buffers) through a queue a
few items deep, so memory stays bounded. Errors raised in the child are raised again here
with their type and message. The child exits when this process goes away, even when it is
killed, so a killed ingest leaves nothing running.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_mod
from collections.abc import Callable, Iterator
from typing import Any

from graphstore import StoreError
from ingest.errors import IngestError

DEPTH = 2  # items read ahead of the writer
POLL_S = 1.0  # how often each side checks that the other is still alive


def prefetched(factory: Callable[..., Iterator[Any]], *args: Any, **kwargs: Any) -> Iterator[Any]:
    """Yield ``factory(*args, **kwargs)``'s items, produced in a child process."""
    ctx = multiprocessing.get_context("spawn")  # the parent runs engine threads: never fork it
    items = ctx.Queue(maxsize=DEPTH)
    proc = ctx.Process(target=_produce, args=(items, os.getpid(), factory, args, kwargs), daemon=True)
    proc.start()
    try:
        while True:
            try:
                kind, payload = items.get(timeout=POLL_S)
            except queue_mod.Empty:
                if not proc.is_alive():
                    raise StoreError(f"the reader process stopped unexpectedly (exit code {proc.exitcode})") from None
                continue
            if kind == "item":
                yield payload
            elif kind == "done":
                return
            else:
                raise _rebuilt(payload)
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        items.close()


def _produce(items: Any, parent: int, factory: Callable[..., Iterator[Any]], args: tuple, kwargs: dict) -> None:
    """The child: run the factory, hand each item over, stop if the parent has gone."""

    def put(message: tuple) -> None:
        while True:
            try:
                items.put(message, timeout=POLL_S)
                return
            except queue_mod.Full:
                if os.getppid() != parent:
                    os._exit(1)  # orphaned (the parent was killed): nobody will read

    try:
        for item in factory(*args, **kwargs):
            put(("item", item))
    except IngestError as exc:
        put(("error", (type(exc), (exc.file, exc.line, exc.reason))))
    except StoreError as exc:
        put(("error", (type(exc), (str(exc),))))
    except Exception as exc:  # noqa: BLE001 - anything else is reported, not swallowed
        put(("error", (StoreError, (f"reading failed: {type(exc).__name__}: {exc}",))))
    else:
        put(("done", None))
    items.close()
    items.join_thread()


def _rebuilt(payload: tuple) -> BaseException:
    cls, args = payload
    return cls(*args)
