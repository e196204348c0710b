"""The vector-index build: texts encoded in order of length, slice by slice with the faster torch
thread count, give the vectors the encoder gives each text alone, in id order."""

from __future__ import annotations

import time

import numpy as np

from eventkg.queries.graph import columnar
from eventkg.queries.vectors import encode as vector_encode
from eventkg.queries.vectors import index as vx
from eventkg.queries.vectors.embeddings import Embedder
from tests.support.worlds import INSTANCES, world_events


def test_build_in_length_order_gives_each_text_its_own_vector(world, monkeypatch):
    monkeypatch.setattr(vector_encode, "PROGRESS_STEP", 3)  # many slices, each of texts of like length
    table = columnar.event_texts(world)
    ids, texts = table.column("id").to_pylist(), table.column("text").to_pylist()
    assert len(set(map(len, texts))) > 5  # texts of many lengths: the length order differs from the id order
    vi = vx.open_index(world)
    st = Embedder().st
    alone = np.stack([st.encode([t], normalize_embeddings=True, convert_to_numpy=True)[0] for t in texts])
    built = np.stack([vi.vector(i) for i in ids])
    np.testing.assert_allclose(built, alone, atol=2e-5)
    found = [hits[0][0] for hits in vi.search(alone, 1)]
    assert all(vi.vector(f) @ a > 0.9999 for f, a in zip(found, alone, strict=True))  # each text finds its own vector


def record_runs(monkeypatch) -> list[tuple[int | None, int]]:
    """(thread count, texts) of every encode call of the build, in order."""
    runs: list[tuple[int | None, int]] = []
    original = vector_encode.ThreadChoice.run

    def spy(self, texts, threads, timed=False):
        runs.append((threads, len(texts)))
        return original(self, texts, threads, timed)

    monkeypatch.setattr(vector_encode.ThreadChoice, "run", spy)
    return runs


class SlowWithThreads(Embedder):
    """The real encoder, made slower with all cores than with one thread, as on a busy machine."""

    def encode(self, texts, show_progress=False):
        out = super().encode(texts, show_progress)
        if len(texts) > 8 and (self.threads or 0) > 1:
            time.sleep(0.05 * len(texts))
        return out


def test_the_build_keeps_the_thread_count_measured_faster(world, monkeypatch):
    monkeypatch.setattr(vector_encode, "usable_cores", lambda: 2)
    monkeypatch.setattr(vector_encode, "PROGRESS_STEP", 19)  # two slices, each bigger than two trials
    monkeypatch.setattr(vector_encode, "TRIAL", 9)  # a trial bigger than a small input (one thread anyway)
    monkeypatch.setattr(vector_encode, "RETRY_EVERY", 1)  # a trial in every slice
    runs = record_runs(monkeypatch)
    emb = SlowWithThreads(device="cpu")
    vi = vx.open_index(world, embedder=emb)
    n = len(world_events()) + len(INSTANCES)
    assert len(vi) == n and sum(k for _, k in runs) == n  # every text once
    assert runs[0] == (2, 9) and runs[1] == (1, 9)  # both counts timed on the first slice, on like texts
    slow = [k for t, k in runs if t == 2]
    assert len(slow) >= 2 and set(slow) == {9}  # tried again, never more than a trial's texts
    assert emb.threads is None  # the build leaves the embedder as it found it


class FasterWithThreads(Embedder):
    """The real encoder, faster with all cores than with one thread (an idle machine), whose first call
    also loads and sets up the model."""

    calls = 0

    def encode(self, texts, show_progress=False):
        asked, self.threads = self.threads, 1  # the real work the same for both counts: only the sleeps differ
        try:
            out = super().encode(texts, show_progress)
        finally:
            self.threads = asked
        FasterWithThreads.calls += 1
        if FasterWithThreads.calls == 1:
            time.sleep(1.0)  # the model's load and first run
        if len(texts) > 8:
            time.sleep((0.01 if (self.threads or 0) > 1 else 0.1) * len(texts))
        return out


def test_the_thread_count_is_timed_on_like_texts_after_the_first_load(world, monkeypatch):
    """The model's first call does not make the count timed first look slower: on an idle machine the
    build keeps all cores."""
    monkeypatch.setattr(vector_encode, "usable_cores", lambda: 2)
    monkeypatch.setattr(vector_encode, "PROGRESS_STEP", 40)
    monkeypatch.setattr(vector_encode, "TRIAL", 9)
    monkeypatch.setattr(vector_encode, "RETRY_EVERY", 1)
    runs = record_runs(monkeypatch)
    FasterWithThreads.calls = 0
    vi = vx.open_index(world, embedder=FasterWithThreads(device="cpu"))
    assert len(vi) == len(world_events()) + len(INSTANCES)
    by = {t: sum(k for u, k in runs if u == t) for t in (1, 2)}
    assert by[2] > 2 * by[1], runs  # most texts with both cores
