"""The query layer at scale: resumable index builds, columnar reads, capped hubs, clear messages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from eventkg.errors import SettingError
from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id
from eventkg.queries.errors import NegativesError, VectorIndexError
from eventkg.queries.graph import adjacency, columnar
from eventkg.queries.negatives.nearest import require_event_relations
from eventkg.queries.retrieval.retrieve import retrieve
from eventkg.queries.vectors import encode as vector_encode
from eventkg.queries.vectors import faiss_build as vector_faiss
from eventkg.queries.vectors import files as vector_files
from eventkg.queries.vectors import index as vx
from eventkg.queries.vectors import store as vector_store
from eventkg.queries.vectors.embeddings import Embedder
from tests.support.worlds import write_world

E = event_id


class Stop(Exception):
    pass


# -- resumable embedding build --------------------------------------------------------------


def test_interrupted_build_resumes_and_equals_the_uninterrupted_one(world, monkeypatch, tmp_path):
    monkeypatch.setattr(vx, "ENCODE_CHUNK", 8)
    monkeypatch.setattr(vector_encode, "NOTICE_MIN", 0)
    folder = vector_files.index_dir(world)
    n = vx.fingerprint(world, "schema")["count"]
    assert n > 24  # several chunks

    calls: list[tuple[int, int]] = []

    def stop_after_first_chunk(_stage: str, done: int, total: int | None) -> None:
        calls.append((done, total))
        if done >= 8:
            raise Stop

    with pytest.raises(Stop):
        vx.open_index(world, level="schema", progress=stop_after_first_chunk)
    assert calls == [(0, n), (8, n)]
    work = folder / f"{vector_store.vectors_stem(Embedder().name)}.build"  # the model's shared vectors, in progress
    saved = sorted(work.glob("chunk-*.npy"))
    assert [p.name for p in saved] == ["chunk-000000.npy"]
    assert not (folder / "schema.json").exists()  # no index yet, nothing half-valid

    vx.forget_loaded()
    emb = Embedder()
    resumed_progress: list[tuple[int, int]] = []
    notes: list[str] = []
    resumed = vx.open_index(world, level="schema", embedder=emb, progress=lambda _s, d, t: resumed_progress.append((d, t)),
                            notice=notes.append)
    probe = min(len(range(0, n, max(1, n // vector_encode.PROBE))), vector_encode.PROBE)  # the ETA probe encodes this many texts
    assert resumed.built and emb.encoded == (n - 8) + 8 + probe  # (+ 8 warm-up) the saved chunk was not encoded again
    assert resumed_progress[0] == (8, n) and resumed_progress[-1] == (n, n)
    assert any(f"resuming the vector index of {n} schema events: 8 of {n}" in m for m in notes)
    assert not work.exists()  # work files removed once the vectors are merged

    # the uninterrupted build into another folder gives the same index
    vx.forget_loaded()
    vx.clear_index(world)
    whole = vx.open_index(world, level="schema", embedder=Embedder())
    assert list(whole.ids) == list(resumed.ids)
    a = np.stack([whole.index.reconstruct(i) for i in range(len(whole))])
    b = np.stack([resumed.index.reconstruct(i) for i in range(len(resumed))])
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert whole.manifest["fingerprint"] == resumed.manifest["fingerprint"]


def test_a_stale_plan_is_not_resumed(world, monkeypatch):
    monkeypatch.setattr(vx, "ENCODE_CHUNK", 8)

    def stop(_stage: str, done: int, total: int | None) -> None:
        if done >= 8:
            raise Stop

    with pytest.raises(Stop):
        vx.open_index(world, level="schema", progress=stop)
    # the graph changes before the build is resumed: its saved chunks belong to other texts
    world.write_batch(Batch(nodes={"Event": [{"id": E("aaa first"), "text": "aaa first", "level": "schema", "sources": ["t"]}]}))
    vx.forget_loaded()
    emb = Embedder()
    vi = vx.open_index(world, level="schema", embedder=emb)
    # the saved chunk's 8 vectors stay valid (an id names its text): kept, not encoded again
    assert emb.encoded == len(vi) - 8 and E("aaa first") in vi


def test_first_build_says_size_and_eta_before_encoding(world, monkeypatch):
    monkeypatch.setattr(vector_encode, "NOTICE_MIN", 10)
    notes: list[str] = []
    encoded_at_notice: list[int] = []
    emb = Embedder()

    def notice(msg: str) -> None:
        notes.append(msg)
        encoded_at_notice.append(emb.encoded)

    vi = vx.open_index(world, level="schema", embedder=emb, notice=notice)
    n = len(vi)
    first = notes[0]
    assert f"embedding {n} texts of {n} schema events" in first and "about" in first and "texts/s" in first
    assert "resumes" in first
    assert encoded_at_notice[0] <= vector_encode.PROBE + 8 and encoded_at_notice[0] < emb.encoded  # said before the real work
    vx.forget_loaded()
    again: list[str] = []
    vx.open_index(world, level="schema", notice=again.append)
    assert again == []  # nothing to say when the index exists
    monkeypatch.setattr(vector_encode, "NOTICE_MIN", 2_000)
    quiet: list[str] = []
    vx.open_index(world, level="instance", notice=quiet.append)
    assert quiet == []  # a build of seconds starts without the probe


def test_index_kind_is_a_setting_and_persisted(world, monkeypatch):
    monkeypatch.setenv(vector_faiss.ENV_INDEX, "hnsw")
    vi = vx.open_index(world, level="schema")
    params = vi.manifest["params"]
    assert params["kind"] == "hnsw" and params["efSearch"] >= 16
    vx.forget_loaded()
    again = vx.open_index(world, level="schema")
    import faiss

    assert not again.built and faiss.downcast_index(again.index).hnsw.efSearch == params["efSearch"]
    hit = again.search_text("acquire knowledge", 1)[0]
    assert hit[0] == E("acquire knowledge")
    monkeypatch.setenv(vector_faiss.ENV_INDEX, "annoy")
    with pytest.raises(SettingError, match="EVENTKG_INDEX='annoy'"):
        vector_faiss.resolve_index_kind()
    with pytest.raises(VectorIndexError, match="unknown index kind 'annoy'"):
        vector_faiss.resolve_index_kind("annoy")


def test_device_setting():
    from eventkg.queries.errors import EmbeddingModelError
    from eventkg.queries.vectors.embeddings import default_encode_batch, resolve_device

    assert resolve_device("cpu") == "cpu" and default_encode_batch("cpu") == 64
    import torch

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else resolve_device("auto"))
    with pytest.raises(EmbeddingModelError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(EmbeddingModelError, match="no CUDA GPU"):
            resolve_device("cuda")


# -- columnar reads ---------------------------------------------------------------------------


def test_columnar_reads_match_row_reads(store):
    write_world(store)
    rows = {r["id"]: r for r in store.iter_nodes("Event")}
    table = columnar.event_texts(store, "schema")
    assert dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True)) == {
        i: r["text"] for i, r in rows.items() if r.get("level") == "schema"
    }
    assert columnar.event_texts(store).num_rows == len(rows)
    e = columnar.edges(store, "CAUSES")
    assert sorted(zip(e.column("src").to_pylist(), e.column("dst").to_pylist(), strict=True)) == sorted(
        (r["src"], r["dst"]) for r in store.iter_edges("CAUSES")
    )
    assert columnar.edge_counts(store, ["CAUSES", "HAS_TYPE"]) == {"CAUSES": e.num_rows, "HAS_TYPE": 3}


# -- hubs: ranked, capped, said so ---------------------------------------------------------------


def write_hub(store, spokes: int = 30) -> list[str]:
    """A hub "hub event" with ``spokes`` CAUSES neighbours; spoke i's edge weight is i (1..spokes)."""
    texts = ["hub event"] + [f"spoke number {i}" for i in range(1, spokes + 1)]
    store.write_batch(Batch(nodes={"Event": [{"id": E(t), "text": t, "level": "schema", "sources": ["t"]} for t in texts]}))
    store.write_batch(Batch(edges={"CAUSES": [
        {"src": E("hub event"), "dst": E(f"spoke number {i}"), "weight": float(i), "sources": ["t"]} for i in range(1, spokes + 1)
    ]}))
    return texts


