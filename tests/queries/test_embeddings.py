"""Embeddings and the persisted FAISS index: offline model, reuse, rebuild, recall."""

from __future__ import annotations

import types

import numpy as np
import pytest

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id
from eventkg.queries.vectors import faiss_build as vector_faiss
from eventkg.queries.vectors import files as vector_files
from eventkg.queries.vectors import index as vx
from eventkg.queries.vectors.embeddings import (
    BUNDLED_NAME,
    Embedder,
    EmbeddingModelError,
    bundled_model_path,
    resolve_model,
)
from tests.support.worlds import clustered, write_world


def test_bundled_model_is_the_default(monkeypatch):
    monkeypatch.delenv("EVENTKG_EMBED_MODEL", raising=False)
    assert resolve_model() == str(bundled_model_path()) and (bundled_model_path() / "modules.json").is_file()
    assert Embedder().name == BUNDLED_NAME
    monkeypatch.setenv("EVENTKG_EMBED_MODEL", str(bundled_model_path()))
    assert Embedder().name == BUNDLED_NAME  # the setting is read from the environment


def test_encode_normalised_float32_in_order():
    emb = Embedder(batch_size=2)
    texts = ["cook dinner", "prepare a meal", "fly to Paris", "cook dinner"]
    v = emb.encode(texts)
    assert v.dtype == np.float32 and v.shape == (4, 384) and v.flags.c_contiguous
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.allclose(v[0], v[3], atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2  # meaning, not noise
    assert emb.encoded == 4
    assert emb.encode([]).shape == (0, 384)


def test_missing_model_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbeddingModelError, match="cannot load"):
        Embedder(str(tmp_path / "no-model-here")).encode(["x"])


# -- the persisted index ------------------------------------------------------------------------


@pytest.fixture
def world(embedded_store):
    write_world(embedded_store)
    vx.forget_loaded()
    yield embedded_store
    vx.forget_loaded()


def test_index_folder_beside_the_store(world, monkeypatch, tmp_path):
    assert vector_files.index_dir(world) == type(vector_files.index_dir(world))(world.url + ".faiss")
    monkeypatch.setenv("EVENTKG_CACHE", str(tmp_path / "c"))
    neo = types.SimpleNamespace(url="neo4j://neo4j:secret@db.example:7687")
    folder = vector_files.index_dir(neo)
    assert folder.parent == tmp_path / "c" / "indexes" and "secret" not in str(folder)
    assert vector_files.index_dir(types.SimpleNamespace(url="neo4j://db.example:7687")) == folder


def test_persisted_and_reused_without_encoding(world):
    first = vx.open_index(world, level="schema")
    assert first.built and first.embedder.encoded == len(first) > 20
    manifest = vector_files.index_dir(world) / "schema.json"
    mtime = manifest.stat().st_mtime_ns
    vx.forget_loaded()  # as a new process would
    emb = Embedder()
    again = vx.open_index(world, level="schema", embedder=emb)
    assert not again.built and emb.encoded == 0 and manifest.stat().st_mtime_ns == mtime
    assert list(again.ids) == list(first.ids)
    np.testing.assert_allclose(again.vector(event_id("learn")), first.vector(event_id("learn")), atol=1e-6)
    hit = again.search_text("acquire knowledge", 1)[0]
    assert hit[0] == event_id("acquire knowledge") and hit[1] > 0.99
    # in the same process, a third open is a dictionary lookup
    assert vx.open_index(world, level="schema", embedder=emb).index is again.index


def test_rebuilt_when_the_graph_changes(world):
    vx.open_index(world, level="schema")
    manifest = vector_files.index_dir(world) / "schema.json"
    before = manifest.read_text()
    world.write_batch(Batch(nodes={"Event": [{"id": event_id("sail boat"), "text": "sail boat", "level": "schema", "sources": ["t"]}]}))
    changed = vx.open_index(world, level="schema")  # same process: the count check catches it
    assert changed.built and event_id("sail boat") in changed and manifest.read_text() != before
    vx.forget_loaded()
    world.write_batch(Batch(nodes={"Event": [{"id": event_id("row boat"), "text": "row boat", "level": "schema", "sources": ["t"]}]}))
    assert vx.open_index(world, level="schema").built  # from disk: the fingerprint catches it
    # an instance event changes the "all" index but not the schema one
    vx.forget_loaded()
    world.write_batch(Batch(nodes={"Event": [{"id": event_id("Tom rows", "instance"), "text": "Tom rows", "level": "instance", "sources": ["t"]}]}))
    assert not vx.open_index(world, level="schema").built


