"""Encoding event texts for a vector index in saved chunks, so an interrupted build resumes.

Texts (ordered by id) are encoded in chunks of the plan's ``chunk`` size, each saved as it finishes
in a work folder with the plan (model, fingerprint, chunk size). Invariant: asked again for the same
plan, :func:`encode_chunks` reuses the saved chunks and gives the same vectors (chunk boundaries and
contents depend only on the sorted ids). Nothing holds all the vectors in memory:
:func:`encode_chunk_files` returns a reader of the saved chunks (:class:`ChunkRows`), merged block by
block by :mod:`eventkg.queries.vectors.store`. A chunk's texts are encoded in order of length, so a
batch pads little, in slices whose torch thread count :class:`ThreadChoice` picks by measured speed;
the vectors are put back in id order. ``notice`` hears the count and an ETA measured on
:data:`PROBE` texts before a build of at least :data:`NOTICE_MIN`; ``progress`` hears ``(done, total)``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from eventkg.progress import Notice, Progress
from eventkg.queries.vectors.embeddings import Embedder, usable_cores
from eventkg.queries.vectors.files import atomic_write, save_npy

PROBE = 256  # texts encoded to estimate the rate before a build
NOTICE_MIN = 2_000  # builds of fewer texts (seconds of work) start without the ETA notice
PROGRESS_STEP = 512  # texts between two progress reports inside a chunk



def _fmt_seconds(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def prepare_work(work: Path, plan: dict[str, Any]) -> bool:
    """Empty ``work`` and write ``plan`` there unless it holds chunks of this very plan; True when emptied."""
    plan_file = work / "plan.json"
    try:
        same = json.loads(plan_file.read_text()) == plan
    except (OSError, ValueError):
        same = False
    if not same:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        plan_file.write_text(json.dumps(plan, indent=2))
    return not same


def fingerprint_ids(ids: Any) -> dict[str, Any]:
    """Count + BLAKE2 hash of ids in the given order: a numpy bytes array hashed as its buffer
    (no Python string per id), anything else as its ids joined by newlines."""
    h = hashlib.blake2b(digest_size=16)
    if isinstance(ids, np.ndarray) and ids.dtype.kind == "S":
        h.update(ids.dtype.str.encode())
        h.update(np.ascontiguousarray(ids).tobytes())
        return {"count": len(ids), "hash": h.hexdigest()}
    values = [i.decode() if isinstance(i, bytes) else str(i) for i in ids]
    if values:
        h.update(("\n".join(values) + "\n").encode())
    return {"count": len(values), "hash": h.hexdigest()}


def _slice(texts: Any, a: int, b: int) -> list[str]:
    """``texts[a:b]`` as a list (``texts`` a list or a pyarrow array)."""
    part = texts[a:b]
    return part.to_pylist() if hasattr(part, "to_pylist") else list(part)


def _take(texts: Any, positions: range) -> list[str]:
    if hasattr(texts, "to_pylist"):
        import pyarrow as pa

        return texts.take(pa.array(list(positions), pa.int64())).to_pylist()
    return [texts[i] for i in positions]

#: slices of a build between two trials of the thread count not in use
RETRY_EVERY = 8
#: texts of a slice a trial encodes with the other thread count (the rest: the faster)
TRIAL = 64


class ThreadChoice:
    """Encodes a build's slices with torch's CPU threads at all usable cores or one, whichever was
    measured faster (characters per second). At the first slice and every :data:`RETRY_EVERY` th, the
    first :data:`TRIAL` texts are encoded with one count and the next :data:`TRIAL` with the other, so
    the two are timed on texts of like length (a slice is in length order), and the rest of the slice
    with the faster; the model is loaded and run once before the first timing. On a machine shared
    with other processes, threads that wait for each other at every operation can be slower than
    one; on an idle one, all cores are faster. A GPU keeps its setting."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        cores = usable_cores()
        self.options: list[int | None] = [cores, 1] if embedder.device == "cpu" and cores > 1 else [None]
        self.rate: dict[int | None, float] = {}
        self.slices = 0
        self.used: list[tuple[int | None, int]] = []  # (thread count, texts) of each encode call
        self.warm = False  # the model loaded and run once (not timed)

    def warm_up(self, texts: list[str]) -> None:
        """Encode ``texts`` untimed, once per build: the first call loads the model and sets torch up,
        which is not a speed."""
        if not self.warm:
            self.embedder.encode(texts)
            self.warm = True

    def best(self) -> int | None:
        """The count measured faster (an untried one before any other)."""
        untried = [o for o in self.options if o not in self.rate]
        return untried[0] if untried else max(self.options, key=lambda o: self.rate[o])

    def _trial(self) -> int | None:
        if len(self.options) < 2 or self.slices % RETRY_EVERY:
            return None
        untried = [o for o in self.options if o not in self.rate]
        return untried[0] if untried else next(o for o in self.options if o != self.best())

    def run(self, texts: list[str], threads: int | None, timed: bool = False) -> np.ndarray:
        """The vectors of ``texts`` with ``threads`` torch threads (their speed kept when ``timed``)."""
        before, self.embedder.threads = self.embedder.threads, threads
        t0 = time.perf_counter()
        try:
            vecs = self.embedder.encode(texts)
        finally:
            self.embedder.threads = before
        if timed:
            self.rate[threads] = sum(len(t) for t in texts) / max(1e-9, time.perf_counter() - t0)
        self.used.append((threads, len(texts)))
        return vecs

    def encode(self, texts: list[str]) -> np.ndarray:
        """The vectors of ``texts`` (one slice of a build), the two counts timed first when a trial is due."""
        trial = self._trial()
        self.slices += 1
        if trial is None or len(texts) <= 2 * TRIAL:
            return self.run(texts, self.best())
        self.warm_up(texts[:1])
        other = next(o for o in self.options if o != trial)
        head = self.run(texts[:TRIAL], trial, timed=True)
        pair = self.run(texts[TRIAL : 2 * TRIAL], other, timed=True)
        return np.concatenate([head, pair, self.run(texts[2 * TRIAL :], self.best())])


