"""The bulk path: ``export neo4j-import`` CSV + ``neo4j-admin database import full`` builds the
same graph as writing through Bolt.

The reference is the Bolt path itself (the session server of tests/support/neo4j_fixture.py): the
project samples and a batch of awkward values go both ways, and every node and edge of
every label and type must come out equal. Needs Java and Maven (skips outside CI otherwise).
"""

from __future__ import annotations

import json

import pytest

from eventkg import ingest_source
from eventkg.graphstore import Batch, StoreError, open_store
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.neo4j import admin_import
from eventkg.graphstore.neo4j.admin_import import _lanes, admin_arguments, export_neo4j_import, node_header, rel_header
from eventkg.graphstore.neo4j.schema import creation_order, schema_statements
from eventkg.graphstore.neo4j.server import huge_pages
from eventkg.graphstore.neo4j.server import launch as server_mod
from tests.support.paths import SAMPLES

pytestmark = pytest.mark.neo4j



def awkward_batch() -> Batch:
    """Values a CSV file can get wrong: quotes, commas, line breaks, empty vs null, lists, numbers."""
    b = Batch()
    texts = {"q1": 'he said "hi", then left', "q2": "two\nlines\r\nhere", "q3": "", "q4": "back\\slash; semi"}
    for nid, text in texts.items():
        b.add_node("Event", {"id": nid, "text": text, "level": "schema", "sources": ["zeta", "alpha"],
                             "frequency": 0.1, "cluster": 7})
    b.add_node("Event", {"id": "q5", "text": None, "sources": [], "frequency": 1e20})  # nulls: not set
    b.add_node("Question", {"id": "qq", "qid": "Q-1", "choices": ["a; b", "c,d", ""], "sources": ["t"]})
    b.add_edge("CAUSES", {"src": "q1", "dst": "q2", "sources": ["t"], "weight": 2.5})
    b.add_edge("CAUSES", {"src": "q2", "dst": "q3", "sources": [], "weight": None})
    b.add_edge("ASKS", {"src": "qq", "dst": "q1", "sources": ["t"], "role": 'e0 "x"'})
    return b


def load_all(store) -> None:
    ingest_source(store, "ev2", SAMPLES / "ev2")
    ingest_source(store, "eeckg", SAMPLES / "eeckg")
    ingest_source(store, "aser", SAMPLES / "aser", map_events=True, concepts=SAMPLES / "aser" / "concept.db")
    ingest_source(store, "abspyramid", SAMPLES / "abspyramid")
    ingest_source(store, "clomo", SAMPLES / "clomo")
    store.write_batch(awkward_batch())


def everything(store) -> dict[str, list]:
    """Every node and edge, per label/type, in a canonical order."""
    out: dict[str, list] = {}
    for label in NODE_TYPES:
        out[label] = sorted(json.dumps(r, sort_keys=True) for r in store.iter_nodes(label))
    for rtype in REL_TYPES:
        out[rtype] = sorted(json.dumps(r, sort_keys=True) for r in store.iter_edges(rtype))
    return out


@pytest.fixture(scope="module")
def both(neo4j_server, tmp_path_factory):
    """(graph written through Bolt, graph built by the bulk importer), as ``everything`` dicts."""
    work = tmp_path_factory.mktemp("bulk")
    with open_store(str(work / "emb.lbug")) as emb:
        load_all(emb)
        export_neo4j_import(emb, work / "csv")
    with open_store(neo4j_server.url) as bolt:
        bolt.clear()
        load_all(bolt)
        via_bolt, bolt_counts = everything(bolt), bolt.counts()
        bolt.clear()
    server = server_mod.start(heap="512m", pagecache="64m", import_dir=work / "csv",
                              jvm_flags=["-XX:TieredStopAtLevel=1"])
    try:
        with open_store(server.url) as bulk:
            yield via_bolt, everything(bulk), bolt_counts, bulk.counts(), work / "csv"
    finally:
        server.stop()


def test_bulk_import_gives_the_same_counts_as_bolt(both):
    _, _, bolt_counts, bulk_counts, _ = both
    assert bulk_counts == bolt_counts
    # the samples reach every source: events, questions, concepts, CLoMo arguments...
    for label in ("Event", "Question", "Concept", "Argument", "Premise"):
        assert bulk_counts["nodes"][label] > 0
    assert bulk_counts["edges"]["CAUSES"] > 0 and bulk_counts["edges"]["ABSTRACTS_TO"] > 0


def test_bulk_import_gives_the_same_nodes_and_edges_as_bolt(both):
    via_bolt, via_bulk, _, _, _ = both
    for name in via_bolt:
        assert via_bulk[name] == via_bolt[name], name