def test_fingerprint_sees_a_swap_of_equal_count(world):
    fp = vx.fingerprint(world, "schema")
    world.query("MATCH (e:Event) WHERE e.text = 'wash dishes' DETACH DELETE e", write=True)
    world.write_batch(Batch(nodes={"Event": [{"id": event_id("dry dishes"), "text": "dry dishes", "level": "schema", "sources": ["t"]}]}))
    fp2 = vx.fingerprint(world, "schema")
    assert fp2["count"] == fp["count"] and fp2["hash"] != fp["hash"]


def test_corrupt_manifest_rebuilds_and_clear_removes(world):
    vx.open_index(world)
    folder = vector_files.index_dir(world)
    (folder / "all.json").write_text("{not json")
    vx.forget_loaded()
    assert vx.open_index(world).built
    assert not list(folder.glob(".tmp-*"))  # no litter
    assert vx.clear_index(world) == folder and not folder.exists()
    assert vx.clear_index(world) is None
    assert vx.open_index(world).built


def test_unknown_level(world):
    with pytest.raises(vector_faiss.VectorIndexError, match="unknown event level"):
        vx.open_index(world, level="abstract")


def test_large_sets_use_calibrated_ivf(monkeypatch):
    import faiss

    monkeypatch.setattr(vector_faiss, "IVF_THRESHOLD", 5_000)
    data = clustered(20_300, 64, 200)
    x, q = data[:20_000], data[20_000:]  # held-out queries from the same distribution
    index, params = vector_faiss.build_faiss(x, kind="ivf")
    assert params["kind"] == "ivf" and params["nprobe"] < params["nlist"] / 4
    exact = faiss.IndexFlatIP(64)
    exact.add(x)
    _, truth = exact.search(q, 10)
    _, got = index.search(q, 10)
    assert vector_faiss.recall_at_k(got, truth) >= 0.95
    small, p = vector_faiss.build_faiss(x[:1000])
    assert p == {"kind": "flat"} and isinstance(small, faiss.IndexFlatIP)


def test_auto_kind_above_the_threshold_is_refined_ivfpq(monkeypatch):
    import faiss

    monkeypatch.setattr(vector_faiss, "IVF_THRESHOLD", 5_000)
    data = clustered(20_300, 64, 200, seed=1)
    x, q = data[:20_000], data[20_000:]
    index, params = vector_faiss.build_faiss(x)
    assert params["kind"] == "ivfpq" and params["nprobe"] <= params["nlist"] and params["k_factor"] >= vector_faiss.REFINE_FACTOR
    exact = faiss.IndexFlatIP(64)
    exact.add(x)
    _, truth = exact.search(q, 10)
    _, got = index.search(q, 10)
    assert vector_faiss.recall_at_k(got, truth) >= 0.95
    # the vectors are kept for the re-ranking and for negatives, in float16 (half the bytes)
    np.testing.assert_array_equal(index.reconstruct(7), x[7].astype(np.float16).astype(np.float32))


def test_auto_kind_falls_back_to_exact_when_ivfpq_misses_the_recall(monkeypatch):
    """A recall the calibration cannot reach (here: above 1) gives the exact index, and says so."""
    import faiss

    monkeypatch.setattr(vector_faiss, "IVF_THRESHOLD", 5_000)
    x = clustered(8_000, 32, 50, seed=2)
    index, params = vector_faiss.build_faiss(x, target_recall=1.01)
    assert isinstance(index, faiss.IndexFlatIP) and index.ntotal == 8_000
    assert params["kind"] == "flat" and params["instead_of"] == "ivfpq" and params["ivfpq_recall@10"] < 1.01
    explicit, explicit_params = vector_faiss.build_faiss(x, target_recall=1.01, kind="ivfpq")  # asked for: kept
    assert explicit_params["kind"] == "ivfpq"
