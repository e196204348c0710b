"""Generated CEC/CRR questions: the construction rules, oracle and chance baselines, CLI, storage.

The sample graph is the project's own samples (``ingest/samples`` through the loaders, when
they are there) plus a synthetic EECKG-like graph written with ``store.write_batch``: verb
phrase event types with random typed edges, and instance events linked by ``HAS_TYPE``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.model import FAMILIES, INVERSE, VAGUE, event_id, family_of
from eventkg.queries.graph.csr import EVENT_REL_TYPES
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.negatives.unlinked import UnlinkedNegatives
from eventkg.queries.oracle import KGOracle, kg_oracle_answer
from eventkg.queries.questions.make import make_questions
from eventkg.queries.questions.rows import CRR_CHOICES
from eventkg.queries.questions.spec import QuestionSpec
from eventkg.queries.questions.store import store_questions
from tests.conftest import PROJECT_SAMPLES
from tests.support.question_graphs import Facts, question_rows, synthetic_batch


def load_project_samples(store) -> list[str]:
    """Ingest what the project ships in ingest/samples with the loaders (as they land)."""
    loaded = []
    for source in ("eeckg", "ev2"):
        folder = PROJECT_SAMPLES / source
        if not folder.is_dir():
            continue
        ingest_source(store, source, folder)
        loaded.append(source)
    return loaded


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory) -> Iterator:
    store = open_store(str(tmp_path_factory.mktemp("questions") / "store.lbug"))
    load_project_samples(store)
    store.write_batch(synthetic_batch())
    yield store
    store.close()


@pytest.fixture(scope="module")
def sample_index(sample_store) -> EventIndex:
    return EventIndex.from_store(sample_store)


@pytest.fixture(scope="module")
def sample_graph(sample_store) -> nx.MultiDiGraph:
    """The store's own view of its graph, for independent checks."""
    return sample_store.fetch_graph([*EVENT_REL_TYPES, "HAS_TYPE"])


@pytest.fixture(scope="module")
def generated(sample_index) -> dict[tuple[str, str], list[dict]]:
    return {(task, level): question_rows(sample_index, task, level, 1000, seed=42)
            for task in ("CEC", "CRR") for level in ("schema", "instance")}


# --- independent helpers over the store's networkx graph ------------------------------------------


@pytest.fixture(scope="module")
def facts(sample_graph) -> Facts:
    return Facts(sample_graph)


def schema_id(row: dict, name: str) -> str:
    """Store id of the schema event a row's name stands for (instance rows: its event type)."""
    if "event_type" in row:
        name = row["event_type"][name]
    return event_id(name, "schema")


# --- the construction rules -------------------------------------------------------------------


@pytest.mark.parametrize("level", ["schema", "instance"])
def test_cec_rules_hold_on_1000_questions(generated, facts, sample_graph, level) -> None:
    rows = generated[("CEC", level)]
    assert len(rows) == 1000
    assert len({(r["id"], r["e0"] if level == "schema" else r["event_type"][r["e0"]]) for r in rows}) == 1000
    for row in rows:
        choices = row["choices"]
        assert len(choices) == 4 and len(set(choices)) == 4
        assert choices.count(row["e1"]) == 1
        assert sorted(row["negative_chosen"]) == sorted(c for c in choices if c != row["e1"])
        _check_context_and_path(row, facts, sample_graph, level)


@pytest.mark.parametrize("level", ["schema", "instance"])
def test_crr_rules_hold_on_1000_questions(generated, facts, sample_graph, level) -> None:
    rows = generated[("CRR", level)]
    assert len(rows) == 1000
    vague = 0
    for row in rows:
        # the family and Vague, the answer's place drawn for position balance
        assert sorted(row["choices"]) in [sorted(c) for c in CRR_CHOICES.values()]
        assert row["rel"] in row["choices"]
        if row["rel"] == VAGUE:
            vague += 1
            fam = next(f for f, c in CRR_CHOICES.items() if sorted(c) == sorted(row["choices"]))
            e0, e1 = schema_id(row, row["e0"]), schema_id(row, row["e1"])
            # EV²'s Vague: e1 is unrelated to e0 (no relation of any family within 4 edges, the
            # CEC-negative kind), and the family asked is that of an edge e0 really has
            assert facts.induced(e0, e1) == set()
            assert any(facts.holds(e0, r, x) for r in FAMILIES[fam] for x in facts.und[e0]), row
        else:
            assert sorted(row["choices"]) == sorted(CRR_CHOICES[family_of(row["rel"])])
        _check_context_and_path(row, facts, sample_graph, level)
    assert 200 < vague < 450  # about a third, as in EV²


