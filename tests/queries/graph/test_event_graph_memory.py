"""The event graph held in bounded memory: ids as one sorted byte array, the CSR built in chunks,
the arrays and texts kept on disk beside an embedded store, texts read only for the questions made.

Expected values are worked out here from plain Python (sorted strings, sets of readings,
``iter_nodes``), never from the arrays under test."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventkg.graphstore import open_store
from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import INVERSE, stable_id
from eventkg.queries.graph import columnar, csr_cache
from eventkg.queries.graph.csr import EVENT_REL_TYPES, EventCSR, _adjacency, _dedupe_sorted, _sort
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.graph.event_ids import EventIds, as_bytes, id_order
from eventkg.queries.graph.event_texts import FileTexts, PendingTexts, StoreTexts
from tests.support.question_graphs import question_rows, synthetic_batch

FORWARD = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"}
CODES = ["Causes", "IsResult", "Before", "After", "HasSubevent", "IsSubevent"]  # table1.CODE order


def test_store_ids_sort_as_python_sorts_them() -> None:
    rng = random.Random(1)
    ids = [stable_id("Event", "schema", str(i)) for i in range(5000)]
    ids += ["Az09-_azAZ" + t for t in ("__", "--", "a0", "Z9")]  # the first 10 characters tie
    rng.shuffle(ids)
    raw = as_bytes(ids)
    assert [ids[i] for i in id_order(raw)] == sorted(ids)
    odd = ["b", "a", "é", "ab", "Z", "a b", "0123456789abcdefAB.D"]  # not stable ids: the byte sort
    assert [odd[i] for i in id_order(as_bytes(odd))] == sorted(odd)


def test_event_ids_read_and_find() -> None:
    names = sorted(["learn", "é", "pass exam", "x"])
    ids = EventIds.of(names)
    assert list(ids) == names and ids.tolist() == names and ids == names and len(ids) == 4
    assert [ids.position(n) for n in names] == [0, 1, 2, 3]
    assert ids.position("nope") is None and ids.position("a much longer id than any") is None
    assert ids.take([3, 0]) == [names[3], names[0]]
    assert ids.positions_of(as_bytes(["x", "learn"])).tolist() == [names.index("x"), names.index("learn")]
    with pytest.raises(KeyError):
        ids.positions_of(as_bytes(["absent"]))


def test_dedupe_in_chunks_keeps_each_value_once() -> None:
    rng = np.random.default_rng(3)
    key = np.sort(rng.integers(0, 50, 1000))
    w = _dedupe_sorted(key, chunk=7)
    assert key[:w].tolist() == sorted(set(key.tolist()))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), max_size=300), st.integers(1, 4), st.integers(1, 40))
def test_sort_in_parts_on_threads_is_numpy_s_sort(values, workers, chunk) -> None:
    key = np.array(values, dtype=np.int64)
    _sort(key, workers, chunk)
    assert key.tolist() == sorted(values)


def test_adjacency_in_chunks_is_every_reading_once() -> None:
    rng = random.Random(5)
    n = 40
    edges = {c: ([rng.randrange(n) for _ in range(300)], [rng.randrange(n) for _ in range(300)]) for c in (0, 2, 4)}
    expected: dict[int, set[tuple[int, int]]] = {p: set() for p in range(n)}
    for c, (src, dst) in edges.items():
        for s, d in zip(src, dst, strict=True):
            if s != d:
                expected[s].add((d, c))
                expected[d].add((s, CODES.index(INVERSE[CODES[c]])))
    got = _adjacency(n, [(np.array(s), np.array(d), c) for c, (s, d) in edges.items()], chunk=16)
    indptr, nbr, code = got
    for p in range(n):
        row = list(zip(nbr[indptr[p]:indptr[p + 1]].tolist(), code[indptr[p]:indptr[p + 1]].tolist(), strict=True))
        assert row == sorted(expected[p]), p
    # one thread, or the ends given as keys with their positions (rank): the same arrays
    serial = _adjacency(n, [(np.array(s), np.array(d), c) for c, (s, d) in edges.items()], chunk=16, workers=1)
    keys = np.array(rng.sample(range(1000), n))
    rank = np.full(1000, -1, dtype=np.int32)
    rank[keys] = np.arange(n, dtype=np.int32)
    by_key = _adjacency(n, [(keys[s], keys[d], c) for c, (s, d) in edges.items()], chunk=16, rank=rank)
    for other in (serial, by_key):
        assert all(np.array_equal(x, y) for x, y in zip(got, other, strict=True))


def test_restricted_in_chunks_keeps_edges_between_kept_events() -> None:
    rng = random.Random(8)
    names = [f"e{i:03d}" for i in range(60)]
    edges = [(rng.choice(names), rng.choice(EVENT_REL_TYPES), rng.choice(names)) for _ in range(250)]
    csr = EventCSR.from_rows(edges, (), [(n, n, "schema") for n in names])
    keep = np.array([i % 3 != 0 for i in range(len(names))])
    sub = csr.restricted(keep, chunk=7)
    for p in range(len(names)):
        want = [(q, c) for q, c in csr.entries(p) if keep[p] and keep[q]]
        assert sub.entries(p) == want
    assert csr.restricted(np.ones(len(names), dtype=bool)) is csr


@pytest.fixture()
def embedded(tmp_path):
    store = open_store(str(tmp_path / "kg.lbug"))
    store.write_batch(synthetic_batch(n_types=300, n_edges=700, seed=5))
    yield store
    store.close()


def _stored_texts(store) -> dict[str, str | None]:
    return {n["id"]: n.get("text") for n in store.iter_nodes("Event")}


def test_kept_arrays_are_mapped_equal_and_read_again_when_the_store_changes(embedded) -> None:
    fresh = EventCSR.from_store(embedded, cache=False)
    first = EventCSR.from_store(embedded)
    folder = csr_cache.folder_of(embedded)
    assert folder is not None and (folder / "stamp.json").is_file()
    assert isinstance(first.nbr.base, np.memmap) and isinstance(first.texts, FileTexts)
    assert isinstance(fresh.texts, StoreTexts)
    for name in ("indptr", "nbr", "code", "level", "type_of", "inst_indptr", "inst"):
        assert np.array_equal(getattr(first, name), getattr(fresh, name)), name
    assert first.ids == fresh.ids
    texts = _stored_texts(embedded)
    assert first.texts.all() == [texts[i] for i in first.ids]
    assert fresh.texts.all() == [texts[i] for i in first.ids]
    written = (folder / "stamp.json").stat().st_mtime_ns
    again = EventCSR.from_store(embedded)
    assert (folder / "stamp.json").stat().st_mtime_ns == written  # read, not written again
    assert again.ids == first.ids
    # one more event and edge: the kept arrays no longer match the store, so they are read anew
    b = Batch()
    b.add_node("Event", {"id": "zz-new", "sources": ["t"], "text": "new event", "level": "schema"})
    b.add_edge("CAUSES", {"src": "zz-new", "dst": first.ids[0], "sources": ["t"]})
    embedded.write_batch(b)
    changed = EventCSR.from_store(embedded)
    z = changed.position("zz-new")
    assert z is not None and changed.text(z) == "new event"
    assert EventIndex(changed).has_triple(z, "Causes", changed.position(first.ids[0]))


def test_questions_read_only_the_texts_they_show_and_match_every_reading(embedded) -> None:
    fresh = EventCSR.from_store(embedded, cache=False)
    # similarity matching (on by default only for small graphs) reads its candidates' texts too: off here
    rows = question_rows(fresh, "CEC", "schema", 60, seed=2, similar=False)
    assert fresh.texts.misses == 0  # every text came with its batch's one lookup
    shown = {n for r in rows for n in [r["e0"], r["e1"], *r["negative_chosen"]]}
    assert fresh.texts.fetched < len(fresh) and len(shown) > 0
    assert rows == question_rows(EventCSR.from_store(embedded), "CEC", "schema", 60, seed=2, similar=False)  # kept
    for task, level in (("CRR", "schema"), ("CRR", "instance"), ("CEC", "instance")):
        assert question_rows(EventCSR.from_store(embedded, cache=False), task, level, 30, seed=4) == \
            question_rows(EventCSR.from_store(embedded), task, level, 30, seed=4)


def test_a_store_without_a_file_keeps_nothing(store) -> None:
    """Any backend: a server store gets no folder, an embedded one a folder beside its file."""
    store.write_batch(synthetic_batch(n_types=100, n_edges=200, seed=1))
    folder = csr_cache.folder_of(store)
    assert (folder is None) == str(store.url).startswith(("bolt", "neo4j"))
    csr = EventCSR.from_store(store)
    edges = {(e["src"], FORWARD[t], e["dst"]) for t in EVENT_REL_TYPES for e in store.iter_edges(t)}
    idx = EventIndex(csr)
    for s, r, d in list(edges)[:40]:
        if s != d:
            assert idx.has_triple(csr.position(s), r, csr.position(d))


def test_adjacency_built_in_passes_ranks_like_the_rule(embedded, tmp_path) -> None:
    """Each node's neighbours: best weight, then the more frequent neighbour, then its id (stored
    direction out first, then type order), whatever the pass and chunk sizes."""
    from eventkg.queries.graph import adjacency, adjacency_build, columnar

    freq = {n["id"]: n.get("frequency") or 0.0 for n in embedded.iter_nodes("Event")}
    expected: dict[str, list[tuple]] = {i: [] for i in freq}
    for code, t in enumerate(adjacency.EVENT_TYPES):
        prop = columnar.WEIGHT_PROPERTY[t]
        for e in embedded.iter_edges(t):
            w = e.get(prop) if prop else None
            w = float("nan") if w is None else float(w)
            for node, other, out in ((e["src"], e["dst"], True), (e["dst"], e["src"], False)):
                key = (-(0.0 if w != w else w), -np.float32(freq[other]), other, not out, code)
                expected[node].append((key, other, t, out))
    for passes in (dict(range_entries=5, read_chunk=3), {}):
        folder = tmp_path / str(len(passes))
        folder.mkdir()
        adjacency_build.build_into(folder, embedded, {t: 1 for t in adjacency.EVENT_TYPES}, **passes)
        adj = adjacency._load(folder, None)
        assert adj.ids.tolist() == sorted(i.encode() for i in freq)
        for p, nid in enumerate(adj.ids.tolist()):
            lo, hi = adj.indptr[p], adj.indptr[p + 1]
            got = [(adj.id_of(q), adjacency.EVENT_TYPES[c], bool(o)) for q, c, o in
                   zip(adj.nbr[lo:hi].tolist(), adj.etype[lo:hi].tolist(), adj.out[lo:hi].tolist(), strict=True)]
            assert got == [(o, t, out) for _, o, t, out in sorted(expected[nid.decode()], key=lambda x: x[0])], nid


def test_a_read_only_store_is_read_through_a_second_opening_into_the_same_arrays(embedded, monkeypatch) -> None:
    """A read-only store's first read goes through read-only openings of its own, each closed once
    its columns are read (the engine's pages go with it); what it keeps equals a plain read of the
    store, whatever the node page (several pages here, one by default)."""
    import eventkg.graphstore as graphstore

    fresh = EventCSR.from_store(embedded, cache=False)
    texts = _stored_texts(embedded)
    rows = question_rows(fresh, "CEC", "schema", 40, seed=3)  # its texts are read from this store
    url = embedded.url
    embedded.close()
    opened: list[object] = []
    real_open = graphstore.open_store

    def counting_open(*args, **kwargs):
        s = real_open(*args, **kwargs)
        opened.append(s)
        return s

    monkeypatch.setattr(graphstore, "open_store", counting_open)
    monkeypatch.setattr(columnar, "node_page", lambda: 37)  # 300+ events: many pages
    with real_open(url, read_only=True) as ro:
        kept = EventCSR.from_store(ro)
        # the texts are read in another thread meanwhile; the first text asked for waits for them
        assert isinstance(kept.texts, PendingTexts)
        texts_kept = kept.texts.wait()
        # the nodes, the edges, then the texts: each through an opening of its own, closed once read
        assert len(opened) == 3 and all(s is not ro and s.connection is None for s in opened)
        assert isinstance(texts_kept, FileTexts) and isinstance(kept.nbr.base, np.memmap)
        assert (csr_cache.folder_of(ro) / "stamp.json").is_file()
        for name in ("indptr", "nbr", "code", "level", "type_of", "inst_indptr", "inst"):
            assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
        assert kept.ids == fresh.ids
        assert kept.texts.all() == [texts[i] for i in kept.ids]
        assert question_rows(kept, "CEC", "schema", 40, seed=3) == rows


def test_questions_go_on_while_the_texts_are_read_and_come_out_the_same(embedded, monkeypatch) -> None:
    """Texts still being read (PendingTexts): the generator holds its drafts instead of waiting,
    up to TEXT_BATCH_MAX, and writes the same rows once they are there."""
    from concurrent.futures import Future

    from eventkg.queries.questions import generate

    monkeypatch.setattr(generate, "TEXT_BATCH", 4)
    monkeypatch.setattr(generate, "TEXT_BATCH_MAX", 16)
    csr = EventCSR.from_store(embedded)
    # similarity matching reads the texts while it draws negatives, so it waits for them: off here
    rows = question_rows(csr, "CEC", "schema", 60, seed=2, similar=False)
    done: Future = Future()
    pending = PendingTexts(done)
    asked = []

    def ready() -> bool:  # ready after a few looks: drafts are held meanwhile, then written
        asked.append(1)
        if len(asked) == 3:
            done.set_result(csr.texts)
        return done.done()

    pending.ready = ready  # type: ignore[method-assign]
    waiting = EventCSR(csr.ids, pending, csr.level, csr.indptr, csr.nbr, csr.code, csr.type_of, csr.inst_indptr, csr.inst)
    assert question_rows(waiting, "CEC", "schema", 60, seed=2, similar=False) == rows
    assert len(asked) >= 3
    never: Future = Future()
    held = EventCSR(csr.ids, PendingTexts(never), csr.level, csr.indptr, csr.nbr, csr.code, csr.type_of,
                    csr.inst_indptr, csr.inst)
    monkeypatch.setattr(never, "result", lambda timeout=None: csr.texts)  # waits only when TEXT_BATCH_MAX is reached
    assert question_rows(held, "CEC", "schema", 60, seed=2, similar=False) == rows


ODD_TEXTS = ["plain", "with,comma", 'with "quote"', "new\nline", "cr\rret", "back\\slash", "unicode é ☃", "",
             None, '"', "  lead space", "trail ", ",", '""', "tab\there", "\\N", "NULL", "null", "a\r\n,b"]


def test_the_engine_s_export_brings_back_any_text_and_id_as_stored(tmp_path) -> None:
    """The first read of a store exports its columns to CSV files (columnar.Export) and reads them
    back: quotes, separators, line breaks, empty texts and missing ones come back as stored, the
    files are gone afterwards, the graph is the one read without files, and a quote or backslash
    in the folder's name (it goes into a Cypher string) changes nothing."""
    folder = tmp_path / "it's a \\ folder"
    folder.mkdir()
    url = str(folder / "odd.lbug")
    b = Batch()
    ids = [f"id,{i}" if i % 3 == 0 else f'id"{i}\n' if i % 3 == 1 else f"id{i}" for i in range(len(ODD_TEXTS))]
    for i, (nid, text) in enumerate(zip(ids, ODD_TEXTS, strict=True)):
        b.add_node("Event", {"id": nid, "sources": ["t"], "level": "schema", **({} if text is None else {"text": text})})
        b.add_edge("CAUSES", {"src": nid, "dst": ids[(i + 1) % len(ids)], "sources": ["t"]})
    with open_store(url) as w:
        w.write_batch(b)
        stored = _stored_texts(w)
    with open_store(url, read_only=True) as ro:
        csr_cache.clear(ro)
        fresh = EventCSR.from_store(ro, cache=False)  # read by pages of node offsets, no file
        kept = EventCSR.from_store(ro)
        texts = kept.texts.wait() if isinstance(kept.texts, PendingTexts) else kept.texts
        assert isinstance(texts, FileTexts) and kept.ids.tolist() == sorted(ids)
        assert texts.all() == [stored[i] for i in kept.ids]
        assert sorted(p.name for p in csr_cache.folder_of(ro).iterdir()) == sorted(
            [*(f"{a}.npy" for a in csr_cache.ARRAYS), "stamp.json", csr_cache.TEXTS, "text_start.npy", "text_length.npy"])
        for name in ("indptr", "nbr", "code", "level"):
            assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
        assert kept.ids == fresh.ids
        export = columnar.Export(ro, "MATCH (e:Event) RETURN e.id AS id", folder / "ids.csv", {"id": pa.string()})
        assert sorted(x for batch in export.batches() for x in batch.column(0).to_pylist()) == sorted(ids)
        assert not (folder / "ids.csv").exists()


def test_ids_whose_kept_leading_bits_tie_are_put_in_byte_order() -> None:
    """id_order keeps an id's leading bits above its row index and sorts once; rows whose kept
    bits tie (ids sharing their first 14 digits here, in runs of several) come out in byte order,
    and _order_ties sorts each tied run on its own, in place."""
    from eventkg.queries.graph.event_ids import _order_ties

    rng = random.Random(7)
    stems = [f"{rng.getrandbits(56):014x}" for _ in range(40)]
    ids = [s + f"{rng.getrandbits(24):06x}" for s in stems for _ in range(rng.randint(1, 6))]
    ids += [f"{rng.getrandbits(80):020x}" for _ in range(3000)]
    ids = sorted(set(ids), key=lambda _: rng.random())
    raw = as_bytes(ids)
    assert [ids[i] for i in id_order(raw)] == sorted(ids)
    run = as_bytes(["c", "a", "b", "z", "y"])
    order = np.arange(5)
    _order_ties(run, order, np.array([True, True, False, True]))  # runs: rows 0-2, rows 3-4
    assert order.tolist() == [1, 2, 0, 4, 3]


def test_exported_nodes_of_one_width_are_read_as_fixed_rows_and_match_the_paged_read(embedded, tmp_path) -> None:
    """The engine writes each node's key and id, and apart the keys of instance events; ids of one
    width (the store's ids) give rows of one width, read straight into arrays (fixed_rows); an
    id of another width (or a quoted one) sends the file through the CSV reader. Both give what the
    paged read gives, and leave no file behind."""
    def exported(store, folder):
        top = columnar.max_event_offset(store)
        nodes = columnar.export_nodes(store, folder)
        one_width = columnar.fixed_rows(nodes[0].path) is not None
        return one_width, columnar.exported_node_columns(nodes, top), columnar.event_node_columns(store, top, 64)

    for step, folder in enumerate((tmp_path / "a", tmp_path / "b")):
        folder.mkdir()
        one_width, got, paged = exported(embedded, folder)
        assert one_width is (step == 0) and not list(folder.iterdir())
        assert got.keys.dtype == paged.keys.dtype and np.array_equal(got.keys, paged.keys)
        assert np.array_equal(got.ids, paged.ids) and np.array_equal(got.instance, paged.instance)
        levels = {n["id"]: n.get("level") for n in embedded.iter_nodes("Event")}
        assert got.instance.tolist() == [levels[i.decode()] == "instance" for i in got.ids]
        assert 0 < got.instance.sum() < len(got.ids)
        b = Batch()  # an id of another width: not fixed rows any more
        b.add_node("Event", {"id": "zz-new", "sources": ["t"], "text": "new event", "level": "instance"})
        embedded.write_batch(b)
    bad = tmp_path / "bad.csv"
    for text in (b"1000000000,abc\n1000000001,\"b,\"\n", b"1000000000,abcd\n100000000x,abcd\n",
                 b"1000000000,ab\r\n1000000001,cd\r\n", b"1000000000,abc\n1000000001,abcd\n"):
        bad.write_bytes(text)
        assert columnar.fixed_rows(bad) is None
    bad.write_bytes(b"1000000007,abc\n1000000000,xyz\n1987654320,uvw\n")
    keys, ids = columnar.fixed_rows(bad, chunk=2)
    assert keys.tolist() == [7, 0, 987654320] and ids.tolist() == [b"abc", b"xyz", b"uvw"]


def test_a_read_only_store_s_edges_are_read_back_a_type_at_a_time_beside_the_next_export(embedded, monkeypatch) -> None:
    """Each type's exported edges are read back in a thread of their own while the engine writes
    the next type's, the most edges first, both ends of an edge in one key of as few bits as the
    offsets need; what comes back equals the paged read (as a set: the export's row order is the
    engine's)."""
    import threading

    top = columnar.max_event_offset(embedded)
    types = [*EVENT_REL_TYPES, "HAS_TYPE"]
    counts = columnar.edge_counts(embedded, types)
    paged = columnar.event_edge_columns(embedded, types, top, counts)
    url = embedded.url
    embedded.close()
    read_in: list[tuple[str, str]] = []
    real = columnar.edge_columns_of

    bits = columnar.edge_key_bits(top)
    assert (top + 1) <= 1 << bits < 2 * (top + 1)
    keys: list[int] = []

    def spying(exports, top, use_threads=True):
        read_in.extend((t, threading.current_thread().name) for t in exports)
        keys.extend(int(line) for x in exports.values() if x is not None for line in x.path.read_text().split())
        return real(exports, top, use_threads)

    monkeypatch.setattr(columnar, "edge_columns_of", spying)
    with open_store(url, read_only=True) as ro, tempfile.TemporaryDirectory() as folder:
        got = csr_cache._read_edges(ro, types, top, counts, Path(folder))
        assert not list(Path(folder).iterdir())
    assert [t for t, _ in read_in] == sorted(types, key=lambda t: -counts[t])
    assert all(name.startswith("event-graph-parse") for _, name in read_in)
    # both ends in one key of as few bits as the offsets need
    assert len(keys) == sum(counts.values()) and max(keys) < (top + 1) << bits
    assert list(got) == types
    for t in types:  # the same edges, in whatever order the engine wrote them
        assert sorted(zip(got[t][0].tolist(), got[t][1].tolist(), strict=True)) == sorted(
            zip(paged[t][0].tolist(), paged[t][1].tolist(), strict=True)) and got[t][0].dtype == paged[t][0].dtype, t
