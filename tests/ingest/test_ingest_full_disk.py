"""An ingest on a bad day of the disk: too small for it, full in the middle of it, read-only; a damaged
sidecar; a reader beside a running ingest.

The disk is a real small tmpfs (``small_disk``), the input ASER-shaped ``KG.db`` files from
:mod:`tests.support.synthetic`. A disk too small for the ingest's estimate is refused before
anything is written; a disk that fills anyway is one another writer fills once the ingest has
begun (:func:`ingest_while_the_disk_fills`). What must hold after a full disk: one line that says the disk is
full (nothing about memory), no spool folder, no temporary or recovery file left, the store readable
at once, and either as it was or marked unfinished; freeing the disk and running the same ingest
again gives the store a clean ingest gives (its counts from a store ingested on a roomy disk).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.bad_days import copy_sample, digest
from tests.support.small_disk import entries, grow
from tests.support.synthetic import make_aser_kg

pytestmark = pytest.mark.slow

#: a disk with room for the pre-ingest estimate of ``big`` (alone or after ``small``), which the fill
#: tests then take down to the sizes the ingest runs out of room at
DISK_MIB = 96
#: what an embedded store keeps beside its file when no ingest runs (no spool, no .tmp, .shadow, .wal)
AT_REST = {"s.lbug", "s.lbug.digests", "s.lbug.origins", "s.lbug.ingests"}


def eventkg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eventkg", *args], capture_output=True, text=True, timeout=600)


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def stats(store: Path) -> tuple[dict, str]:
    """``stats --json`` of ``store`` (it must answer) and what it warned."""
    proc = eventkg("--store", str(store), "stats", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


@pytest.fixture(scope="module")
def kgs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two ASER-shaped sources: ``small`` (50K events, ~45 MB) and ``big`` (200K events, ~180 MB)."""
    root = tmp_path_factory.mktemp("kgs")
    out = {}
    for name, events, seed in (("small", 50_000, 12), ("big", 200_000, 11)):
        (root / name).mkdir()
        make_aser_kg(root / name / "KG.db", events, 3 * events, seed=seed)
        out[name] = root / name
    return out


