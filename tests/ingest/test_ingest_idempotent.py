"""Re-running an ingest changes nothing; an ingest killed midway, run again, ends like a clean run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from tests.support.expected_counts import fingerprint
from tests.support.paths import CHECKOUT
from tests.support.synthetic import make_aser_kg

ROOT = CHECKOUT


def load_all(store, samples: Path) -> None:
    ingest_source(store, "ev2", samples / "ev2")
    ingest_source(store, "eeckg", samples / "eeckg")
    ingest_source(store, "aser", samples / "aser", map_events=True, concepts=samples / "aser" / "concept.db")
    ingest_source(store, "abspyramid", samples / "abspyramid")
    ingest_source(store, "clomo", samples / "clomo")


def test_ingesting_twice_changes_nothing(store, samples_dir):
    load_all(store, samples_dir)
    first = fingerprint(store)
    load_all(store, samples_dir)
    assert fingerprint(store) == first


def test_small_batches_give_the_same_graph(embedded_store, tmp_path, samples_dir):
    ingest_source(embedded_store, "ev2", samples_dir / "ev2", batch_size=300)
    other = open_store(str(tmp_path / "other.lbug"))
    try:
        ingest_source(other, "ev2", samples_dir / "ev2")
        assert fingerprint(embedded_store) == fingerprint(other)
    finally:
        other.close()


def _cli(store: Path, kg: Path) -> list[str]:
    return [sys.executable, "-m", "eventkg", "--store", str(store), "ingest", "aser", str(kg), "--batch-size", "1000",
            "--map-events", "--json"]


@pytest.mark.slow
def test_killed_ingest_rerun_equals_clean_run(tmp_path):
    kg = make_aser_kg(tmp_path / "KG.db", 3_000, 9_000)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    clean = tmp_path / "clean.lbug"
    start = time.perf_counter()
    subprocess.run(_cli(clean, kg), check=True, env=env, cwd=ROOT, capture_output=True)
    elapsed = time.perf_counter() - start

    for attempt, fraction in enumerate((0.5, 0.3, 0.15, 0.05)):  # machines are noisy: kill earlier if it won
        crashed = tmp_path / f"crashed{attempt}.lbug"
        proc = subprocess.Popen(_cli(crashed, kg), env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(elapsed * fraction)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            break
    else:
        pytest.fail("the ingest always finished before it could be killed; use a bigger input")
    subprocess.run(_cli(crashed, kg), check=True, env=env, cwd=ROOT, capture_output=True)

    with open_store(str(clean), read_only=True) as a, open_store(str(crashed), read_only=True) as b:
        assert fingerprint(b) == fingerprint(a)
