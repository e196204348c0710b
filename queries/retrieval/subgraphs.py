"""Evaluation subgraphs of questions and EV²-style verbalisation.

The evaluation subgraph of a question (the EV² paper, section 5.3) is the event-schema
knowledge needed to answer it: the context triples, the path that carries the answer
relation from ``e0`` to ``e1`` (none for Vague), and, at instance level, the event type of
every instance event. Scoring a model's schema output against it lives in
:mod:`eventkg.queries.retrieval.scoring`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx

from eventkg.graphstore.model import EVENT_RELATIONS, VAGUE

if TYPE_CHECKING:  # the graph modules are imported when a graph is read
    from eventkg.graphstore.base import GraphStore
    from eventkg.queries.graph.event_graph import EventGraph

Triple = tuple[str, str, str]

#: one sentence per triple, as EV²'s ``context`` fields write them (HasSubevent is said
#: the other way round: ``[a, HasSubevent, b]`` reads ``"b" is a subevent of "a".``)
CONTEXT_TEMPLATES: dict[str, str] = {
    "Causes": '"{h}" causes "{t}".',
    "IsResult": '"{h}" is a result of "{t}".',
    "Before": '"{h}" is before "{t}".',
    "After": '"{h}" is after "{t}".',
    "HasSubevent": '"{t}" is a subevent of "{h}".',
    "IsSubevent": '"{h}" is a subevent of "{t}".',
}
_SENTENCE = re.compile(r'"([^"]+)" (causes|is a result of|is before|is after|is a subevent of) "([^"]+)"\.')
_PHRASE = {"causes": "Causes", "is a result of": "IsResult", "is before": "Before", "is after": "After",
           "is a subevent of": "IsSubevent"}


def verbalise(triples: Iterable[Sequence[str]]) -> str:
    """Triples -> EV² context text, one sentence per triple, space-separated."""
    return " ".join(CONTEXT_TEMPLATES[r].format(h=h, t=t) for h, r, t in triples)


def parse_context(text: str) -> list[Triple]:
    """EV² context text -> triples (``is a subevent of`` reads back as IsSubevent)."""
    return [(m[1], _PHRASE[m[2]], m[3]) for m in _SENTENCE.finditer(text or "")]


@dataclass
class EvalSubgraph:
    """What a question needs: schema triples, instance triples and instance -> type."""

    qid: str
    level: str
    schema_triples: list[Triple]
    instance_triples: list[Triple] = field(default_factory=list)
    event_types: dict[str, str] = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)
    answer_path: list[Triple] = field(default_factory=list)

    @property
    def triples(self) -> list[Triple]:
        """The schema-level triples (context and answer path)."""
        return list(self.schema_triples)

    def to_context(self, level: str = "schema") -> str:
        """EV²-style sentences for the schema triples, or the instance triples."""
        return verbalise(self.instance_triples if level == "instance" else self.schema_triples)

    def to_networkx(self) -> nx.MultiDiGraph:
        """Both levels in one graph: nodes carry ``level``; edges ``relation``; ``HAS_TYPE`` links."""
        g = nx.MultiDiGraph()
        for h, r, t in self.schema_triples:
            g.add_node(h, level="schema")
            g.add_node(t, level="schema")
            g.add_edge(h, t, key=r, relation=r)
        for h, r, t in self.instance_triples:
            for x in (h, t):
                g.add_node(x, level="instance", text=self.instances.get(x, ""))
            g.add_edge(h, t, key=r, relation=r)
        for iid, tname in self.event_types.items():
            g.add_node(iid, level="instance", text=self.instances.get(iid, ""))
            g.add_node(tname, level="schema")
            g.add_edge(iid, tname, key="HAS_TYPE", relation="HAS_TYPE")
        return g


def _row_context(row: Mapping[str, Any]) -> list[Triple]:
    if row.get("context_tpl"):
        return [tuple(t) for t in row["context_tpl"]]  # type: ignore[misc]
    return parse_context(row.get("context", ""))


def _dedupe(triples: Iterable[Sequence[str]]) -> list[Triple]:
    seen: dict[Triple, None] = {}
    for t in triples:
        seen.setdefault((t[0], t[1], t[2]), None)
    return list(seen)


def answer_path(source: GraphStore | EventGraph | None, e0: str, rel: str, e1: str, max_len: int = 4) -> list[Triple]:
    """The shortest path in the graph from ``e0`` to ``e1`` inducing ``rel``, as named triples.

    Falls back to the gold triple itself when no graph is given or no such path exists.
    """
    if rel not in EVENT_RELATIONS:
        return []
    if source is not None:
        from eventkg.queries.errors import UnknownEventError
        from eventkg.queries.graph.event_graph import as_index
        from eventkg.queries.induction.induce import paths

        idx = as_index(source)
        try:
            found = [p for p in paths(idx, e0, e1, max_len, inducing_only=True) if p.induced == rel]
        except UnknownEventError:
            found = []
        if found:
            best = found[0]
            names = [idx.name(idx.pos[n]) for n in best.nodes]
            return [(names[i], r, names[i + 1]) for i, r in enumerate(best.relations)]
    return [(e0, rel, e1)]


def _path_within(triples: list[Triple], head: str, rel: str, tail: str, max_len: int) -> list[Triple]:
    """The shortest path inside ``triples`` (read both ways) from ``head`` to ``tail`` inducing ``rel``."""
    if rel not in EVENT_RELATIONS or not head or not tail:
        return []
    from eventkg.queries.errors import UnknownEventError
    from eventkg.queries.graph.event_graph import EventIndex
    from eventkg.queries.induction.induce import paths

    g = nx.MultiDiGraph()
    for h, r, t in triples:
        if r in EVENT_RELATIONS:
            g.add_edge(h, t, key=r, relation=r)
    try:
        found = [p for p in paths(EventIndex.from_graph(g), head, tail, max_len, inducing_only=True) if p.induced == rel]
    except UnknownEventError:
        return []
    return found[0].triples() if found else []


def question_subgraph(row: Mapping[str, Any], source: GraphStore | EventGraph | None = None, max_len: int = 4) -> EvalSubgraph:
    """The evaluation subgraph of an EV²-schema question row.

    ``source`` (store, networkx graph or EventIndex) lets the answer path be read from the
    graph; without it the gold triple ``(e0, rel, e1)`` stands for the path.
    """
    rel = row.get("rel", VAGUE)
    context = _row_context(row)
    level = "instance" if "event_type" in row or "instances" in row else "schema"
    if level == "schema":
        path = answer_path(source, row["e0"], rel, row["e1"], max_len)
        return EvalSubgraph(str(row.get("id", "")), level, _dedupe(context + path), answer_path=path)
    types: dict[str, str] = dict(row.get("event_type") or {})
    inst_gold = [(row["e0"], rel, row["e1"])] if rel in EVENT_RELATIONS else []
    if row.get("event_relation"):
        schema = [tuple(t) for t in row["event_relation"]]
        path = _path_within(schema, types.get(row["e0"], ""), rel, types.get(row["e1"], ""), max_len)
    else:
        mapped = [(types.get(h, h), r, types.get(t, t)) for h, r, t in context]
        path = answer_path(source, types.get(row["e0"], row["e0"]), rel, types.get(row["e1"], row["e1"]), max_len)
        schema = mapped + path
    return EvalSubgraph(
        str(row.get("id", "")),
        level,
        _dedupe(schema),
        instance_triples=_dedupe(context + inst_gold),
        event_types=types,
        instances=dict(row.get("instances") or {}),
        answer_path=[tuple(t) for t in path],  # type: ignore[misc]
    )
