"""Encoding event texts for a vector index in saved chunks, so an interrupted build resumes.

The encoder is the slow part of a build (~500 texts/s on 2 CPU cores: a million events take
about half an hour). Texts (ordered by id) are encoded in chunks of the plan's ``chunk`` size;
each chunk's vectors are saved as they finish in a work folder with the plan (model,
fingerprint, chunk size). Asked again for the same plan, :func:`encode_chunks` reuses the saved
chunks and gives the same vectors: chunk boundaries and contents depend only on the sorted ids.
Before the first text is encoded, ``notice`` hears how many texts will be embedded and an ETA
measured on a probe batch (builds of at least :data:`NOTICE_MIN` texts); ``progress`` hears
``(done, total)`` after every chunk (first with what a resumed build already had).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from eventkg.queries.embeddings import Embedder
from eventkg.queries.vector_files import atomic_write, save_npy

PROBE = 256  # texts encoded to estimate the rate before a build
NOTICE_MIN = 2_000  # builds of fewer texts (seconds of work) start without the ETA notice

Progress = Callable[[int, int], None]
Notice = Callable[[str], None]


def _fmt_seconds(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def _reset_unless_same_plan(work: Path, plan: dict[str, Any]) -> None:
    """Empty ``work`` and write ``plan`` there unless it holds chunks of this very plan."""
    plan_file = work / "plan.json"
    try:
        same = json.loads(plan_file.read_text()) == plan
    except (OSError, ValueError):
        same = False
    if not same:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        plan_file.write_text(json.dumps(plan, indent=2))


def _saved_chunks(files: list[Path], starts: list[int], n: int, plan: dict[str, Any]) -> dict[int, np.ndarray]:
    """The chunks already saved whole (right shape and dtype), by chunk number."""
    have: dict[int, np.ndarray] = {}
    for i, (start, f) in enumerate(zip(starts, files, strict=True)):
        try:
            got = np.load(f, allow_pickle=False)
        except (OSError, ValueError):
            continue
        if got.shape == (min(plan["chunk"], n - start), plan["dim"]) and got.dtype == np.float32:
            have[i] = got
    return have


def _announce(texts: list[str], done: int, work: Path, chunk: int, embedder: Embedder, what: str, notice: Notice) -> None:
    """Tell ``notice`` what a resumed build has, and the ETA of the rest measured on a probe batch."""
    n = len(texts)
    todo = n - done
    if done:
        notice(f"resuming the vector index of {what}: {done:,} of {n:,} already embedded in {work}")
    if todo < NOTICE_MIN:
        return
    sample = texts[:: max(1, n // PROBE)][:PROBE]
    embedder.encode(sample[:8])  # loads the model and warms up: not part of the rate
    t0 = time.perf_counter()
    embedder.encode(sample)
    rate = len(sample) / max(1e-9, time.perf_counter() - t0)
    notice(
        f"embedding {todo:,} texts of {what} with {embedder.name} on {embedder.device} "
        f"(batch {embedder.batch_size}): about {_fmt_seconds(todo / rate)} at ~{rate:,.0f} texts/s; "
        f"chunks of {chunk:,} are saved as they finish, so an interrupted build resumes"
    )


def encode_chunks(
    texts: list[str],
    work: Path,
    plan: dict[str, Any],
    embedder: Embedder,
    what: str,
    progress: Progress | None,
    notice: Notice | None,
) -> np.ndarray:
    """Vectors of ``texts`` in order, encoded chunk by chunk; chunks already in ``work`` are reused."""
    n, chunk = len(texts), plan["chunk"]
    _reset_unless_same_plan(work, plan)
    starts = list(range(0, n, chunk))
    files = [work / f"chunk-{i:06d}.npy" for i in range(len(starts))]
    have = _saved_chunks(files, starts, n, plan)
    done = sum(len(v) for v in have.values())
    if notice:
        _announce(texts, done, work, chunk, embedder, what, notice)
    vectors = np.empty((n, plan["dim"]), dtype=np.float32)
    if progress:
        progress(done, n)
    for i, (start, f) in enumerate(zip(starts, files, strict=True)):
        stop = min(n, start + chunk)
        if i in have:
            vectors[start:stop] = have.pop(i)
            continue
        vecs = embedder.encode(texts[start:stop])
        atomic_write(work, f, lambda tmp, v=vecs: save_npy(tmp, v))
        vectors[start:stop] = vecs
        done += stop - start
        if progress:
            progress(done, n)
    return vectors

