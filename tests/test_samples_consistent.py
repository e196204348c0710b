"""The bundled samples are one coherent world: every imported EV² question has exactly one
right answer in the union graph of all samples as ``eventkg demo`` ingests them.

The check is independent of the oracle's index (``queries.event_graph.EventIndex.reach``):
the store's event relations are fetched as networkx, every walk of at most ``MAX_LEN`` edges
from the question's ``e0`` is enumerated (edges read both ways, a backward step reading the
inverse relation) and its relation sequence is read with :func:`queries.induce.induce`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

from graphstore import open_store
from graphstore.model import EVENT_RELATIONS, FAMILIES, INVERSE, STORED_TO_FORWARD, VAGUE, event_id
from queries.induce import induce
from queries.questions import KGOracle
from tasks.demo import SOURCES, ingest_samples
from tasks.models import load_model
from tasks.registry import get_task
from tasks.runner import evaluate

MAX_LEN = 4  # the kg-oracle's walk length (tasks/ev2.py)
EVENT_TYPES = list(STORED_TO_FORWARD)


@cache
def alive(seq: tuple[str, ...]) -> bool:
    """Whether ``seq`` or some extension of it within MAX_LEN edges induces a relation."""
    if induce(list(seq)) is not None:
        return True
    return len(seq) < MAX_LEN and any(alive(seq + (r,)) for r in EVENT_RELATIONS)


class Walks:
    """Relations induced from one event to the others over walks of at most MAX_LEN edges."""

    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.adj: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for u, v, rtype in graph.edges(keys=True):
            if u != v:
                self.adj[u].add((v, STORED_TO_FORWARD[rtype]))
                self.adj[v].add((u, INVERSE[STORED_TO_FORWARD[rtype]]))
        self._from: dict[str, dict[str, set[str]]] = {}

    def held(self, a: str, b: str) -> set[str]:
        if a not in self._from:
            out: dict[str, set[str]] = defaultdict(set)
            frontier = {(a, ())}
            for _ in range(MAX_LEN):
                nxt = set()
                for node, seq in frontier:
                    for nb, rel in self.adj[node]:
                        walk = seq + (rel,)
                        if not alive(walk):
                            continue
                        nxt.add((nb, walk))
                        if (got := induce(list(walk))) is not None:
                            out[nb].add(got)
                frontier = nxt
            self._from[a] = out
        return self._from[a].get(b, set())


def schema_node(row: dict, name: str) -> str:
    """The store id of a row's event: its event type for instance rows (the oracle's reading)."""
    types = row.get("event_type")
    return event_id(types[name] if types else name, "schema")


def problems(rows: list[dict], walks: Walks) -> list[str]:
    """Every imported question without exactly one right answer, as a readable line."""
    bad = []
    for row in rows:
        e0 = schema_node(row, row["e0"])
        where = f"{row['task']} {row['level']} {row['id']} ({row['e0']} {row['rel']} {row['e1']})"
        if row["task"] == "CEC":
            right = [c for c in row["choices"] if row["rel"] in walks.held(e0, schema_node(row, c))]
            if right != [row["e1"]]:
                bad.append(f"{where}: right answers {right}")
        else:
            family = next(members for members in FAMILIES.values() if set(members) < set(row["choices"]))
            holding = sorted(set(family) & walks.held(e0, schema_node(row, row["e1"])))
            if holding != ([] if row["rel"] == VAGUE else [row["rel"]]):
                bad.append(f"{where}: {holding or 'nothing'} holds")
    return bad


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every bundled sample in one embedded store, as the demo ingests them; the imported rows."""
    store = open_store(str(tmp_path_factory.mktemp("samples") / "store.lbug"))
    ingest_samples(store)
    rows = []
    for q in store.iter_nodes("Question"):
        if q.get("origin") == "imported":
            rows.append(dict(json.loads(q["payload"]), task=q["task"], level=q["level"]))
    yield {"store": store, "rows": rows, "graph": store.fetch_graph(EVENT_TYPES)}
    store.close()


def test_every_sample_file_is_ingested(world: dict, samples_dir: Path) -> None:
    assert {s.name for s in SOURCES} == {"ev2", "eeckg", "aser", "abspyramid", "clomo"}
    assert dict(SOURCES[2].options)["map_events"] is True  # ASER's senses are event relations too
    lines = [ln for f in sorted((samples_dir / "ev2").glob("*.jsonl")) for ln in f.read_text().splitlines() if ln.strip()]
    assert len(world["rows"]) == len(lines) > 100
    sources = {s for _, _, d in world["graph"].edges(data=True) for s in d.get("sources") or []}
    assert {"ev2", "eeckg", "aser"} <= sources  # the union graph, not EV² alone


def test_every_imported_question_has_exactly_one_answer(world: dict) -> None:
    assert problems(world["rows"], Walks(world["graph"])) == []


def test_the_check_catches_a_second_answer(world: dict) -> None:
    """An extra source linking ``e0`` to a negative (as EECKG's "review notes Before take exam"
    once did) is reported; so is a Vague pair that a new edge relates."""
    cec = next(r for r in world["rows"] if r["task"] == "CEC" and r["level"] == "schema" and r["rel"] == "Before")
    crr = next(r for r in world["rows"] if r["task"] == "CRR" and r["level"] == "schema" and r["rel"] == VAGUE
               and "Before" in r["choices"])
    graph = world["graph"].copy()
    graph.add_edge(schema_node(cec, cec["e0"]), schema_node(cec, cec["negative_chosen"][0]), key="BEFORE")
    graph.add_edge(schema_node(crr, crr["e1"]), schema_node(crr, crr["e0"]), key="BEFORE")
    found = problems([cec, crr], Walks(graph))
    assert len(found) == 2
    assert cec["negative_chosen"][0] in found[0] and "['After'] holds" in found[1]


def test_kg_oracle_answers_every_imported_question(world: dict, tmp_path: Path) -> None:
    store = world["store"]
    oracle = KGOracle(store, max_len=MAX_LEN)
    wrong = [r["id"] for r in world["rows"] if oracle.answer(r) != (r["e1"] if r["task"] == "CEC" else r["rel"])]
    assert wrong == []
    for name in ("ev2-cec", "ev2-crr"):
        metrics = evaluate(store, get_task(name, origin="imported"), load_model("kg-oracle", store=store),
                           out_dir=tmp_path / name).metrics
        assert metrics["accuracy"] == 1.0 and metrics["unparseable"] == 0 and metrics["n"] > 20, name