def _check_context_and_path(row, facts: Facts, g: nx.MultiDiGraph, level: str) -> None:
    e0, e1, rel = row["e0"], row["e1"], row["rel"]
    ctx = [tuple(t) for t in row["context_tpl"]]
    assert ctx, "every question has background"
    # the answer is never stated in the context, nor is its inverse (nor e1 at all)
    if rel != VAGUE:
        assert (e0, rel, e1) not in ctx and (e1, INVERSE[rel], e0) not in ctx
    assert all(e1 not in (h, t) for h, _, t in ctx)
    # every context triple is in the store (read through the inverse table)
    for h, r, t in ctx:
        assert facts.holds(schema_id(row, h), r, schema_id(row, t)), (row["id"], h, r, t)
    # the answer relation holds by a path of at most 4 edges
    if rel != VAGUE:
        induced = facts.induced(schema_id(row, e0), schema_id(row, e1), 4)
        assert rel in induced, row
        if "choices" in row and row["choices"][-1] == VAGUE:
            assert induced & set(FAMILIES[family_of(rel)]) == {rel}  # CRR: one right answer
    if level == "instance":
        types = row["event_type"]
        assert set(types) == set(row["instances"])
        for iid, text in row["instances"].items():
            inst = event_id(text, "instance")
            assert g.nodes[inst]["level"] == "instance"
            assert g.has_edge(inst, event_id(types[iid], "schema"), key="HAS_TYPE")
        # event_relation as the release writes it: the context's type triples plus the answer
        # triple (type(e0), rel, type(e1)); for Vague, plus the one edge of e0 whose family is asked
        er = [tuple(x) for x in row["event_relation"]]
        mapped = {(types[h], r, types[t]) for h, r, t in ctx}
        assert len(er) == len(set(er))
        extra = [x for x in er if x not in mapped]
        assert set(er) >= mapped and len(extra) == 1, row
        if rel != VAGUE:
            assert extra[0] == (types[e0], rel, types[e1])
        else:
            assert extra[0][0] == types[e0] and extra[0][1] in row["choices"]
            assert facts.holds(event_id(extra[0][0]), extra[0][1], event_id(extra[0][2]))
        for h, r, t in mapped:
            assert facts.holds(event_id(h), r, event_id(t))


def test_no_negative_is_a_true_answer(generated, facts) -> None:
    checked = 0
    for level in ("schema", "instance"):
        for row in generated[("CEC", level)]:
            q = schema_id(row, row["e0"])
            for z in row["negative_chosen"]:
                assert row["rel"] not in facts.induced(q, schema_id(row, z), 4), (row, z)
                checked += 1
    assert checked == 6000


def test_schema_questions_use_schema_events_only(generated, sample_store) -> None:
    ids = {event_id(name, "schema") for row in generated[("CEC", "schema")] for name in [row["e0"], *row["choices"]]}
    nodes = sample_store.get_nodes("Event", sorted(ids))
    assert len(nodes) == len(ids) and {n["level"] for n in nodes.values()} == {"schema"}


# --- oracle and chance --------------------------------------------------------------------------


def test_kg_oracle_answers_every_generated_question(generated, sample_store) -> None:
    oracle = KGOracle(sample_store)
    for (task, _level), rows in generated.items():
        for row in rows:
            gold = row["e1"] if task == "CEC" else row["rel"]
            assert oracle.answer(row) == gold, row


def test_kg_oracle_on_a_store_and_a_graph_agree(generated, sample_store, sample_graph) -> None:
    rows = generated[("CRR", "schema")][:20]
    assert [kg_oracle_answer(sample_graph, r) for r in rows] == [r["rel"] for r in rows]


@pytest.mark.parametrize(("task", "chance"), [("CEC", 0.25), ("CRR", 1 / 3)])
def test_random_answering_is_at_chance(generated, task, chance) -> None:
    rng = random.Random(2024)
    for level in ("schema", "instance"):
        rows = generated[(task, level)]
        hits = sum(rng.choice(r["choices"]) == (r["e1"] if task == "CEC" else r["rel"]) for r in rows)
        assert binomtest(hits, len(rows), chance).pvalue > 1e-3, (task, level, hits)
        # and the answer's position is not a giveaway
        if task == "CEC":
            positions = [r["choices"].index(r["e1"]) for r in rows]
            assert all(binomtest(positions.count(i), len(rows), 0.25).pvalue > 1e-3 for i in range(4))


# --- determinism, backends, samplers --------------------------------------------------------


def test_deterministic_for_a_seed(sample_index) -> None:
    a = question_rows(sample_index, "CEC", "schema", 50, seed=3)
    assert a == question_rows(sample_index, "CEC", "schema", 50, seed=3)
    assert a != question_rows(sample_index, "CEC", "schema", 50, seed=4)