class ChunkRows:
    """The rows of an encoding's saved chunks, read memory-mapped by row range."""

    def __init__(self, files: list[Path], chunk: int, n: int, dim: int, resumed: int = 0) -> None:
        self.files, self.chunk, self.n, self.dim = files, chunk, n, dim
        self.resumed = resumed  # rows an earlier, interrupted run had saved

    def rows(self, a: int, b: int) -> np.ndarray:
        parts = []
        for i in range(a // self.chunk, (b - 1) // self.chunk + 1 if b > a else a // self.chunk):
            base = i * self.chunk
            arr = np.load(self.files[i], mmap_mode="r", allow_pickle=False)
            parts.append(np.asarray(arr[max(a, base) - base : min(b, base + len(arr)) - base]))
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)


def saved_chunks(files: list[Path], starts: list[int], n: int, plan: dict[str, Any]) -> set[int]:
    """The chunks already saved whole (right shape and dtype), by chunk number."""
    have: set[int] = set()
    for i, (start, f) in enumerate(zip(starts, files, strict=True)):
        try:
            got = np.load(f, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            continue
        if got.shape == (min(plan["chunk"], n - start), plan["dim"]) and got.dtype == np.float32:
            have.add(i)
    return have


def _announce(texts: Any, done: int, work: Path, chunk: int, threads: ThreadChoice, what: str, notice: Notice) -> None:
    """Tell ``notice`` what a resumed build has, and the ETA of the rest measured on a probe batch
    (each thread count of ``threads`` on a share of it, so the build starts with the faster)."""
    embedder = threads.embedder
    n = len(texts)
    todo = n - done
    if done:
        notice(f"resuming the vector index of {what}: {done:,} of {n:,} already embedded in {work}")
    if todo < NOTICE_MIN:
        return
    sample = _take(texts, range(0, n, max(1, n // PROBE))[:PROBE])
    threads.warm_up(sample[:8])  # loads the model: not part of the rate
    share = -(-len(sample) // len(threads.options))
    for a, option in zip(range(0, len(sample), share), threads.options, strict=False):
        threads.run(sample[a : a + share], option, timed=True)
    rate = max(threads.rate.values()) * len(sample) / max(1, sum(len(t) for t in sample))  # chars/s -> texts/s
    notice(
        f"embedding {todo:,} texts of {what} with {embedder.name} on {embedder.device} "
        f"(batch {embedder.encode_batch}): about {_fmt_seconds(todo / rate)} at ~{rate:,.0f} texts/s"
        + (f" in one process, less with the {embedder.workers} worker processes it starts" if embedder.pays_for_workers(todo) else "")
        + f"; chunks of {chunk:,} are saved as they finish, so an interrupted build resumes"
    )


def encode_chunk_files(
    texts: Any,
    work: Path,
    plan: dict[str, Any],
    embedder: Embedder,
    what: str,
    progress: Progress | None,
    notice: Notice | None,
) -> ChunkRows:
    """Encode ``texts`` (a list or pyarrow array) chunk by chunk into files in ``work``; chunks
    already there for the same plan are kept. Holds one chunk in memory at a time."""
    n, chunk = len(texts), plan["chunk"]
    prepare_work(work, plan)
    starts = list(range(0, n, chunk))
    files = [work / f"chunk-{i:06d}.npy" for i in range(len(starts))]
    have = saved_chunks(files, starts, n, plan)
    done = resumed = sum(min(chunk, n - starts[i]) for i in have)
    threads = ThreadChoice(embedder)
    if notice:
        _announce(texts, done, work, chunk, threads, what, notice)
    if progress:
        progress("encode", done, n)
    started = embedder.expect(n - done)
    try:
        for i, (start, f) in enumerate(zip(starts, files, strict=True)):
            if i in have:
                continue
            stop = min(n, start + chunk)
            part = _slice(texts, start, stop)
            # the chunk's texts by length, so each batch pads to its neighbours' length
            order = np.argsort(np.fromiter((len(t) for t in part), np.int64, len(part)), kind="stable")
            vecs = np.empty((len(part), plan["dim"]), dtype=np.float32)
            for a in range(0, len(part), PROGRESS_STEP):  # progress inside a chunk, not only at its end
                rows = order[a : a + PROGRESS_STEP]
                vecs[rows] = threads.encode([part[j] for j in rows])
                if progress and a + len(rows) < len(part):
                    progress("encode", done + a + len(rows), n)
            atomic_write(work, f, lambda tmp, v=vecs: save_npy(tmp, v))
            done += stop - start
            if progress:
                progress("encode", done, n)
    finally:
        if started:  # the GPU's worker processes go with the build that started them
            embedder.close()
    return ChunkRows(files, chunk, n, plan["dim"], resumed)


def encode_chunks(
    texts: Any,
    work: Path,
    plan: dict[str, Any],
    embedder: Embedder,
    what: str,
    progress: Progress | None,
    notice: Notice | None,
) -> np.ndarray:
    """Vectors of ``texts`` in order, in memory (:func:`encode_chunk_files`, then read back)."""
    rows = encode_chunk_files(texts, work, plan, embedder, what, progress, notice)
    return rows.rows(0, len(texts)) if len(texts) else np.zeros((0, plan["dim"]), dtype=np.float32)
