"""The bundled samples are one coherent world: every imported EV² question has exactly one
right answer in the union graph of all samples as ``eventkg demo`` ingests them.

The check is independent of the oracle's index (``eventkg.queries.graph.event_graph.EventIndex.reach``):
the store's event relations are fetched as networkx, every walk of at most ``MAX_LEN`` edges
from the question's ``e0`` is enumerated (edges read both ways, a backward step reading the
inverse relation) and its relation sequence is read with :func:`eventkg.queries.induction.induce.induce`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

from eventkg.demo import SOURCES, ingest_samples
from eventkg.graphstore import open_store
from eventkg.graphstore.model import EVENT_RELATIONS, FAMILIES, INVERSE, STORED_TO_FORWARD, VAGUE, event_id
from eventkg.queries.induction.induce import induce
from eventkg.queries.oracle import EV2Oracle

MAX_LEN = 4  # the kg-oracle's walk length (tasks/ev2/tasks.py)
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


def _evidence(world: dict, with_schema_gold: bool) -> Walks:
    """The kg-oracle's documented view, rebuilt here from the rows (not from eventkg.queries.oracle):
    edges another dataset holds, every row's background (schema context; instance context
    through event_type; instance event_relation minus triples touching a candidate type), and
    for the instance view the schema rows' gold edges. Instance gold never."""
    g = nx.MultiDiGraph()
    for u, v, k, d in world["graph"].edges(keys=True, data=True):
        if set(d.get("sources") or []) - {"ev2"}:
            g.add_edge(u, v, key=k)

    def add(h: str, r: str, t: str) -> None:
        a, b = event_id(h, "schema"), event_id(t, "schema")
        if r in STORED_TO_FORWARD.values():
            g.add_edge(a, b, key=next(k for k, f in STORED_TO_FORWARD.items() if f == r))
        else:
            g.add_edge(b, a, key=next(k for k, f in STORED_TO_FORWARD.items() if f == INVERSE[r]))

    for row in world["rows"]:
        types = row.get("event_type")
        if not types:
            for h, r, t in row.get("context_tpl") or []:
                add(h, r, t)
            if with_schema_gold and row["rel"] != VAGUE:
                add(row["e0"], row["rel"], row["e1"])
            continue
        for h, r, t in row.get("context_tpl") or []:
            add(types[h], r, types[t])
        cands = {types[c] for c in (row["choices"] if row["task"] == "CEC" else [row["e1"]])}
        for h, r, t in row.get("event_relation") or []:
            if not {h, t} & cands:
                add(h, r, t)
    return Walks(g)


def _reference(row: dict, walks: Walks) -> str | None:
    """The answer the view singles out: one choice reached by rel (CEC); the one family member
    held, Vague when none (CRR); None otherwise, and None when the view knows nothing of e0."""
    e0 = schema_node(row, row["e0"])
    if not walks.adj.get(e0):
        return None
    if row["task"] == "CEC":
        right = [c for c in row["choices"] if row["rel"] in walks.held(e0, schema_node(row, c))]
        return right[0] if len(right) == 1 else None
    family = next(members for members in FAMILIES.values() if set(members) < set(row["choices"]))
    holding = sorted(set(family) & walks.held(e0, schema_node(row, row["e1"])))
    return VAGUE if not holding else holding[0] if len(holding) == 1 else None


def test_kg_oracle_agrees_with_an_independent_reading_of_its_view(world: dict) -> None:
    """Where the reference decides, the oracle gives the same answer; where it does not, the
    oracle abstains or breaks a tie by a direct edge. Gold is compared only at the end."""
    store = world["store"]
    oracle = EV2Oracle(store, max_len=MAX_LEN)
    views = {"schema": _evidence(world, False), "instance": _evidence(world, True)}
    decided, wrong = 0, []
    for row in world["rows"]:
        ref = _reference(row, views[row["level"]])
        got = oracle.answer(row)
        if ref is not None:
            assert got == ref, (row["task"], row["level"], row["id"])
            decided += 1
            if ref != (row["e1"] if row["task"] == "CEC" else row["rel"]):
                wrong.append((row["task"], row["level"], row["rel"], ref))
    assert decided > 100
    # the samples are one coherent world, so a decided answer is wrong only where the hidden
    # gold was the pair's one link: the closed world then reads a real relation as Vague
    assert all(task == "CRR" and ref == VAGUE for task, _, _, ref in wrong), wrong
