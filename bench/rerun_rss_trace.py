
"""Where a re-run's memory goes: an ASER ingest into a store, with VmRSS / VmHWM printed at each phase.

    .venv/bin/python -m bench.ingest_bench --child crash-first KG.db DIR/s.lbug   # a killed first run
    .venv/bin/python -m bench.rerun_rss_trace KG.db DIR/s.lbug                   # the re-run, traced
    .venv/bin/python -m bench.rerun_rss_trace KG2.db DIR/copy.lbug --map-events  # a second file onto a store

Phases: each key set built by scanning a stored table, each table whose waiting rows were
checked by digest (skipped or not), each bulk write message of the store, the end of the load
and the close; between them, a line each time the peak has grown by ``PEAK_STEP_MB`` since the
last line (sampled every 50 ms: a peak is often reached inside a phase, e.g. a checkpoint).
Works on a fresh store too (a clean ingest, traced). Linux only (reads /proc/self/status).
Wraps store methods for the trace; writes the same graph as ``eventkg ingest aser``.
"""

from __future__ import annotations

import sys
import threading
import time

from eventkg import ingest_source

PEAK_STEP_MB = 25


def peak_mb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) // 1024 for line in fh if line.startswith("VmHWM"))


def memory() -> str:
    """This process's resident set now and at its peak, in MB."""
    with open("/proc/self/status") as fh:
        fields = dict(line.split(":", 1) for line in fh if line.startswith(("VmRSS", "VmHWM")))
    rss, hwm = (int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM"))
    return f"RSS {rss:5d} MB  peak {hwm:5d} MB"


def main(kg: str, store_path: str, map_events: bool = False) -> None:
    from eventkg.graphstore import open_store
    from eventkg.graphstore.ladybug.bulk.waiting import WaitingRows
    from eventkg.graphstore.ladybug.stored_keys import StoredKeys

    start = time.perf_counter()

    def log(message: str) -> None:
        print(f"{time.perf_counter() - start:6.1f} s  {memory()}  {message}", flush=True)

    build_keyset = StoredKeys.get

    def traced_keyset(self, name):
        built = name not in self
        keys = build_keyset(self, name)
        if built and keys is not None and len(keys):
            log(f"key set of {name} built from the store ({len(keys):,} keys)")
        return keys

    check = WaitingRows._late_rows_are_stored

    def traced_check(self, name, path, rows):
        equal = check(self, name, path, rows)
        log(f"{rows:,} waiting {name} rows {'equal the stored table: skipped' if equal else 'differ: upserted'}")
        return equal

    StoredKeys.get, WaitingRows._late_rows_are_stored = traced_keyset, traced_check
    done = threading.Event()

    def sample() -> None:
        shown = 0
        while not done.wait(0.05):
            if (peak := peak_mb()) >= shown + PEAK_STEP_MB:
                log("(peak growing)")
                shown = peak

    threading.Thread(target=sample, daemon=True).start()
    store = open_store(store_path)
    log("opened")
    store.on_bulk_write = lambda message: log(message) if message else None
    ingest_source(store, "aser", kg, map_events=map_events)
    log("loaded")
    store.close()
    log("closed")
    done.set()


if __name__ == "__main__":
    if sys.argv[1:] in (["-h"], ["--help"]):
        print(__doc__)
        raise SystemExit(0)
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--map-events"]):
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2], map_events=sys.argv[3:] == ["--map-events"])