def test_hub_neighbours_are_capped_by_count_and_the_result_says_so(embedded_store):
    write_hub(embedded_store)
    vx.forget_loaded()
    sub = retrieve(embedded_store, "hub event", k=1, hops=1, per_node=5)
    texts = {t for _, t in sub.graph.nodes(data="text")}
    # the five heaviest edges are weights 30..26 (hand-counted from write_hub)
    assert texts == {"hub event"} | {f"spoke number {i}" for i in (30, 29, 28, 27, 26)}
    assert sub.truncated == [(E("hub event"), 5, 30)]
    data = sub.to_dict()
    assert data["truncated"] == [{"id": E("hub event"), "text": "hub event", "kept": 5, "degree": 30}]
    prompt = sub.to_prompt(max_tokens=60)
    assert 'Note: 1 high-degree event(s) have more neighbours than shown' in prompt and '"hub event" 5 of 30' in prompt
    full = retrieve(embedded_store, "hub event", k=1, hops=1, per_node=None)
    assert full.graph.number_of_nodes() == 31 and full.truncated == [] and "Note:" not in full.to_prompt()
    w = {d: a.get("weight") for _, d, a in sub.graph.edges(data=True)}
    assert sorted(w.values()) == [26.0, 27.0, 28.0, 29.0, 30.0]