def test_same_questions_from_every_backend(store) -> None:
    batch = synthetic_batch(n_types=300, n_edges=700, seed=5)
    store.write_batch(batch)
    g = nx.MultiDiGraph()
    for label, rows in batch.nodes.items():
        for r in rows:
            g.add_node(r["id"], label=label, **{k: v for k, v in r.items() if k not in ("id", "sources")})
    for rtype, rows in batch.edges.items():
        for r in rows:
            g.add_edge(r["src"], r["dst"], key=rtype, type=rtype)
    for task, level in (("CEC", "schema"), ("CRR", "instance")):
        from_store = question_rows(store, task, level, 40, seed=9)
        assert len(from_store) == 40
        assert from_store == question_rows(g, task, level, 40, seed=9)


class ListSampler:
    """A stand-in for the FAISS sampler that proposes bad candidates first."""

    def __init__(self, index: EventIndex) -> None:
        self.index = index
        self.calls = 0

    def sample(self, query_event_id, relation, answer_id, k=3, exclude=frozenset(), rng=None):
        self.calls += 1
        q = self.index.pos[query_event_id]
        linked = [self.index.ids[z] for z in self.index.reach(q) if self.index.ids[z] != query_event_id]
        return [answer_id, query_event_id, *linked[:2], *list(exclude)[:1]]  # all unacceptable


def test_external_sampler_output_is_checked(sample_index) -> None:
    sampler = ListSampler(sample_index)
    rows = question_rows(sample_index, "CEC", "schema", 30, seed=1, sampler=sampler)
    assert sampler.calls >= 30 and len(rows) == 30
    oracle = KGOracle(sample_index)
    assert all(oracle.answer(r) == r["e1"] for r in rows)


def test_graph_sampler_respects_family_and_exclude(sample_index) -> None:
    sampler = UnlinkedNegatives(sample_index)
    q = next(p for p in range(len(sample_index)) if len(sample_index.adj[p]) >= 4 and sample_index.level[p] == "schema")
    qid = sample_index.ids[q]
    linked = {sample_index.ids[z] for z, m in sample_index.reach(q).items() if m}
    exclude = {sample_index.ids[p] for p in range(5)}
    for seed in range(20):
        got = sampler.sample(qid, "Causes", "x", k=3, exclude=exclude, rng=seed)
        assert len(got) == len(set(got)) == 3
        assert not set(got) & exclude and qid not in got
        reach = sample_index.reach(q)
        assert all(not (reach.get(sample_index.pos[z], 0) & 0b11) for z in got)  # Causes/IsResult bits
        assert all(sample_index.level[sample_index.pos[z]] == "schema" for z in got)
    assert linked  # the query has family links to avoid


# --- storing questions and the CLI ------------------------------------------------------------------


def test_store_questions_as_question_nodes(embedded_store) -> None:
    embedded_store.write_batch(synthetic_batch(n_types=300, n_edges=700, seed=5))
    made = make_questions(embedded_store, QuestionSpec("CEC", "instance", 10, seed=2, negatives="random"))
    store_questions(embedded_store, made, seed=2)
    store_questions(embedded_store, made, seed=2)  # idempotent
    rows = embedded_store.query(
        "MATCH (q:Question) WHERE q.origin = 'generated' RETURN q.qid AS qid, q.task AS task, q.answer AS answer, "
        "q.payload AS payload ORDER BY qid"
    )
    assert len(rows) == 10 and {r["task"] for r in rows} == {"CEC"}
    for r in rows:
        assert json.loads(r["payload"])["e1"] == r["answer"]
    n_choice = embedded_store.query("MATCH (q:Question)-[c:HAS_CHOICE]->(e:Event) RETURN count(c) AS n")[0]["n"]
    n_right = embedded_store.query("MATCH (q:Question)-[c:HAS_CHOICE]->(e:Event) WHERE c.correct = 1 RETURN count(c) AS n")
    assert n_choice == 40 and n_right[0]["n"] == 10
    asks = embedded_store.query("MATCH (q:Question)-[a:ASKS]->(e:Event) RETURN e.level AS level, count(a) AS n")
    assert asks == [{"level": "instance", "n": 20}]
    assert embedded_store.query("MATCH (q:Question)-[c:HAS_CONTEXT]->(e:Event) RETURN count(c) AS n")[0]["n"] >= 20


