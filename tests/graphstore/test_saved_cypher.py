"""The shipped exploration queries (graphstore/saved.cypher) on the project's samples, per backend.

Every saved query runs on every selected backend that its Cypher allows, and its rows are
checked against an oracle that does not use the query: the facts the samples were made
from (``scripts/sample_world.py``), the sample files themselves, or the store's own
``fetch_graph``/``iter_edges`` with networkx and :func:`eventkg.queries.induction.induce.induce`. The scalar
columns must therefore be the same on LadybugDB and Neo4j.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import networkx as nx
import pytest
from typer.testing import CliRunner

from eventkg import ingest_source
from eventkg.cli.app import app
from eventkg.graphstore import open_store
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.errors import SavedQueryError
from eventkg.graphstore.model import (
    CLOMO_RELATIONS,
    INVERSE,
    NODE_TYPES,
    STORED_TO_FORWARD,
    normalise_text,
    upper_snake,
)
from eventkg.graphstore.saved_cypher import (
    GRAPH_COLUMN,
    backend_of,
    get_saved_query,
    load_saved_queries,
    parse_queries,
    run_saved_query,
)
from eventkg.queries.induction.induce import induce
from tests.support.paths import SAMPLES
from tests.support.samples import ingest_samples
from tests.support.scripts_import import load_script_module

world = load_script_module("sample_world")  # the facts the sample files are written from
EVENT_TYPES = ["CAUSES", "BEFORE", "HAS_SUBEVENT"]
runner = CliRunner()


@pytest.fixture(scope="module")
def loaded(backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    """The ``store`` fixture's module-scoped twin, holding every project sample.

    Ingesting the samples into Neo4j takes several seconds, so it is done once per backend
    for this module instead of once per test; the session's Neo4j server is shared with other
    modules, hence the counts check in :func:`sample_store` before each use.
    """
    samples = SAMPLES
    if backend == "ladybug":
        s = open_store(str(tmp_path_factory.mktemp("saved") / "store.lbug"))
    else:
        s = open_store(request.getfixturevalue("neo4j_server").url)
        s.clear()
    ingest_samples(s, samples)
    s.expected_counts = s.counts()  # type: ignore[attr-defined]
    yield s
    s.close()


@pytest.fixture
def sample_store(loaded: GraphStore, samples_dir: Path) -> GraphStore:
    """:func:`loaded`, re-ingested if another module's test cleared the shared Neo4j server."""
    if loaded.counts() != loaded.expected_counts:  # type: ignore[attr-defined]
        loaded.clear()
        ingest_samples(loaded, samples_dir)
    return loaded


def _with_text(g: nx.MultiDiGraph, text: str) -> list[str]:
    return [n for n, d in g.nodes(data=True) if d.get("text") == text]


# --- oracles, one per saved query ----------------------------------------------------------


