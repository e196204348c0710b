"""One vectors file per (store, model): each event is encoded once, levels select rows of it,
a build resumes with only what is missing, old per-level folders give their vectors back,
and big levels get the compressed index re-ranked from the mapped file."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import numpy as np
import pytest

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id
from eventkg.queries.negatives.nearest import NearestNegatives
from eventkg.queries.retrieval.retrieve import retrieve
from eventkg.queries.vectors import compressed as vector_large
from eventkg.queries.vectors import faiss_build as vector_faiss
from eventkg.queries.vectors import files as index_files
from eventkg.queries.vectors import index as vx
from eventkg.queries.vectors import store as vector_store
from eventkg.queries.vectors.embeddings import Embedder
from tests.support.worlds import INSTANCES, clustered, world_events

E = event_id
SCHEMA_TEXTS = sorted(world_events())
INSTANCE_TEXTS = [t for t, _ in INSTANCES]


class Stop(Exception):
    pass


@pytest.fixture
def encoded(monkeypatch) -> list[str]:
    """Every text the real model encodes in this test, whoever asks (a wrapper, not a stand-in)."""
    seen: list[str] = []
    real = Embedder.encode

    def counting(self, texts, show_progress=False):
        seen.extend(texts)
        return real(self, texts, show_progress)

    monkeypatch.setattr(Embedder, "encode", counting)
    return seen


def vector_files(folder) -> list[str]:
    return sorted(p.name for p in folder.glob("vectors-*.npy") if not p.name.endswith(".ids.npy"))


def test_negatives_then_retrieve_at_another_level_encode_each_event_once(world, encoded):
    sampler = NearestNegatives(world, level="schema")
    assert sampler.sample(E("study"), "Causes", E("learn"), k=2)  # builds the schema index
    assert Counter(encoded) == Counter(SCHEMA_TEXTS)
    sub = retrieve(world, "a student reads all night", k=3, hops=1)  # the all-levels index: only instances are new
    assert sub.seeds
    assert Counter(encoded) == Counter(SCHEMA_TEXTS + INSTANCE_TEXTS + ["a student reads all night"])
    vx.forget_loaded()  # a new process: every level opens from the files, nothing is encoded
    before = len(encoded)
    for level in (None, "schema"):
        assert not vx.open_index(world, level=level).built
    first_instance = vx.open_index(world, level="instance")  # never asked before: made from the stored rows
    assert first_instance.built and first_instance.encoded == 0
    assert len(encoded) == before
    folder = index_files.index_dir(world)
    assert vector_files(folder) == [f"{vector_store.vectors_stem(Embedder().name)}.npy"]  # one file of vectors
    assert not list(folder.glob("*.faiss"))  # the small levels are flat: made from that file when opened
    shared = vector_store.open_vectors(folder, Embedder().name)
    assert shared.vecs.shape == (len(SCHEMA_TEXTS) + len(INSTANCE_TEXTS), 384)
    assert isinstance(shared.vecs, np.memmap)


def test_a_level_returns_only_its_own_events(world):
    instance_ids = {E(t, "instance") for t in INSTANCE_TEXTS}
    vx.open_index(world)  # all events first: the instance level is then a selection of those rows
    vi = vx.open_index(world, level="instance")
    assert {i.decode() for i in vi.ids} == instance_ids
    hits = vi.search_text("learn", 100)
    assert {i for i, _ in hits} == instance_ids  # asked for more than there are: all, and nothing else
    schema = vx.open_index(world, level="schema")
    assert {i for i, _ in schema.search_text("Tom finally understands how cells divide", 100)} == {E(t) for t in SCHEMA_TEXTS}
    # a level's vectors are the shared rows of its ids
    model = Embedder()
    expect = model.encode(["Tom finally understands how cells divide"])[0]
    np.testing.assert_allclose(vi.vector(E("Tom finally understands how cells divide", "instance")), expect, atol=1e-5)


def test_an_interrupted_build_resumes_with_only_what_is_missing(world, encoded, monkeypatch):
    monkeypatch.setattr(vx, "ENCODE_CHUNK", 1)  # the world has 3 instances
    vx.open_index(world, level="schema")
    assert len(encoded) == len(SCHEMA_TEXTS)
    encoded.clear()

    def stop_after_a_chunk(_stage: str, done: int, total: int | None) -> None:
        if done >= 1:
            raise Stop

    with pytest.raises(Stop):  # the all-levels build: only the instances are to encode
        vx.open_index(world, progress=stop_after_a_chunk)
    by_id = sorted(INSTANCE_TEXTS, key=lambda t: E(t, "instance"))
    assert encoded == by_id[:1]
    encoded.clear()
    vx.forget_loaded()
    vi = vx.open_index(world)
    assert encoded == by_id[1:]
    assert vi.built and len(vi) == len(SCHEMA_TEXTS) + len(INSTANCE_TEXTS)
    # the graph grows: the new event alone is encoded
    encoded.clear()
    world.write_batch(Batch(nodes={"Event": [{"id": E("sail boat"), "text": "sail boat", "level": "schema", "sources": ["t"]}]}))
    assert E("sail boat") in vx.open_index(world, level="schema")
    assert encoded == ["sail boat"]


def test_levels_with_the_same_events_share_one_index_file(embedded_store, monkeypatch):
    monkeypatch.setenv(vector_faiss.ENV_INDEX, "hnsw")
    b = Batch()
    for text in SCHEMA_TEXTS:
        b.add_node("Event", {"id": E(text), "text": text, "level": "schema", "sources": ["t"]})
    embedded_store.write_batch(b)
    vx.forget_loaded()
    schema = vx.open_index(embedded_store, level="schema")
    everything = vx.open_index(embedded_store)
    folder = index_files.index_dir(embedded_store)
    files = sorted(p.name for p in folder.glob("*.faiss"))
    assert len(files) == 1
    assert schema.manifest["file"] == everything.manifest["file"] == files[0]
    assert everything.search_text("learn", 1)[0][0] == E("learn")
    vx.forget_loaded()


def old_format_folder(store, level: str) -> tuple[list[str], np.ndarray]:
    """A format-1 level folder as an older eventkg wrote it: its own index of the vectors."""
    import faiss

    texts = SCHEMA_TEXTS if level == "schema" else INSTANCE_TEXTS
    ids = sorted(E(t) if level == "schema" else E(t, "instance") for t in texts)
    by_id = {E(t) if level == "schema" else E(t, "instance"): t for t in texts}
    vecs = Embedder().encode([by_id[i] for i in ids])
    folder = index_files.index_dir(store)
    folder.mkdir(parents=True, exist_ok=True)
    index = faiss.IndexFlatIP(vecs.shape[1])
    index.add(vecs)
    faiss.write_index(index, str(folder / f"{level}.faiss"))
    np.save(folder / f"{level}.ids.npy", np.array(ids))
    digest = hashlib.blake2b(("\n".join(ids) + "\n").encode(), digest_size=16).hexdigest()
    manifest = {"format": 1, "model": Embedder().name, "dim": 384, "level": level, "params": {"kind": "flat"},
                "fingerprint": {"count": len(ids), "hash": digest}, "size": len(ids)}
    (folder / f"{level}.json").write_text(json.dumps(manifest))
    return ids, vecs


def test_a_folder_of_the_old_format_opens_without_encoding_again(world, encoded):
    ids, vecs = old_format_folder(world, "schema")
    encoded.clear()
    vi = vx.open_index(world, level="schema")
    assert encoded == [] and vi.manifest["format"] == index_files.FORMAT
    assert [i.decode() for i in vi.ids] == ids
    np.testing.assert_array_equal(vi.row_vectors(np.arange(len(ids))), vecs)
    folder = index_files.index_dir(world)
    assert not (folder / "schema.faiss").exists() and not (folder / "schema.ids.npy").exists()
    vx.open_index(world)  # the instances were never indexed: they alone are encoded
    assert Counter(encoded) == Counter(INSTANCE_TEXTS)


def test_the_compressed_kind_for_big_levels_reranks_from_the_mapped_file(tmp_path):
    import faiss

    data = clustered(20_300, 64, 200, seed=3)
    x, q = data[:20_000], data[20_000:]
    path = tmp_path / "v.npy"
    np.save(path, np.concatenate([np.zeros((5, 64), np.float32), x]))  # rows 5.. are the level's
    vecs = np.load(path, mmap_mode="r")
    rows = np.arange(5, 20_005)
    index, params = vector_large.build_large(vecs, rows)
    assert params["refine"] == "mmap" and params["pq"] == "PQ16x4fs" and params["nprobe"] <= params["nlist"]
    exact = faiss.IndexFlatIP(64)
    exact.add(x)
    sims, truth = exact.search(q, 10)
    got_sims, got = index.search(q, 10)
    assert vector_faiss.recall_at_k(got, truth) >= 0.95
    hit = got[:, 0] == truth[:, 0]
    np.testing.assert_allclose(got_sims[hit, 0], sims[hit, 0], atol=1e-5)  # exact scores: re-ranked on float32 rows
    np.testing.assert_array_equal(index.reconstruct(7), x[7])
    # the index itself holds codes only: 64/8 bytes a vector, no copy of the vectors
    size = faiss.serialize_index(index.ivf).nbytes
    assert size < x.nbytes / 8


def test_auto_picks_the_compressed_kind_at_the_threshold(world, monkeypatch):
    monkeypatch.setattr(vector_faiss, "IVF_THRESHOLD", 10)
    monkeypatch.setattr(vector_large, "LARGE_INDEX", 20)
    vi = vx.open_index(world)
    assert vi.manifest["params"]["refine"] == "mmap" and isinstance(vi.index, vector_large.MmapRefined)
    assert vi.search_text("learn", 1)[0][0] == E("learn")
    vx.forget_loaded()
    again = vx.open_index(world)
    assert not again.built and again.search_text("pass exam", 1)[0][0] == E("pass exam")
    assert again.index.k_factor == vi.manifest["params"]["k_factor"]


def test_chunks_of_an_interrupted_build_serve_a_build_of_another_level(world, encoded, monkeypatch):
    monkeypatch.setattr(vx, "ENCODE_CHUNK", 8)

    def stop_after_a_chunk(_stage: str, done: int, total: int | None) -> None:
        if done >= 8:
            raise Stop

    with pytest.raises(Stop):
        vx.open_index(world, level="schema", progress=stop_after_a_chunk)
    first = sorted(SCHEMA_TEXTS, key=E)[:8]  # the schema texts in id order, first chunk
    assert sorted(encoded) == sorted(first)  # (encoded in order of length)
    encoded.clear()
    vx.forget_loaded()
    vi = vx.open_index(world)  # all events: other texts to encode, the saved chunk is kept
    assert Counter(encoded) == Counter(SCHEMA_TEXTS + INSTANCE_TEXTS) - Counter(first)
    assert len(vi) == len(SCHEMA_TEXTS) + len(INSTANCE_TEXTS)
    np.testing.assert_allclose(vi.vector(E(first[0])), Embedder().encode([first[0]])[0], atol=1e-5)


def test_the_build_says_its_device_and_eta_before_encoding(world, monkeypatch):
    import torch

    from eventkg.queries.vectors import encode as vector_encode

    monkeypatch.setattr(vector_encode, "NOTICE_MIN", 0)
    mps = getattr(torch.backends, "mps", None)
    device = "cuda" if torch.cuda.is_available() else "mps" if mps is not None and mps.is_available() else "cpu"
    notes: list[str] = []
    vi = vx.open_index(world, level="schema", notice=notes.append)
    assert f" on {device} " in notes[0] and "about" in notes[0] and "texts/s" in notes[0]
    assert vi.manifest["device"] == device and vi.manifest["encoded"] == len(SCHEMA_TEXTS)


def test_a_lazy_build_inside_retrieve_shows_its_progress_within_a_chunk(world, capsys, monkeypatch):
    from eventkg.queries.vectors import encode

    monkeypatch.setattr(encode, "PROGRESS_STEP", 1)  # a report after every text, inside the one chunk
    retrieve(world, "a student reads all night", k=1)
    err = capsys.readouterr().err
    total = len(SCHEMA_TEXTS) + len(INSTANCE_TEXTS)
    shown = re.findall(r"embedding events for the vector index: (\d+) of (\d+)", err)
    assert [int(d) for d, _ in shown] == list(range(total + 1))  # the start, then every text
    assert {int(t) for _, t in shown} == {total}