def test_saving_draws_with_the_store_read_only_and_saves_what_a_separate_save_would(tmp_path: Path) -> None:
    """make_questions(save=True) on a writable embedded store: while it draws, the file is open read-only (a
    write is refused, a second read-only opening reads it); the saved graph equals store_questions' after a
    plain draw, and the store writes again after."""
    from eventkg.graphstore import WriteRefused

    seen = []

    def during(_stage: str, _done: int, _total: int | None) -> None:
        if not seen:
            with pytest.raises(WriteRefused, match="read-only"):
                store.upsert_nodes("Event", [{"id": event_id("x"), "text": "x", "level": "schema"}])
            with open_store(store.url, read_only=True) as other:
                seen.append((store.read_only, other.counts()["nodes"]["Event"]))

    graphs = []
    for name, save in (("apart.lbug", False), ("saved.lbug", True)):
        with open_store(str(tmp_path / name)) as store:
            store.write_batch(synthetic_batch(n_types=300, n_edges=700, seed=5))
            events = store.counts()["nodes"]["Event"]
            made = make_questions(store, QuestionSpec("CEC", "instance", 10, seed=2, negatives="random", save=save), progress=during if save else None)
            if not save:
                store_questions(store, made, seed=2)
            graphs.append(_saved_questions(store))
            assert not store.read_only
            store.upsert_nodes("Event", [{"id": event_id("after"), "text": "after", "level": "schema"}])
    assert seen == [(True, events)]
    assert len(graphs[0]["Question"]) == 10 and graphs[0] == graphs[1]


def _saved_questions(store) -> dict[str, list]:
    """Every Question node and its ASKS, HAS_CHOICE and HAS_CONTEXT edges, sorted."""
    node = store.query("MATCH (q:Question) RETURN q.id AS id, q.payload AS p, q.answer AS a ORDER BY id")
    edges = {
        rel: sorted(map(str, store.query(f"MATCH (q:Question)-[r:{rel}]->(e:Event) RETURN q.id AS q, e.id AS e, "
                                         f"{prop} AS x")))
        for rel, prop in (("ASKS", "r.role"), ("HAS_CHOICE", "r.`order` * 10 + r.correct"), ("HAS_CONTEXT", "r.`order`"))
    }
    return {"Question": [str(r) for r in node], **edges}


def test_store_questions_in_chunks_gives_one_graph(tmp_path: Path, monkeypatch) -> None:
    """Questions saved a few per batch (one bulk session) give the graph of one batch, and again nothing new."""
    from eventkg.queries.questions import store as question_store

    graphs = []
    for chunk in (question_store.SAVE_CHUNK, 3):
        monkeypatch.setattr(question_store, "SAVE_CHUNK", chunk)
        with open_store(str(tmp_path / f"chunk{chunk}.lbug")) as store:
            store.write_batch(synthetic_batch(n_types=300, n_edges=700, seed=5))
            made = make_questions(store, QuestionSpec("CEC", "instance", 10, seed=2, negatives="random"))
            first = store_questions(store, made, seed=2)
            again = store_questions(store, made, seed=2)
            graphs.append(_saved_questions(store))
        assert first.created["Question"] == 10 and first.created["HAS_CHOICE"] == 40
        assert not again.created.get("Question") and not again.created.get("HAS_CHOICE")
    assert len(graphs[0]["Question"]) == 10 and len(graphs[0]["HAS_CHOICE"]) == 40
    assert graphs[0] == graphs[1]


def test_cli_questions(tmp_path: Path) -> None:
    from eventkg.cli.app import app

    url = str(tmp_path / "s.lbug")
    with open_store(url) as s:
        s.write_batch(synthetic_batch(n_types=300, n_edges=700, seed=5))
    out = tmp_path / "S_CEC.jsonl"
    runner = CliRunner()
    res = runner.invoke(app, ["--store", url, "questions", "cec", "--level", "schema", "-n", "25", "--seed", "1",
                              "--out", str(out), "--negatives", "random", "--store-questions"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 25 and all(len(r["choices"]) == 4 for r in rows)
    with open_store(url, read_only=True) as s:
        assert question_rows(s, "CEC", "schema", 25, seed=1) == rows
        assert s.query("MATCH (q:Question) RETURN count(q) AS n")[0]["n"] == 25
    res = runner.invoke(app, ["--store", url, "questions", "xyz"])
    assert res.exit_code != 0 and "expected cec or crr" in str(res.exception)


def test_generated_files_load_with_the_ev2_loader(tmp_path: Path, sample_index) -> None:
    pytest.importorskip("eventkg.ingest.ev2")
    folder = tmp_path / "ev2"
    folder.mkdir()
    for task, level, prefix in (("CEC", "schema", "S"), ("CRR", "instance", "I")):
        rows = question_rows(sample_index, task, level, 30, seed=8)
        (folder / f"{prefix}_{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with open_store(str(tmp_path / "re.lbug")) as s:
        report = ingest_source(s, "ev2", folder, partial=True)  # two of the five files: a partial EV² folder
        assert report.rejected == 0
        assert s.query("MATCH (q:Question) RETURN count(q) AS n")[0]["n"] == 60