def test_awkward_values_survive_the_csv(both):
    _, via_bulk, _, _, _ = both
    events = {r["id"]: r for r in map(json.loads, via_bulk["Event"])}
    assert events["q1"]["text"] == 'he said "hi", then left' and events["q1"]["sources"] == ["alpha", "zeta"]
    assert events["q2"]["text"] == "two\nlines\r\nhere"
    assert events["q3"]["text"] == ""  # an empty string stays one; a null stays unset
    assert events["q5"]["text"] is None and events["q5"]["sources"] == [] and events["q5"]["frequency"] == 1e20
    assert events["q1"]["cluster"] == 7 and isinstance(events["q1"]["cluster"], int)
    (question,) = [r for r in map(json.loads, via_bulk["Question"]) if r["id"] == "qq"]
    assert question["choices"] == ["a; b", "c,d", ""]


def test_export_writes_headers_the_importer_reads(both):
    *_, csv = both
    first = (csv / "nodes-Event.csv").read_text().splitlines()[0]
    assert first == ",".join(f'"{h}"' for h in node_header("Event"))
    # nodes are numbered for the importer (--id-type=actual); the string id is a plain property
    assert node_header("Event")[:3] == [":ID(Event)", "id", "sources:string[]"]
    assert rel_header("ASKS")[:3] == [":START_ID(Question)", ":END_ID(Event)", "sources:string[]"]
    manifest = json.loads((csv / "import.json").read_text())
    assert manifest["multiline"] == ["nodes-Event.csv"]  # only the file with a line break in a value
    assert "--relationships=CAUSES=rels-CAUSES.csv" in admin_arguments(csv)
    assert "--id-type=actual" in admin_arguments(csv)


def test_a_folder_without_a_manifest_is_one_line(tmp_path):
    (tmp_path / "nodes-Event.csv").write_text('"id:ID(Event)"\n"a"\n')
    with pytest.raises(StoreError, match="no import.json") as err:
        admin_arguments(tmp_path)
    assert "\n" not in str(err.value)
    with pytest.raises(StoreError, match="no such folder"):
        admin_arguments(tmp_path / "nope")


def test_import_refuses_a_home_whose_database_exists(tmp_path):
    with open_store(str(tmp_path / "e.lbug")) as emb:
        emb.write_batch(awkward_batch())
        export_neo4j_import(emb, tmp_path / "csv")
    home = tmp_path / "home"
    (home / "data" / "databases" / "neo4j").mkdir(parents=True)
    with pytest.raises(StoreError, match="exists there already"):
        server_mod.run_import(tmp_path / "csv", home=home)


def test_a_value_holding_the_array_delimiter_is_refused_naming_the_row(tmp_path):
    with open_store(str(tmp_path / "e.lbug")) as emb:
        emb.upsert_nodes("Question", [{"id": "bad-q", "qid": "x", "choices": ["ok", "a\x1fb"], "sources": ["t"]}])
        with pytest.raises(StoreError, match="nodes-Question.csv: Question 'bad-q': choices"):
            export_neo4j_import(emb, tmp_path / "csv")
    assert not (tmp_path / "csv" / "import.json").exists()  # an unfinished export cannot be imported
    assert not (tmp_path / "csv" / admin_import.SPOOL).exists()  # nor does it leave the engine's node files


def test_export_reads_only_an_embedded_store(neo4j_server, tmp_path):
    with open_store(neo4j_server.url) as bolt, pytest.raises(StoreError, match="embedded LadybugDB store"):
        export_neo4j_import(bolt, tmp_path / "csv")


def test_an_edge_holding_the_array_delimiter_is_refused_naming_its_source(tmp_path):
    with open_store(str(tmp_path / "e.lbug")) as emb:
        emb.upsert_nodes("Event", [{"id": f"e{i}", "text": f"t{i}", "sources": ["t"]} for i in range(3)])
        emb.upsert_edges("CAUSES", [{"src": "e2", "dst": "e0", "sources": ["t"]},
                                    {"src": "e1", "dst": "e2", "sources": ["ok", "x\x1fy"]}])
        with pytest.raises(StoreError, match=r"rels-CAUSES.csv: CAUSES edge from 'e1': sources\S* holds U\+001F"):
            export_neo4j_import(emb, tmp_path / "csv")
    assert not (tmp_path / "csv" / "import.json").exists()


class _Recorded:
    """A real embedded store whose connection notes every statement it runs (one lane: no ``open_connection``)."""

    def __init__(self, store) -> None:
        self.url, self._conn, self.statements = store.url, store.connection, []

    @property
    def connection(self):
        return self

    def execute(self, statement: str, *args):
        self.statements.append(statement)
        return self._conn.execute(statement, *args)


