"""Question generation at ASER scale: the columnar CSR load, the meet-in-the-middle vetting, and
provability on an ASER-shaped graph (skewed degrees, hubs), checked by networkx path enumeration."""

from __future__ import annotations

import random

import numpy as np
import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.model import FAMILIES, INVERSE, VAGUE, family_of
from eventkg.queries.graph.csr import EVENT_REL_TYPES, EventCSR
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.induction.table1 import ALL_RELATIONS
from eventkg.queries.induction.vetting import MeetInTheMiddle
from eventkg.queries.questions.make import make_questions
from eventkg.queries.questions.spec import QuestionSpec
from tests.support.paths import CHECKOUT
from tests.support.question_graphs import Facts, question_rows, synthetic_batch


@pytest.fixture(scope="module")
def aser_store(tmp_path_factory):
    """A small ASER-shaped KG.db (hubs included) ingested with --map-events."""
    from tests.support.aser_shape import make_aser_shape_kg

    folder = tmp_path_factory.mktemp("aser_q")
    db = make_aser_shape_kg(folder / "KG.db", 3000, 9000, seed=3)
    store = open_store(str(folder / "s.lbug"))
    ingest_source(store, "aser", db, map_events=True)
    yield store
    store.close()


@pytest.fixture(scope="module")
def aser_facts(aser_store) -> Facts:
    return Facts(aser_store.fetch_graph(list(EVENT_REL_TYPES)))


def _ids(q) -> tuple[str, str]:
    return q.names[q.row["e0"]], q.names[q.row["e1"]]


def test_aser_shaped_questions_are_provable_by_path_enumeration(aser_store, aser_facts) -> None:
    csr = EventCSR.from_store(aser_store)
    assert int(np.diff(csr.indptr).max()) >= 30  # the graph has hubs
    for task in ("CEC", "CRR"):
        made = make_questions(csr, QuestionSpec(task, "schema", 150, seed=11, negatives="random"))
        assert len(made) == 150
        vague = 0
        for q in made:
            row, (e0, e1) = q.row, _ids(q)
            for h, r, t in row["context_tpl"]:
                assert aser_facts.holds(q.names[h], r, q.names[t]), row
            induced = aser_facts.induced(e0, e1, 4)
            if task == "CEC":
                assert row["rel"] in induced, row
                fam = set(FAMILIES[family_of(row["rel"])])
                for z in row["negative_chosen"]:
                    assert not aser_facts.induced(e0, q.names[z], 4) & fam, (row, z)
            elif row["rel"] == VAGUE:
                vague += 1
                assert induced == set(), row
            else:
                assert induced & set(FAMILIES[family_of(row["rel"])]) == {row["rel"]}, row
        if task == "CRR":
            assert 20 < vague < 80


@pytest.mark.parametrize("scalar", [0, 10**9], ids=["vector-walk", "entry-loop"])
@pytest.mark.parametrize("probe", [(0, 0), (8, 1), (10**9, 1)], ids=["probe-every-row", "probe-long-rows", "read-every-row"])
@pytest.mark.parametrize("hub_cost", [0, 40, 10**9], ids=["one-step-ahead", "hubs-one-step", "two-steps-ahead"])
def test_meet_in_the_middle_equals_the_four_step_search(hub_cost, probe, scalar) -> None:
    """Every (event, candidate, relation set) answer equals EventIndex.reach's, bounds 1 to 5, however
    the walk is split between the loaded event and the candidates (hub_cost 0: always one step ahead),
    whichever rows the last backward step looks the forward events up in instead of reading, and whether
    a small walk runs as numpy gathers or as a loop over entries (one candidate at a time, and
    ``induced``'s several relations from one walk)."""
    rng = random.Random(4)
    names = [f"e{i}" for i in range(250)]
    hub = names[0]
    edges = [(rng.choice(names), rng.choice(EVENT_REL_TYPES), rng.choice(names)) for _ in range(500)]
    edges += [(hub, rng.choice(EVENT_REL_TYPES), rng.choice(names)) for _ in range(60)]
    idx = EventIndex.build(edges, (), [(n, n, "schema") for n in names])
    everyone = np.arange(len(idx))
    for max_len in (1, 2, 3, 4, 5):
        vet = MeetInTheMiddle(idx.csr, max_len, hub_cost, probe_min=probe[0], probe_factor=probe[1],
                              scalar_entries=scalar)
        for e0 in range(0, len(idx), 9):
            for mask in (ALL_RELATIONS, 0b11, 0b1100, 0b110000, 0b1, 0b1000):
                reach = idx.reach(e0, max_len, mask)
                vet.load(e0, mask)
                expected = [bool(reach.get(p, 0) & mask) for p in range(len(idx))]
                assert vet.linked(everyone, mask).tolist() == expected, (max_len, e0, mask)
                for p in range(e0 % 7, len(idx), 7):  # one candidate at a time
                    assert vet.linked(np.array([p]), mask).tolist() == [expected[p]], (max_len, e0, mask, p)
                    codes = tuple(c for c in range(6) if mask >> c & 1)
                    assert vet.induced(p, codes) == reach.get(p, 0) & mask, (max_len, e0, mask, p)


def test_columnar_load_equals_the_row_reading(store) -> None:
    """EventCSR.from_store (columns) holds what iter_nodes/iter_edges stream, on every backend."""
    store.write_batch(synthetic_batch(n_types=200, n_edges=500, seed=6))
    edges = [(e["src"], t, e["dst"]) for t in EVENT_REL_TYPES for e in store.iter_edges(t)]
    types = [(e["src"], e["dst"]) for e in store.iter_edges("HAS_TYPE")]
    props = [(n["id"], n.get("text"), n.get("level")) for n in store.iter_nodes("Event")]
    a, b = EventCSR.from_store(store), EventCSR.from_rows(edges, types, props)
    assert a.ids == b.ids
    for name in ("indptr", "nbr", "code", "level", "type_of", "inst_indptr", "inst"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.texts.all() == b.texts.all()
    # and both readings of each stored edge are there
    p = {nid: i for i, nid in enumerate(a.ids)}
    for s, t, d in edges[:50]:
        if s != d:
            fwd = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"}[t]
            assert EventIndex(a).has_triple(p[s], fwd, p[d]) and EventIndex(a).has_triple(p[d], INVERSE[fwd], p[s])


def test_same_seed_same_questions_on_the_aser_shape(aser_store) -> None:
    csr = EventCSR.from_store(aser_store)
    for task in ("CEC", "CRR"):
        first = question_rows(csr, task, "schema", 60, seed=5)
        assert first == question_rows(EventCSR.from_store(aser_store), task, "schema", 60, seed=5)
        assert first != question_rows(csr, task, "schema", 60, seed=6)


def test_no_question_module_imports_in_a_cycle() -> None:
    """Top-level imports among eventkg.queries modules form no cycle."""
    import ast

    folder = CHECKOUT / "queries"
    graph: dict[str, set[str]] = {}
    for f in folder.glob("*.py"):
        deps = set()
        for node in ast.parse(f.read_text()).body:  # module level only: imports inside functions are lazy
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("eventkg.queries"):
                mod = node.module.removeprefix("eventkg.queries").lstrip(".")
                deps.update([mod] if mod else [a.name for a in node.names])
        graph[f.stem] = deps
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        if state.get(m) == 1:
            raise AssertionError(f"import cycle: {' -> '.join([*trail, m])}")
        if state.get(m) == 2:
            return
        state[m] = 1
        for d in graph.get(m, ()):
            visit(d, [*trail, m])
        state[m] = 2

    for m in graph:
        visit(m, [])