def test_ranking_ties_break_by_neighbour_frequency(embedded_store):
    texts = ["center", "low freq", "high freq", "mid freq"]
    freq = {"center": 1.0, "low freq": 1.0, "high freq": 9.0, "mid freq": 5.0}
    embedded_store.write_batch(Batch(nodes={"Event": [
        {"id": E(t), "text": t, "level": "schema", "frequency": freq[t], "sources": ["t"]} for t in texts]}))
    embedded_store.write_batch(Batch(edges={"BEFORE": [
        {"src": E(t), "dst": E("center"), "weight": 2.0, "sources": ["t"]} for t in texts[1:]]}))
    adj = adjacency.build(embedded_store)
    c = adj.positions([E("center")])[0]
    order = [adj.id_of(int(p)) for p in adj.nbr[adj.indptr[c]:adj.indptr[c + 1]]]
    assert order == [E("high freq"), E("mid freq"), E("low freq")]
    assert not adj.out[adj.indptr[c]:adj.indptr[c + 1]].any()  # all stored edges point at center


def test_adjacency_follows_graph_changes(world):
    sub = retrieve(world, "learn", k=1, hops=1, level="schema")
    assert ("learn", "Causes", "teach class") not in sub.triples
    world.write_batch(Batch(edges={"CAUSES": [{"src": E("learn"), "dst": E("teach class"), "sources": ["t"]}]}))
    again = retrieve(world, "learn", k=1, hops=1, level="schema")
    assert ("learn", "Causes", "teach class") in again.triples


def _cli(path: Path, *args: str):
    from eventkg.cli.app import app

    return CliRunner().invoke(app, ["--store", str(path), *args])


def test_cli_subgraph_reports_truncation(tmp_path):
    from eventkg.graphstore import open_store

    path = tmp_path / "hub.lbug"
    with open_store(str(path)) as s:
        write_hub(s, spokes=25)
    r = _cli(path, "subgraph", "--text", "hub event", "-k", "1", "--hops", "1", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["truncated"] == [{"id": E("hub event"), "text": "hub event", "kept": 20, "degree": 25}]
    r = _cli(path, "subgraph", "--text", "hub event", "-k", "1", "--hops", "1")
    assert "the strongest edges (count or weight, then frequency, then id) are kept" in r.stdout  # what it was cut by
    assert '"hub event" 20 of 25' in r.stdout


# -- messages ---------------------------------------------------------------------------------


def test_aser_without_map_events_says_to_reingest(tmp_path):
    from eventkg.graphstore import open_store

    path = tmp_path / "aser.lbug"
    with open_store(str(path)) as s:
        s.write_batch(Batch(nodes={"Event": [{"id": E(t), "text": t, "level": "schema", "sources": ["aser"]}
                                             for t in ("i be hungry", "i eat")]}))
        s.write_batch(Batch(edges={"RESULT": [{"src": E("i be hungry"), "dst": E("i eat"), "count": 3.0, "sources": ["aser"]}]}))
        with pytest.raises(NegativesError, match="without --map-events; re-ingest with"):
            require_event_relations(s, "causal")
    r = _cli(path, "negatives", "i be hungry", "--rel", "Causes")
    assert r.exit_code == 1 and "--map-events" in str(r.exception) and "no CAUSES/HAS_SUBEVENT edges" in str(r.exception)


def test_store_without_event_relations_says_what_to_ingest(embedded_store):
    embedded_store.write_batch(Batch(nodes={"Event": [{"id": E("x"), "text": "x", "level": "schema", "sources": ["t"]}]}))
    with pytest.raises(NegativesError, match="no BEFORE/CAUSES/HAS_SUBEVENT edges, which temporal questions"):
        require_event_relations(embedded_store, "temporal")
    write_world(embedded_store)
    require_event_relations(embedded_store, "temporal")  # no error once they exist
