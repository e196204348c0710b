"""Graphs for the question tests: a synthetic EECKG-like schema graph with instances, and an
independent reader of its facts and inductions (networkx and the Table 1 regexes, no ``eventkg.queries``).

``question_rows`` is the public entry point (:func:`~eventkg.queries.questions.make.make_questions`)
as the tests call it most: EV² rows, random negatives unless a sampler is given.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import networkx as nx

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import INVERSE, event_id
from eventkg.queries.graph.csr import EVENT_REL_TYPES
from eventkg.queries.questions.make import make_questions
from eventkg.queries.questions.spec import QuestionSpec
from tests.support.table1 import table1

VERBS = ["learn", "study", "cook", "travel", "buy", "sell", "write", "read", "paint", "build", "repair", "clean",
         "plan", "visit", "call", "meet", "teach", "train", "sing", "dance", "win", "lose", "open", "close",
         "start", "finish", "watch", "play", "grow", "plant", "save", "spend", "borrow", "lend", "drive", "fly",
         "celebrate", "prepare", "review", "discuss"]
NOUNS = ["book", "meal", "house", "car", "song", "garden", "exam", "trip", "letter", "game", "project", "report",
         "friend", "class", "contract", "party", "money", "room", "bike", "plan", "speech", "lesson", "market",
         "team", "shop", "movie", "story", "picture", "concert", "match", "recipe", "budget", "garage", "office",
         "lecture", "meeting", "dinner", "holiday", "job", "course", "map", "ticket", "website", "phone", "poem"]
STORED = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"}


def synthetic_batch(n_types: int = 1800, n_edges: int = 4300, typed_share: float = 0.75, seed: int = 0) -> Batch:
    """An EECKG-like schema graph with instances (deterministic)."""
    rng = random.Random(seed)
    names = [f"{v} {n}" for v, n in itertools.product(VERBS, NOUNS)][:n_types]
    batch = Batch()
    for x in names:
        batch.add_node("Event", {"id": event_id(x), "text": x, "level": "schema", "sources": ["synthetic"]})
    seen = set()
    while len(seen) < n_edges:
        a, b = rng.sample(names, 2)
        rtype = rng.choice(EVENT_REL_TYPES)
        if (a, b) in seen or (b, a) in seen:
            continue
        seen.add((a, b))
        batch.add_edge(rtype, {"src": event_id(a), "dst": event_id(b), "sources": ["synthetic"]})
    instances: dict[str, str] = {}
    for i, x in enumerate(rng.sample(names, int(typed_share * len(names)))):
        for j in range(rng.randint(1, 2)):
            text = f"On day {i}, Alex had to {x} ({'first' if j == 0 else 'second'} time)."
            iid = event_id(text, "instance")
            instances.setdefault(x, iid)
            batch.add_node("Event", {"id": iid, "text": text, "level": "instance", "sources": ["synthetic"]})
            batch.add_edge("HAS_TYPE", {"src": iid, "dst": event_id(x), "sources": ["synthetic"]})
    # a few instance-level edges, as the EV² loader writes them: they must not leak into schema questions
    typed = sorted(instances)
    for _ in range(200):
        a, b = rng.sample(typed, 2)
        batch.add_edge("BEFORE", {"src": instances[a], "dst": instances[b], "sources": ["synthetic"]})
    return batch


class Facts:
    """Stored facts and path inductions read from the store's graph, without queries.*."""

    def __init__(self, g: nx.MultiDiGraph) -> None:
        self.g = g
        self.facts = {(u, STORED[k], v) for u, v, k in g.edges(keys=True) if k in STORED}
        ev = nx.MultiDiGraph((u, v, k) for u, v, k in g.edges(keys=True) if k in STORED)
        self.und = nx.Graph(ev)
        self.ev = ev

    def holds(self, h: str, r: str, t: str) -> bool:
        """(h, r, t) is stored directly or as its inverse."""
        return (h, r, t) in self.facts or (t, INVERSE[r], h) in self.facts

    def induced(self, a: str, b: str, max_len: int = 4) -> set[str]:
        """Relations induced by simple paths of <= max_len edges (Table 1 by regex)."""
        if a not in self.und or b not in self.und:
            return set()
        try:
            if nx.shortest_path_length(self.und, a, b) > max_len:
                return set()
        except nx.NetworkXNoPath:
            return set()
        out = set()
        for nodes in nx.all_simple_paths(self.und, a, b, cutoff=max_len):
            steps = []
            for u, v in itertools.pairwise(nodes):
                rels = [STORED[k] for k in self.ev.get_edge_data(u, v, default={})]
                rels += [INVERSE[STORED[k]] for k in self.ev.get_edge_data(v, u, default={})]
                steps.append(rels)
            for seq in itertools.product(*steps):
                r = table1(seq)
                if r:
                    out.add(r)
        return out


def question_rows(source: Any, task: str, level: str, n: int, seed: int, **options: Any) -> list[dict[str, Any]]:
    """The EV² rows of ``make_questions`` (random negatives unless ``negatives`` or a ``sampler`` is given)."""
    options.setdefault("negatives", "random")
    runtime = {k: options.pop(k) for k in ("graph", "sampler", "progress", "notice", "stats") if k in options}
    return [q.row for q in make_questions(source, QuestionSpec(task, level, n, seed, **options), **runtime)]