@pytest.fixture(scope="module")
def reference(kgs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The counts of clean ingests on a roomy disk: ``big`` alone, and ``small`` then ``big``."""
    root = tmp_path_factory.mktemp("reference")
    out = {}
    for name, sources in (("big", ["big"]), ("both", ["small", "big"])):
        store = root / f"{name}.lbug"
        for source in sources:
            assert eventkg("--store", str(store), "ingest", "aser", str(kgs[source]), "--json").returncode == 0
        out[name] = stats(store)[0]
    return out


def test_a_disk_too_small_is_refused_before_anything_is_written(small_disk, kgs) -> None:
    disk = small_disk(16)
    line = error_line(eventkg("--store", str(disk / "s.lbug"), "ingest", "aser", str(kgs["big"])))
    assert "disk full" in line and "needs about" in line and str(disk) in line, line
    assert entries(disk) == []  # not even a 0-byte store file


def test_an_ingest_with_a_row_limit_is_not_refused_for_the_whole_input(small_disk, kgs) -> None:
    """With ``--limit`` the share of the input read is not known: the disk is asked for the fixed part only."""
    disk = small_disk(16)
    store = disk / "s.lbug"
    assert eventkg("--store", str(store), "ingest", "aser", str(kgs["big"]), "--limit", "1000").returncode == 0
    assert sum(stats(store)[0]["nodes"].values()) > 0


@pytest.mark.parametrize("into", ["a new store", "a stored graph"])
def test_an_ingest_whose_spool_does_not_fit_is_refused_before_it_writes(small_disk, kgs, into) -> None:
    """The store's own growth fits these disks, the ingest's peak (its spool and staged tables
    beside the store) does not: the fill tests below run out of room on disks of these sizes."""
    disk = small_disk(60 if into == "a new store" else 64)
    store = disk / "s.lbug"
    if into == "a stored graph":
        assert eventkg("--store", str(store), "ingest", "aser", str(kgs["small"])).returncode == 0
    before = (digest(store), stats(store)) if store.exists() else None
    line = error_line(eventkg("--store", str(store), "ingest", "aser", str(kgs["big"])))
    assert "needs about" in line and "spool" in line and str(disk) in line and "nothing was written" in line, line
    if before is None:
        assert entries(disk) == []
    else:
        assert set(entries(disk)) <= AT_REST, entries(disk)
        assert (digest(store), stats(store)) == before


def ingest_while_the_disk_fills(store: Path, kg: Path, room_mib: int) -> subprocess.CompletedProcess[str]:
    """``ingest aser KG`` into ``store`` on a small disk that another writer fills once the ingest has
    begun (its spool folder is there: the pre-ingest check has passed), leaving the file system
    ``room_mib`` MiB in all for what the ingest and the store hold: a disk that fills anyway."""
    disk = store.parent
    args = [sys.executable, "-m", "eventkg", "--store", str(store), "ingest", "aser", str(kg)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not any(disk.glob(".eventkg-spool-*")):
            assert proc.poll() is None and time.monotonic() < deadline, "the ingest ended before its spool was seen"
            time.sleep(0.002)
        st = os.statvfs(disk)
        with open(disk / "filler", "wb") as fh:
            os.posix_fallocate(fh.fileno(), 0, st.f_blocks * st.f_frsize - (room_mib << 20))
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def free_the_disk(disk: Path) -> None:
    (disk / "filler").unlink()
    grow(disk, 256)


def test_a_fresh_ingest_that_fills_the_disk(small_disk, kgs, reference) -> None:
    disk = small_disk(DISK_MIB)  # room for the ingest's estimate: the check passes
    store = disk / "s.lbug"
    line = error_line(ingest_while_the_disk_fills(store, kgs["big"], 60))
    assert "disk full" in line and str(disk) in line and "free" in line, line
    assert "EVENTKG_MEMORY_MB" not in line and "needs about" not in line, line  # full while it ran
    assert set(entries(disk)) - {"filler"} <= AT_REST, entries(disk)
    counts, warned = stats(store)
    assert sum(counts["nodes"].values()) == 0 and sum(counts["edges"].values()) == 0 and not warned  # as it was: empty
    free_the_disk(disk)
    assert eventkg("--store", str(store), "ingest", "aser", str(kgs["big"])).returncode == 0
    assert stats(store) == (reference["big"], "")
    assert set(entries(disk)) <= AT_REST, entries(disk)


@pytest.mark.parametrize("mib", [64, 70, 76])  # out of space holding rows, writing them, checkpointing them
def test_a_full_disk_in_the_middle_of_an_ingest_into_a_stored_graph(small_disk, kgs, reference, mib) -> None:
    disk = small_disk(DISK_MIB)
    store = disk / "s.lbug"
    assert eventkg("--store", str(store), "ingest", "aser", str(kgs["small"])).returncode == 0
    before = stats(store)
    line = error_line(ingest_while_the_disk_fills(store, kgs["big"], mib))
    assert "disk full" in line and "free" in line and "EVENTKG_MEMORY_MB" not in line, line
    assert "needs about" not in line, line  # the check passed: the disk filled while it ran
    assert set(entries(disk)) - {"filler"} <= AT_REST, entries(disk)  # no spool, no .shadow/.wal/.tmp
    after = stats(store)  # readable at once, by a read-only command
    if after != before:  # else: the store as it was
        assert "unfinished ingest" in after[1], after[1]  # ... or the truth told
    free_the_disk(disk)
    assert eventkg("--store", str(store), "ingest", "aser", str(kgs["big"])).returncode == 0
    assert stats(store) == (reference["both"], "")


def test_a_read_only_mount_is_named(small_disk, samples_dir) -> None:
    disk = small_disk(8, read_only=True)
    line = error_line(eventkg("--store", str(disk / "s.lbug"), "ingest", "ev2", str(samples_dir / "ev2")))
    assert "read-only" in line and "permission denied" not in line, line


def test_a_damaged_origins_sidecar_is_named_before_the_graph_is_written(tmp_path, samples_dir) -> None:
    store = tmp_path / "s.lbug"
    assert eventkg("--store", str(store), "ingest", "ev2", str(samples_dir / "ev2")).returncode == 0
    origins = Path(f"{store}.origins")
    origins.write_text('{"ev2": "ingest/sam', encoding="utf-8")  # cut
    before = digest(store)
    clomo = copy_sample("clomo", tmp_path / "clomo")
    line = error_line(eventkg("--store", str(store), "ingest", "clomo", str(clomo)))
    assert str(origins) in line and "damaged" in line and "rm " in line, line
    assert digest(store) == before  # nothing of clomo was written
    counts, warned = stats(store)
    assert not warned  # and no unfinished mark: the store is as it was
    origins.unlink()  # what the message says to do
    assert eventkg("--store", str(store), "ingest", "clomo", str(clomo)).returncode == 0
    assert digest(store) != before


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the ingest ended before it was seen running"
        time.sleep(0.05)


def test_a_reader_tells_a_running_ingest_from_an_unfinished_one(tmp_path, kgs) -> None:
    store = tmp_path / "s.lbug"
    assert eventkg("--store", str(store), "ingest", "aser", str(kgs["small"])).returncode == 0
    lock = Path(f"{store}.ingesting")
    running = subprocess.Popen([sys.executable, "-m", "eventkg", "--store", str(store), "ingest", "aser",
                                str(kgs["big"])], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lock, running)
        _, warned = stats(store)
        assert "being written by an ingest now" in warned and f"pid {running.pid}" in warned, warned
        refused = error_line(eventkg("--store", str(store), "export", "rdf", str(tmp_path / "g.ttl")))
        assert "being written by an ingest now" in refused and "run that ingest again" not in refused, refused
        os.kill(running.pid, signal.SIGKILL)  # now the ingest is unfinished, not running
        running.wait(60)
    finally:
        if running.poll() is None:
            running.kill()
    _, warned = stats(store)
    assert "unfinished ingest" in warned and "run that ingest again" in warned, warned
    assert "being written" not in warned