def check_causes_and_effects(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    g = store.fetch_graph(["CAUSES"])
    t = lambda n: g.nodes[n]["text"]  # noqa: E731
    expected = []
    for e in _with_text(g, params["event"]):
        for c1 in g.predecessors(e):
            expected.append(("cause", 1, t(c1), []))
            expected += [("cause", 2, t(c2), [t(c1)]) for c2 in g.predecessors(c1) if c2 not in (e, c1)]
        for x1 in g.successors(e):
            expected.append(("effect", 1, t(x1), []))
            expected += [("effect", 2, t(x2), [t(x1)]) for x2 in g.successors(x1) if x2 not in (e, x1)]
    got = [(r["role"], r["hops"], r["event"], r["via"]) for r in rows]
    assert sorted(got) == sorted(expected)
    # facts of world.py: reading the textbook causes learning, which leads to passing via remembering
    assert ("cause", 1, "read textbook", []) in got
    assert ("effect", 2, "pass exam", ["remember information"]) in got
    for role in ("cause", "effect"):  # each part is ordered by hops
        hops = [r["hops"] for r in rows if r["role"] == role]
        assert hops == sorted(hops)


def check_ev2_question_schema(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    item = next(
        json.loads(line)
        for line in (samples / "ev2" / f"I_{params['task']}.jsonl").read_text().splitlines()
        if line.strip() and json.loads(line)["id"] == params["qid"]
    )
    types = {normalise_text(name) for name in item["event_type"].values()}
    expected = {
        (normalise_text(item["instances"][k]), "HAS_TYPE", normalise_text(name))
        for k, name in item["event_type"].items()
    }
    g = store.fetch_graph(EVENT_TYPES)
    for a, b, rtype in g.edges(keys=True):
        if g.nodes[a]["text"] in types and g.nodes[b]["text"] in types and g.nodes[a]["level"] == "schema":
            expected.add((g.nodes[a]["text"], rtype, g.nodes[b]["text"]))
    got = [(normalise_text(r["head"]), r["relation"], normalise_text(r["tail"])) for r in rows]
    assert len(got) == len(set(got))
    assert set(got) == expected
    # the question's own gold edge, in stored direction
    e0, e1 = (normalise_text(item["event_type"][item[k]]) for k in ("e0", "e1"))
    assert (e0, "BEFORE", e1) in got and item["rel"] == "Before"


def check_abstractions(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    head, noun, nouns, verb, verbs, events, _split = next(h for h in world.ABS_HEADS if h[0] == params["event"])
    expected = {("NOUN_ENTAIL", noun, c, lab == 1, head.replace(noun, c)) for c, lab in nouns}
    expected |= {("VERB_ENTAIL", verb, c, lab == 1, head.replace(verb, c)) for c, lab in verbs}
    expected |= {("EVENT_ENTAIL", head, c, lab == 1, c) for c, lab in events}
    got = [(r["relation"], r["instance"], r["concept"], r["valid"], r["abstraction"]) for r in rows]
    assert sorted(got) == sorted(expected)
    keys = [(r["relation"], not r["valid"], r["concept"]) for r in rows]
    assert keys == sorted(keys)  # by relation, valid first, then concept


def check_aser_neighbourhood(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    expected = []
    for h, t, senses in world.ASER_RELATIONS:
        for sense, count in senses.items():
            if normalise_text(h) == params["event"]:
                expected.append((upper_snake(sense), "out", normalise_text(t), count))
            if normalise_text(t) == params["event"]:
                expected.append((upper_snake(sense), "in", normalise_text(h), count))
    got = [(r["relation"], r["direction"], r["neighbour"], r["count"]) for r in rows]
    assert sorted(got) == sorted(expected) and len(got) >= 5
    counts = [r["count"] for r in rows]
    assert counts == sorted(counts, reverse=True)


def check_clomo_argument(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    items = [x for f in sorted((samples / "clomo").glob("zero_*.json")) for x in json.loads(f.read_text())]
    item = next(x for x in items if x["id_string"] == params["item"])
    info = item["input_info"]
    strip = lambda s: s.split(":", 1)[1].strip()  # noqa: E731 - "Premise1: ..." -> "..."
    assert rows == [
        {
            "item": params["item"],
            "split": "test",
            "relation": CLOMO_RELATIONS[item["qtype"]],
            "argument": info["P"].strip(),
            "premise1": strip(info["O"]),
            "counterfactual": item["output"].strip(),
            "premise2": strip(info["Om"]),
        }
    ]


def expected_paths(g: nx.MultiDiGraph, head: str, tail: str, max_hops: int = 4) -> list[tuple]:
    """Every node-simple path head..tail over the event relations, walked in either direction."""
    out: list[tuple] = []

    def walk(node: str, seen: list[str], rels: list[str]) -> None:
        if g.nodes[node]["text"] == tail and rels:
            texts = [g.nodes[n]["text"] for n in seen]
            out.append((len(rels), texts, list(rels), induce(rels)))
            return
        if len(rels) == max_hops:
            return
        steps = [(b, STORED_TO_FORWARD[k]) for _, b, k in g.out_edges(node, keys=True)]
        steps += [(a, INVERSE[STORED_TO_FORWARD[k]]) for a, _, k in g.in_edges(node, keys=True)]
        for nxt, rel in steps:
            if nxt not in seen:
                walk(nxt, [*seen, nxt], [*rels, rel])

    for start in (n for n, d in g.nodes(data=True) if d.get("text") == head):
        walk(start, [start], [])
    return out


def check_paths_between(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    g = store.fetch_graph(EVENT_TYPES)
    got = [(r["hops"], r["events"], r["relations"], r["induced"]) for r in rows]
    assert sorted(got) == sorted(expected_paths(g, params["head"], params["tail"]))
    assert (3, ["cram", "stay up late", "feel tired", "fail exam"], ["HasSubevent", "Causes", "Causes"], "Causes") in got
    hops = [r["hops"] for r in rows]
    assert hops == sorted(hops)


def check_data_model(rows: list[dict], store: GraphStore, params: dict, samples: Path) -> None:
    assert len(rows) == 1
    assert sorted(rows[0]["labels"]) == sorted(NODE_TYPES)
    used = sum(1 for n in store.counts()["edges"].values() if n)
    assert rows[0]["relationship_types"] >= used


CHECKS: dict[str, Callable[[list[dict], GraphStore, dict, Path], None]] = {
    "causes-and-effects": check_causes_and_effects,
    "ev2-question-schema": check_ev2_question_schema,
    "abstractions": check_abstractions,
    "aser-neighbourhood": check_aser_neighbourhood,
    "clomo-argument": check_clomo_argument,
    "paths-between": check_paths_between,
    "data-model": check_data_model,
}


def test_every_saved_query_has_a_check() -> None:
    assert set(load_saved_queries()) == set(CHECKS)
    for q in load_saved_queries().values():
        assert q.description and "\n" not in q.description


@pytest.mark.parametrize("name", list(CHECKS))
def test_saved_query_on_samples(name: str, backend: str, sample_store: GraphStore, samples_dir: Path) -> None:
    query = load_saved_queries()[name]
    if backend not in query.runs_on:
        with pytest.raises(SavedQueryError, match="runs on Neo4j only: .+"):
            run_saved_query(sample_store, name)
        return
    result = run_saved_query(sample_store, name)  # the defaults: no parameters given
    rows = result.rows
    assert rows, f"{name} returned nothing on the samples"
    assert not result.cut and result.limit == query.params["limit"]  # the samples fit the defaults
    if backend == "neo4j":  # Browser draws the paths of the graph column
        assert all(row.pop(GRAPH_COLUMN) for row in rows)
    else:
        assert all(GRAPH_COLUMN not in row for row in rows)
    CHECKS[name](rows, sample_store, query.params, samples_dir)


@pytest.mark.parametrize(
    ("head", "tail"),
    [("cram", "fail exam"), ("fail exam", "cram"), ("study for exam", "get good grade"),
     ("get good grade", "study for exam"), ("take exam", "answer questions"), ("answer questions", "take exam"),
     ("cook dinner", "eat dinner"), ("feel full", "cook dinner")],
)
def test_paths_between_encodes_table_1(head: str, tail: str, backend: str, sample_store: GraphStore) -> None:
    """The Cypher CASE over regular expressions agrees with queries.induce on every path."""
    rows = run_saved_query(sample_store, "paths-between", {"head": head, "tail": tail}, graph=False).rows
    assert rows
    for row in rows:
        assert row["induced"] == induce(row["relations"]), row
    expected = expected_paths(sample_store.fetch_graph(EVENT_TYPES), head, tail)
    assert sorted((r["hops"], r["events"], r["relations"], r["induced"]) for r in rows) == sorted(expected)


def test_table_1_rules_all_reached_on_the_samples(backend: str, sample_store: GraphStore) -> None:
    """Across both directions of a few pairs, every event relation is induced at least once."""
    pairs = [("cram", "fail exam"), ("study for exam", "get good grade"), ("take exam", "answer questions"),
             ("cook dinner", "eat dinner"), ("cook dinner", "wash vegetables")]
    seen = set()
    for a, b in pairs:
        for head, tail in ((a, b), (b, a)):
            rows = run_saved_query(sample_store, "paths-between", {"head": head, "tail": tail}, graph=False).rows
            seen |= {r["induced"] for r in rows}
    assert {"Causes", "IsResult", "Before", "After", "HasSubevent", "IsSubevent", None} <= seen


# --- limits: a small graph written here, the expected rows worked out by hand ---------------

# CAUSES edges (src, dst, weight); a 2-hop path weighs its weaker edge, an edge without a weight 0.
LIMIT_CAUSES = [
    ("c1", "h", 4), ("c2", "h", 3), ("c3", "h", 2), ("c4", "h", 1),
    ("d1", "c1", 10), ("d2", "c1", 1), ("d3", "c2", 6), ("d4", "c4", 9),
    ("h", "c3", 7), ("h", "x1", 5), ("h", "x2", None), ("h", "x3", 2),
    ("x1", "y1", 3), ("x3", "y1", 8),
]
# ASER edges of "a" (src, type, dst, count)
LIMIT_ASER = [("a", "CO_OCCURRENCE", "b", 5), ("a", "REASON", "c", 3), ("d", "RESULT", "a", 7),
              ("a", "PRECEDENCE", "e", 3), ("f", "CONJUNCTION", "a", 1)]


def write_limit_graph(store: GraphStore) -> None:
    from eventkg.graphstore.base import Batch
    from eventkg.graphstore.model import event_id

    b = Batch()
    texts = {t for s, d, _ in LIMIT_CAUSES for t in (s, d)} | {t for s, _, d, _ in LIMIT_ASER for t in (s, d)}
    for t in sorted(texts):
        b.add_node("Event", {"id": event_id(t), "text": t, "level": "schema", "sources": ["t"]})
    for s, d, w in LIMIT_CAUSES:
        b.add_edge("CAUSES", {"src": event_id(s), "dst": event_id(d), "weight": w, "sources": ["t"]})
    for s, rtype, d, n in LIMIT_ASER:
        b.add_edge(rtype, {"src": event_id(s), "dst": event_id(d), "count": float(n), "sources": ["t"]})
    store.write_batch(b)


CAUSES_OF_H = {  # every row, in order, worked out from LIMIT_CAUSES
    ("cause", 1): [("c1", [], 4), ("c2", [], 3), ("c3", [], 2), ("c4", [], 1)],
    # c3's only cause is h itself (excluded); d4 -> c4 -> h weighs min(9, 1) = 1, tied with d2 (d2 first)
    ("cause", 2): [("d1", ["c1"], 4), ("d3", ["c2"], 3), ("d2", ["c1"], 1), ("d4", ["c4"], 1)],
    ("effect", 1): [("c3", [], 7), ("x1", [], 5), ("x3", [], 2), ("x2", [], 0)],
    ("effect", 2): [("y1", ["x1"], 3), ("y1", ["x3"], 2)],  # c3 -> h comes back to h
}


def _parts(rows: list[dict]) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = {}
    for r in rows:
        out.setdefault((r["role"], r["hops"]), []).append((r["event"], r["via"], r["weight"]))
    return out


def test_causes_and_effects_limit_cuts_and_says_so(backend: str, store: GraphStore) -> None:
    write_limit_graph(store)
    full = run_saved_query(store, "causes-and-effects", {"event": "h", "limit": 4}, graph=False)
    assert _parts(full.rows) == CAUSES_OF_H and full.cut == ()  # exactly 4 in a part is not a cut
    cut = run_saved_query(store, "causes-and-effects", {"event": "h", "limit": 2}, graph=False)
    # the second hop starts from the 3 strongest first hops (limit + 1): c4, and so d4, is not reached
    assert _parts(cut.rows) == {
        ("cause", 1): [("c1", [], 4), ("c2", [], 3)],
        ("cause", 2): [("d1", ["c1"], 4), ("d3", ["c2"], 3)],
        ("effect", 1): [("c3", [], 7), ("x1", [], 5)],
        ("effect", 2): [("y1", ["x1"], 3), ("y1", ["x3"], 2)],
    }
    assert cut.cut == (("cause", 1), ("cause", 2), ("effect", 1)) and cut.limit == 2
    # limit 1: second hops from c1 and c2 only (d1 4, d3 3, d2 1: cut to d1); effects from c3
    # (back to h only) and x1 (y1): one row, not a cut
    one = run_saved_query(store, "causes-and-effects", {"event": "h", "limit": 1}, graph=False)
    assert _parts(one.rows) == {("cause", 1): [("c1", [], 4)], ("cause", 2): [("d1", ["c1"], 4)],
                                ("effect", 1): [("c3", [], 7)], ("effect", 2): [("y1", ["x1"], 3)]}
    assert one.cut == (("cause", 1), ("cause", 2), ("effect", 1))
    assert cut.cut_message() == (
        "showing 2 rows per part where there were more (role=cause, hops=1; role=cause, hops=2; role=effect, hops=1); raise --limit"
    )


def test_aser_neighbourhood_limit(backend: str, store: GraphStore) -> None:
    write_limit_graph(store)
    expected = [("RESULT", "in", "d", 7), ("CO_OCCURRENCE", "out", "b", 5), ("PRECEDENCE", "out", "e", 3),
                ("REASON", "out", "c", 3), ("CONJUNCTION", "in", "f", 1)]
    key = lambda r: (r["relation"], r["direction"], r["neighbour"], r["count"])  # noqa: E731
    full = run_saved_query(store, "aser-neighbourhood", {"event": "a", "limit": 5})
    assert [key(r) for r in full.rows] == expected and not full.cut
    three = run_saved_query(store, "aser-neighbourhood", {"event": "a", "limit": 3})
    assert [key(r) for r in three.rows] == expected[:3] and three.cut == ((),)
    assert three.cut_message() == "showing 3 of more rows; raise --limit"


def test_paths_between_beam_and_limit(backend: str, store: GraphStore) -> None:
    """c3 to x1: through h over either c3 edge (h -> c3 walked back, or c3 -> h), then on to x1
    directly (2 steps) or by x3 and y1 (4 steps); sorted by steps, events, relations."""
    write_limit_graph(store)
    expected = [
        (2, ["c3", "h", "x1"], ["Causes", "Causes"]),
        (2, ["c3", "h", "x1"], ["IsResult", "Causes"]),
        (4, ["c3", "h", "x3", "y1", "x1"], ["Causes", "Causes", "Causes", "IsResult"]),
        (4, ["c3", "h", "x3", "y1", "x1"], ["IsResult", "Causes", "Causes", "IsResult"]),
    ]
    params = {"head": "c3", "tail": "x1"}
    got = lambda res: [(r["hops"], r["events"], r["relations"]) for r in res.rows]  # noqa: E731
    wide = run_saved_query(store, "paths-between", {**params, "limit": 50}, graph=False)
    assert got(wide) == expected and not wide.cut
    # limit 4: each walk keeps 5 edges (limit + 1). From c3 the 2 edges to h, then h's 5 strongest
    # next edges away from c3, both ways in: x1 5, x1 5, c1 4, c1 4, c2 3; x3 (2) is not among
    # them, so the 4-step paths through x3 are not found, and 2 rows are not a cut.
    beam = run_saved_query(store, "paths-between", {**params, "limit": 4}, graph=False)
    assert got(beam) == expected[:2] and not beam.cut
    one = run_saved_query(store, "paths-between", {**params, "limit": 1}, graph=False)
    assert got(one) == expected[:1] and one.cut == ((),)


def test_cli_saved_limit_says_when_it_cut(tmp_path: Path) -> None:
    url = str(tmp_path / "limit.lbug")
    with open_store(url) as s:
        write_limit_graph(s)
    result = runner.invoke(app, ["--store", url, "saved", "aser-neighbourhood", "-p", "event=a", "--limit", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert [r["neighbour"] for r in json.loads(result.stdout)] == ["d", "b"]
    assert "showing 2 of more rows; raise --limit" in result.stderr
    assert "deprecated" not in result.stderr
    same = runner.invoke(app, ["--store", url, "cypher", "--saved", "aser-neighbourhood", "-p", "event=a", "-p", "limit=2", "--json"])
    assert same.exit_code == 0 and json.loads(same.stdout) == json.loads(result.stdout)
    assert "showing 2 of more rows; raise --limit" in same.stderr and DEPRECATED in same.stderr
    whole = runner.invoke(app, ["--store", url, "saved", "aser-neighbourhood", "-p", "event=a", "--json"])
    assert len(json.loads(whole.stdout)) == 5 and "showing" not in whole.stderr


@pytest.mark.parametrize("bad", [0, -1, "x", 1.5, True])
def test_limit_must_be_a_whole_number(bad: object, tmp_path: Path) -> None:
    with open_store(str(tmp_path / "s.lbug")) as s, pytest.raises(SavedQueryError, match="limit must be a whole number"):
        run_saved_query(s, "aser-neighbourhood", {"limit": bad})


def test_every_shipped_query_takes_a_limit() -> None:
    for q in load_saved_queries().values():
        assert isinstance(q.params.get("limit"), int) and 10 <= q.params["limit"] <= 100, q.name
        assert set(q.limit_per) <= {"role", "hops", "relation"}, q.name


# --- the file format -----------------------------------------------------------------------

GOOD = """// preamble comment
// name: one
// description: first query
// params: event=study for exam, n=3, tags=["a", "b"]
// a comment that belongs to the body
MATCH (e:Event {text: $event}) RETURN type(r) AS t LIMIT $n
// ladybug:
MATCH (e:Event {text: $event}) RETURN label(r) AS t LIMIT $n

// name: two
// description: neo4j only
// neo4j-only: uses a procedure
CALL db.labels()
"""


def test_parse_headers_params_and_variants() -> None:
    qs = parse_queries(GOOD, "x.cypher")
    assert list(qs) == ["one", "two"]
    one = qs["one"]
    assert one.params == {"event": "study for exam", "n": 3, "tags": ["a", "b"]}
    assert one.neo4j.startswith("// a comment") and "type(r)" in one.neo4j
    assert one.for_backend("ladybug").cypher.startswith("MATCH") and "label(r)" in one.for_backend("ladybug").cypher
    assert one.for_backend("neo4j://h:7687").cypher == one.neo4j
    assert qs["two"].runs_on == ("neo4j",)
    with pytest.raises(SavedQueryError, match="runs on Neo4j only: uses a procedure"):
        qs["two"].for_backend("/tmp/x.lbug").cypher  # noqa: B018
    assert one.with_params({"n": 5}) == {"event": "study for exam", "n": 5, "tags": ["a", "b"]}
    with pytest.raises(SavedQueryError, match="has no parameter evnt"):
        one.with_params({"evnt": "x"})
    assert one.browser_text().splitlines()[0] == ':params {event: "study for exam", n: 3, tags: ["a", "b"]}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("// name: a\nMATCH (n) RETURN n\n", r"x\.cypher:1: .*no '// description:'"),
        ("// name: a\n// description: d\n", r"x\.cypher:1: .*has no Cypher"),
        ("// name: a\n// description: d\nRETURN 1\n// name: a\n// description: d\nRETURN 1\n", r"x\.cypher:4: .*twice"),
        ("// name: Bad Name\n", r"x\.cypher:1: bad query name"),
        ("// name: a\n// description: d\n// params: =x\nRETURN 1\n", r"x\.cypher:3: bad '// params:'"),
        ("// name: a\n// description: d\nRETURN 1\n// ladybug:\n", r"x\.cypher:1: .*empty '// ladybug:'"),
        ("// name: a\n// description: d\n// neo4j-only: r\nRETURN 1\n// ladybug:\nRETURN 2\n", r"neo4j-only but has"),
    ],
)
def test_malformed_files_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(SavedQueryError, match=message):
        parse_queries(text, "x.cypher")


def test_unknown_query_lists_the_known_ones() -> None:
    with pytest.raises(SavedQueryError, match="no saved query 'nope'; known: causes-and-effects, "):
        get_saved_query("nope")


def test_backend_of(tmp_path: Path) -> None:
    assert backend_of("neo4j://localhost:7687") == backend_of("bolt://x") == backend_of(None) == "neo4j"
    assert backend_of(str(tmp_path / "kg.lbug")) == backend_of("ladybug") == "ladybug"
    with open_store(str(tmp_path / "kg.lbug")) as s:
        assert backend_of(s) == "ladybug"


# --- the CLI -------------------------------------------------------------------------------


@pytest.fixture
def abs_store(tmp_path: Path, samples_dir: Path) -> str:
    url = str(tmp_path / "abs.lbug")
    with open_store(url) as s:
        ingest_source(s, "abspyramid", samples_dir / "abspyramid")
    return url


#: the one line ``eventkg cypher --saved`` (the deprecated spelling of ``eventkg saved``) prints on stderr
DEPRECATED = "deprecated: eventkg cypher --saved NAME is now eventkg saved NAME; the old spelling goes in the next release"


def test_cli_saved_with_params(abs_store: str) -> None:
    result = runner.invoke(app, ["--store", abs_store, "saved", "abstractions", "--param", "event=PersonX take exam", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {(r["relation"], r["concept"], r["valid"]) for r in rows} == {
        ("NOUN_ENTAIL", "test", True), ("NOUN_ENTAIL", "evaluation", True), ("VERB_ENTAIL", "sit", True),
        ("VERB_ENTAIL", "steal", False), ("EVENT_ENTAIL", "assessment", True),
    }
    assert "deprecated" not in result.stderr


def test_cli_cypher_saved_is_a_deprecated_alias_of_saved(abs_store: str) -> None:
    """``cypher --saved NAME`` runs ``saved NAME`` for one more release: same rows, one notice, hidden from help."""
    args = ["abstractions", "--param", "event=PersonX take exam", "--json"]
    taught = runner.invoke(app, ["--store", abs_store, "saved", *args])
    alias = runner.invoke(app, ["--store", abs_store, "cypher", "--saved", *args])
    assert alias.exit_code == 0, alias.output
    assert json.loads(alias.stdout) == json.loads(taught.stdout) and json.loads(taught.stdout)
    assert alias.stderr.strip().splitlines() == [DEPRECATED]
    shown = runner.invoke(app, ["cypher", "--help"])
    assert "--saved NAME` here is its deprecated spelling" in " ".join(shown.stdout.split())
    assert not any(line.lstrip("│ ").startswith("--saved") for line in shown.stdout.splitlines())


def test_cli_saved_runs_with_defaults_and_lists(abs_store: str) -> None:
    result = runner.invoke(app, ["--store", abs_store, "saved", "abstractions", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)) == 8  # the default event's 8 labelled abstractions
    listing = runner.invoke(app, ["saved"])
    assert listing.exit_code == 0 and "paths-between" in listing.output and "neo4j only" in listing.output
    shown = runner.invoke(app, ["saved", "causes-and-effects", "--show", "-p", "event=pass exam"])
    assert shown.exit_code == 0 and shown.output.startswith(':params {event: "pass exam", limit: 50}')
    shown = runner.invoke(app, ["saved", "causes-and-effects", "--show", "--limit", "20"])
    assert shown.output.startswith(':params {event: "learn", limit: 20}')


def test_cli_saved_errors_are_one_line(abs_store: str) -> None:
    result = runner.invoke(app, ["--store", abs_store, "saved", "data-model"])
    assert result.exit_code != 0 and "runs on Neo4j only" in str(result.exception)
    result = runner.invoke(app, ["--store", abs_store, "saved", "abstractions", "-p", "evnt=x"])
    assert "has no parameter evnt" in str(result.exception)


def test_browser_style_covers_the_data_model() -> None:
    from eventkg.cli.browser import STYLE_FILE, parse_grass
    from eventkg.graphstore.model import REL_TYPES

    rules = parse_grass(STYLE_FILE.read_text())
    for label, node_type in NODE_TYPES.items():
        assert rules[f"node.{label}"]["caption"] == "{" + node_type.caption + "}"
        assert rules[f"node.{label}"]["color"].startswith("#")
    for rtype in REL_TYPES:
        assert rules[f"relationship.{rtype}"]["caption"] == "<type>"
    colours = {rules[f"node.{label}"]["color"] for label in NODE_TYPES}
    assert len(colours) == len(NODE_TYPES)


def test_docstring_examples() -> None:
    import doctest

    from eventkg.graphstore import saved_cypher as saved_queries

    assert doctest.testmod(saved_queries).failed == 0