def test_a_node_table_is_read_once_by_the_engine_then_in_pages(tmp_path, monkeypatch):
    """Pages of node offsets, one query each, read the whole node table per page (the square of its
    size at 10M events); the export has the engine write each node table once and pages that file."""
    monkeypatch.setattr(admin_import, "PAGE", 3)
    out = tmp_path / "it's here"  # the engine's file path goes into a Cypher string
    with open_store(str(tmp_path / "e.lbug")) as emb:
        emb.upsert_nodes("Event", [{"id": f"e{i}", "text": f"t{i}", "sources": ["t"]} for i in range(8)])
        emb.upsert_edges("CAUSES", [{"src": f"e{i}", "dst": f"e{i + 1}", "sources": ["t"]} for i in range(7)])
        recorded = _Recorded(emb)
        export_neo4j_import(recorded, out)
    reads = [s for s in recorded.statements if "(n:Event)" in s and "RETURN count" not in s and "max(" not in s]
    assert len(reads) == 1 and reads[0].startswith("COPY (MATCH (n:Event)"), reads
    rows = [line.split(",") for line in (out / "nodes-Event.csv").read_text().splitlines()[1:]]
    assert sorted(r[1].strip('"') for r in rows) == [f"e{i}" for i in range(8)]  # each node once
    assert len({r[0] for r in rows}) == 8
    assert len((out / "rels-CAUSES.csv").read_text().splitlines()) == 8  # the header and 7 edges
    assert not (out / admin_import.SPOOL).exists()


def test_node_offsets_left_free_by_a_delete_import_as_holes(tmp_path):
    """Node numbers are LadybugDB offsets: a deleted node leaves a gap the importer must accept."""
    with open_store(str(tmp_path / "e.lbug")) as emb:
        emb.upsert_nodes("Event", [{"id": f"e{i}", "text": f"t{i}", "sources": ["t"]} for i in range(5)])
        emb.upsert_nodes("Concept", [{"id": "c0", "name": "thing", "sources": ["t"]}])
        emb.upsert_edges("CAUSES", [{"src": "e0", "dst": "e4", "sources": ["t"]},
                                    {"src": "e4", "dst": "e3", "sources": ["t"]}])
        emb.upsert_edges("ABSTRACTS_TO", [{"src": "e3", "dst": "c0", "sources": ["t"]}])
        emb.connection.execute("MATCH (n:Event) WHERE n.id IN ['e1', 'e2'] DETACH DELETE n")
        export_neo4j_import(emb, tmp_path / "csv")
    numbers = [int(line.split(",")[0]) for line in (tmp_path / "csv" / "nodes-Event.csv").read_text().splitlines()[1:]]
    assert len(numbers) == 3 and max(numbers) >= 3  # the gap is there
    server = server_mod.start(heap="512m", pagecache="16m", import_dir=tmp_path / "csv",
                              jvm_flags=["-XX:TieredStopAtLevel=1"])
    try:
        with open_store(server.url) as bulk:
            assert sorted(r["id"] for r in bulk.iter_nodes("Event")) == ["e0", "e3", "e4"]
            assert [r["id"] for r in bulk.iter_nodes("Concept")] == ["c0"]
            assert sorted((r["src"], r["dst"]) for r in bulk.iter_edges("CAUSES")) == [("e0", "e4"), ("e4", "e3")]
            assert [(r["src"], r["dst"]) for r in bulk.iter_edges("ABSTRACTS_TO")] == [("e3", "c0")]
            assert bulk.counts()["nodes"]["Event"] == 3
    finally:
        server.stop()


def test_export_lanes_take_the_biggest_files_first_onto_the_lighter_lane():
    jobs = [("A", "a", 10, None), ("B", "b", 60, None), ("C", "c", 30, None), ("D", "d", 25, None)]
    lanes = [[key for key, *_ in lane] for lane in _lanes(jobs, 2)]
    assert lanes == [["B"], ["C", "D", "A"]]  # 60 vs 30 + 25 + 10 = 65
    assert [[key for key, *_ in lane] for lane in _lanes(jobs[:1], 2)] == [["A"]]  # no empty lane


def test_schema_creates_plain_indexes_before_constraints():
    ordered = [ddl for _, ddl in creation_order(schema_statements())]
    kinds = ["constraint" if ddl.startswith("CREATE CONSTRAINT") else "index" for ddl in ordered]
    assert kinds == sorted(kinds, key=lambda k: k == "constraint") and "index" in kinds and "constraint" in kinds
    assert sorted(ordered) == sorted(ddl for _, ddl in schema_statements())  # nothing lost or added


@pytest.mark.parametrize(("setting", "offered"), [
    ("always [madvise] never\n", True), ("[always] madvise never\n", True), ("always madvise [never]\n", False), (None, False),
])
def test_the_importer_asks_for_huge_pages_only_where_the_kernel_offers_them(tmp_path, setting, offered):
    path = tmp_path / "enabled"
    if setting is not None:
        path.write_text(setting)
    assert huge_pages.offered(path) is offered


def test_mallocs_huge_pages_join_the_users_glibc_tunables_and_never_override_them():
    assert huge_pages.with_malloc_huge_pages({})["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"
    mine = {"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"}
    assert huge_pages.with_malloc_huge_pages(mine)["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    chosen = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"}
    assert huge_pages.with_malloc_huge_pages(chosen) == chosen
