"""``export rdf`` and ``export graphml`` parse back to what the store holds, on every backend.

The EV² samples and the ASER sample (events mapped, concepts too) are ingested; the files are
read back with rdflib and networkx, and compared with the store itself: its counts (what
``eventkg stats`` prints), its nodes and its edges. A subgraph export is compared with
``retrieve``, the call ``eventkg subgraph`` makes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import networkx as nx
import pytest
from rdflib import RDF, Graph, URIRef
from rdflib.collection import Collection

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.queries.errors import ExportError
from eventkg.queries.export.graphml import export_graphml
from eventkg.queries.export.rdf import export_rdf
from eventkg.queries.export.select import select_subgraph
from eventkg.queries.retrieval.retrieve import retrieve
from tests.support.paths import SAMPLES

EKG = "https://eventkg.org/ns#"
EKGID = "https://eventkg.org/id/"
RDF_FORMATS = {".ttl": "turtle", ".nt": "nt"}


def load_samples(store) -> None:
    ingest_source(store, "ev2", SAMPLES / "ev2")
    ingest_source(store, "aser", SAMPLES / "aser", map_events=True, concepts=SAMPLES / "aser" / "concept.db")


@pytest.fixture
def loaded(store):
    load_samples(store)
    counts = store.counts()
    assert counts["nodes"]["Concept"] and counts["edges"]["PRECEDENCE"] and counts["edges"]["HAS_CHOICE"]
    return store


def parse_rdf(path: Path) -> Graph:
    return Graph().parse(path, format=RDF_FORMATS[path.suffix])


def node_id(iri) -> str:
    assert str(iri).startswith(EKGID), iri
    return unquote(str(iri)[len(EKGID):])


def relationship_triples(g: Graph, rtype: str) -> set[tuple[str, str]]:
    return {(node_id(s), node_id(o)) for s, o in g.subject_objects(URIRef(EKG + rtype))}


def statements(g: Graph) -> dict[tuple[str, str, str], dict[str, set]]:
    """(src, TYPE, dst) -> {property: set of values} from the reified statements."""
    out = {}
    for st in g.subjects(RDF.type, RDF.Statement):
        key = (node_id(g.value(st, RDF.subject)), str(g.value(st, RDF.predicate))[len(EKG):],
               node_id(g.value(st, RDF.object)))
        props: dict[str, set] = {}
        for p, o in g.predicate_objects(st):
            if str(p).startswith(EKG):
                props.setdefault(str(p)[len(EKG):], set()).add(o.toPython())
        out[key] = props
    return out


# -- RDF -----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".ttl", ".nt"])
def test_rdf_parses_back_to_the_store(loaded, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"graph{suffix}"
    export_rdf(loaded, path, page_size=97)  # many batches: the streamed pieces must join up
    g = parse_rdf(path)
    counts = loaded.counts()
    for rtype, n in counts["edges"].items():
        assert len(list(g.triples((None, URIRef(EKG + rtype), None)))) == n, rtype
    for label, n in counts["nodes"].items():
        assert len(set(g.subjects(RDF.type, URIRef(EKG + label)))) == n, label
    for rtype in ("CAUSES", "PRECEDENCE", "HAS_TYPE", "ABSTRACTS_TO", "HAS_CHOICE"):
        assert relationship_triples(g, rtype) == {(e["src"], e["dst"]) for e in loaded.iter_edges(rtype)}, rtype
    if suffix == ".ttl":
        assert path.read_text().count("@prefix ekg:") == 1


def test_rdf_keeps_node_text_sources_and_lists(loaded, tmp_path: Path) -> None:
    path = tmp_path / "graph.ttl"
    export_rdf(loaded, path, page_size=500)
    g = parse_rdf(path)
    text, sources = URIRef(EKG + "text"), URIRef(EKG + "sources")
    for event in loaded.iter_nodes("Event"):
        iri = URIRef(EKGID + event["id"])
        assert str(g.value(iri, text)) == event["text"]
        assert {str(s) for s in g.objects(iri, sources)} == set(event["sources"])
    for concept in loaded.iter_nodes("Concept"):
        assert str(g.value(URIRef(EKGID + concept["id"]), URIRef(EKG + "name"))) == concept["name"]
    asked = [q for q in loaded.iter_nodes("Question") if q.get("choices")]
    assert asked
    for q in asked:
        head = g.value(URIRef(EKGID + q["id"]), URIRef(EKG + "choices"))
        assert [str(c) for c in Collection(g, head)] == q["choices"]


def test_rdf_keeps_edge_properties_on_statements(loaded, tmp_path: Path) -> None:
    path = tmp_path / "graph.nt"
    export_rdf(loaded, path)
    found = statements(parse_rdf(path))
    checked = 0
    for rtype in ("PRECEDENCE", "CAUSES", "HAS_CHOICE", "ASKS"):
        declared = REL_TYPES[rtype].properties
        for e in loaded.iter_edges(rtype):
            props = found[(e["src"], rtype, e["dst"])]
            assert props.get("sources", set()) == set(e["sources"])
            for name in declared:
                if e.get(name) is not None:
                    assert props[name] == {e[name]}, (rtype, name)
                    checked += 1
    assert checked > 100


# -- GraphML -------------------------------------------------------------------------------


def test_graphml_parses_back_to_the_store(loaded, tmp_path: Path) -> None:
    path = tmp_path / "graph.graphml"
    export_graphml(loaded, path)
    g = nx.read_graphml(path)
    counts = loaded.counts()
    assert Counter(label for _, label in g.nodes(data="label")) == +Counter(counts["nodes"])
    assert Counter(t for _, _, t in g.edges(data="type")) == +Counter(counts["edges"])
    for rtype in ("CAUSES", "PRECEDENCE", "HAS_TYPE", "ABSTRACTS_TO"):
        exported = {(u, v) for u, v, t in g.edges(data="type") if t == rtype}
        assert exported == {(e["src"], e["dst"]) for e in loaded.iter_edges(rtype)}, rtype
    for event in loaded.iter_nodes("Event"):
        attrs = g.nodes[event["id"]]
        assert attrs.get("text", "") == event["text"]
        assert attrs["sources"].split(",") == sorted(event["sources"])
        if event.get("frequency") is not None:
            assert attrs["frequency"] == pytest.approx(event["frequency"])
    for q in loaded.iter_nodes("Question"):
        if q.get("choices"):
            assert json.loads(g.nodes[q["id"]]["choices"]) == q["choices"]
    counts_by_pair = {(e["src"], e["dst"]): e["count"] for e in loaded.iter_edges("PRECEDENCE")}
    for u, v, attrs in g.edges(data=True):
        if attrs["type"] == "PRECEDENCE":
            assert attrs["count"] == pytest.approx(counts_by_pair[(u, v)])


# -- subgraph selection --------------------------------------------------------------------


def test_subgraph_export_holds_exactly_the_retrieved_subgraph(loaded, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("EVENTKG_CACHE", str(tmp_path / "cache"))  # a Neo4j store's index goes here
    graph = select_subgraph(loaded, "learn", k=3, hops=1, device="cpu")
    expected = retrieve(loaded, "learn", k=3, hops=1).graph
    nodes, edges = set(expected.nodes), {(u, t, v) for u, v, t in expected.edges(keys=True)}
    assert len(nodes) > 3 and edges
    export_rdf(graph, tmp_path / "sub.ttl")
    export_graphml(graph, tmp_path / "sub.graphml")
    g = parse_rdf(tmp_path / "sub.ttl")
    typed = {node_id(s) for label in NODE_TYPES for s in g.subjects(RDF.type, URIRef(EKG + label))}
    assert typed == nodes
    assert {(s, t, o) for t in REL_TYPES for s, o in relationship_triples(g, t)} == edges
    gml = nx.read_graphml(tmp_path / "sub.graphml")
    assert set(gml.nodes) == nodes
    assert {(u, t, v) for u, v, t in gml.edges(data="type")} == edges
    stored = {(e["src"], t, e["dst"]): e["sources"] for t in {t for _, t, _ in edges} for e in loaded.iter_edges(t)}
    for (u, t, v), props in statements(g).items():
        assert props["sources"] == set(stored[(u, t, v)])
    assert {(u, t, v) for u, v, t in gml.edges(data="type")} <= stored.keys()
    for u, v, attrs in gml.edges(data=True):
        assert attrs["sources"].split(",") == sorted(stored[(u, attrs["type"], v)])


# -- errors and the CLI ----------------------------------------------------------------------


def test_a_graph_outside_the_model_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    g = nx.MultiDiGraph()
    g.add_node("a", label="Event", text="a")
    g.add_node("b", label="Event", colour="red")
    with pytest.raises(ExportError, match="'colour' is not declared"):
        export_rdf(g, tmp_path / "g.ttl", page_size=1)  # node "a" is written before "b" fails
    with pytest.raises(ExportError, match="'colour' is not declared"):
        export_graphml(g, tmp_path / "g.graphml")
    assert list(tmp_path.iterdir()) == []


def eventkg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eventkg", *args], capture_output=True, text=True, timeout=300)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.fixture
def ev2_path(tmp_path: Path) -> str:
    path = str(tmp_path / "ev2.lbug")
    with open_store(path) as store:
        ingest_source(store, "ev2", SAMPLES / "ev2")
    return path


def test_cli_whole_store_rdf_matches_stats(ev2_path: str, tmp_path: Path) -> None:
    stats = json.loads(eventkg("--store", ev2_path, "stats", "--json").stdout)
    run = eventkg("--store", ev2_path, "export", "rdf", str(tmp_path / "ev2.nt"), "--json")
    assert run.returncode == 0, run.stderr
    g = parse_rdf(tmp_path / "ev2.nt")
    relationship = [p for p in set(g.predicates()) if str(p)[len(EKG):] in REL_TYPES]
    assert sum(1 for p in relationship for _ in g.triples((None, p, None))) == sum(stats["edges"].values())
    assert json.loads(run.stdout)["edges"] == stats["edges"]


def test_cli_bad_suffix_and_options_without_text(ev2_path: str, tmp_path: Path) -> None:
    line = one_line_error(eventkg("--store", ev2_path, "export", "rdf", str(tmp_path / "g.rdf")))
    assert "'.rdf'" in line and ".ttl" in line and ".nt" in line
    line = one_line_error(eventkg("--store", ev2_path, "export", "graphml", str(tmp_path / "g.xml")))
    assert ".graphml" in line
    line = one_line_error(eventkg("--store", ev2_path, "export", "graphml", str(tmp_path / "g.graphml"), "--hops", "1"))
    assert "--hops" in line and "--text" in line
    assert not list(tmp_path.glob("g.*"))


def test_cli_subgraph_export_takes_the_subgraph_options(ev2_path: str, tmp_path: Path) -> None:
    options = ["--text", "learn", "-k", "2", "--hops", "1", "--rel", "Causes", "--level", "schema", "--device", "cpu"]
    shown = eventkg("--store", ev2_path, "subgraph", *options, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    run = eventkg("--store", ev2_path, "export", "graphml", str(tmp_path / "s.graphml"), *options)
    assert run.returncode == 0, run.stderr
    gml = nx.read_graphml(tmp_path / "s.graphml")
    assert set(gml.nodes) == {n["id"] for n in json.loads(shown.stdout)["nodes"]}
    assert {t for _, _, t in gml.edges(data="type")} == {"CAUSES"}
