"""Evaluation subgraphs of questions, EV²-style verbalisation, and schema-alignment scoring.

The evaluation subgraph of a question (seed 001, section 5.3) is the event-schema
knowledge needed to answer it: the context triples, the path that carries the answer
relation from ``e0`` to ``e1`` (none for Vague), and, at instance level, the event type of
every instance event. A model asked to "output the event semantic knowledge used" returns
``{"event_type": {instance: type}, "event_relation": [[type, Relation, type], ...]}``
(Figure 9 of the paper); :func:`score_schema` compares that with the subgraph:
event-type accuracy over the gold instances and relation-triplet F1, a triplet counting as
correct when head type, relation and tail type all match. Inverse spellings of one fact
(``[a, Causes, b]`` and ``[b, IsResult, a]``) count as the same triplet unless
``canonical=False``; names are compared after :func:`eventkg.graphstore.model.normalise_text`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from sklearn.metrics import accuracy_score, precision_recall_fscore_support
from sklearn.preprocessing import MultiLabelBinarizer

from eventkg.errors import EventKGError
from eventkg.graphstore.model import CANONICAL, EVENT_RELATIONS, STORED_TO_FORWARD, VAGUE, normalise_text

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


class BadPredictionError(EventKGError):
    """A model's schema output cannot be read as event types and triplets."""


def verbalise(triples: Iterable[Sequence[str]]) -> str:
    """Triples -> EV² context text, one sentence per triple, space-separated."""
    return " ".join(CONTEXT_TEMPLATES[r].format(h=h, t=t) for h, r, t in triples)


def parse_context(text: str) -> list[Triple]:
    """EV² context text -> triples (``is a subevent of`` reads back as IsSubevent)."""
    return [(m[1], _PHRASE[m[2]], m[3]) for m in _SENTENCE.finditer(text or "")]


def canonical_triple(t: Sequence[str]) -> Triple:
    """One spelling per fact: the stored direction, in the forward relation's name."""
    h, r, tail = (normalise_text(str(x)) if i != 1 else str(x) for i, x in enumerate(t))
    if r not in CANONICAL:
        return (h, r, tail)
    stored, forward = CANONICAL[r]
    fwd = STORED_TO_FORWARD[stored]
    return (h, fwd, tail) if forward else (tail, fwd, h)


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


def answer_path(source: Any, e0: str, rel: str, e1: str, max_len: int = 4) -> list[Triple]:
    """The shortest path in the graph from ``e0`` to ``e1`` inducing ``rel``, as named triples.

    Falls back to the gold triple itself when no graph is given or no such path exists.
    """
    if rel not in EVENT_RELATIONS:
        return []
    if source is not None:
        from eventkg.queries.event_graph import UnknownEventError, as_index
        from eventkg.queries.induce import paths

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
    from eventkg.queries.event_graph import EventIndex, UnknownEventError
    from eventkg.queries.induce import paths

    g = nx.MultiDiGraph()
    for h, r, t in triples:
        if r in EVENT_RELATIONS:
            g.add_edge(h, t, key=r, relation=r)
    try:
        found = [p for p in paths(EventIndex.from_graph(g), head, tail, max_len, inducing_only=True) if p.induced == rel]
    except UnknownEventError:
        return []
    return found[0].triples() if found else []


def question_subgraph(row: Mapping[str, Any], source: Any = None, max_len: int = 4) -> EvalSubgraph:
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


# --- scoring a model's generated schema ------------------------------------------------------


@dataclass(frozen=True)
class SchemaScore:
    """Event-type accuracy and relation-triplet precision/recall/F1 for one or many questions."""

    type_accuracy: float
    precision: float
    recall: float
    f1: float
    n_types: int
    n_gold_triples: int
    n_pred_triples: int

    def as_dict(self) -> dict[str, float | int]:
        return dict(self.__dict__)


def parse_prediction(output: str | Mapping[str, Any]) -> dict[str, Any]:
    """A model's output (JSON text, Python-literal text, or a dict) -> ``{event_type, event_relation}``."""
    if isinstance(output, Mapping):
        data: Any = output
    else:
        start, end = output.find("{"), output.rfind("}")
        if start < 0 or end <= start:
            raise BadPredictionError("model output holds no {...} object with event_type / event_relation")
        chunk = output[start : end + 1]
        try:
            data = json.loads(chunk)
        except json.JSONDecodeError:
            try:
                data = ast.literal_eval(chunk)
            except (ValueError, SyntaxError) as exc:
                raise BadPredictionError(f"model output is not JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise BadPredictionError("model output is not an object")
    types = data.get("event_type") or data.get("event type") or {}
    rels = data.get("event_relation") or data.get("event relation") or []
    if not isinstance(types, Mapping) or not isinstance(rels, list):
        raise BadPredictionError("event_type must be an object and event_relation a list")
    triples = [tuple(map(str, t)) for t in rels if isinstance(t, list | tuple) and len(t) == 3]
    return {"event_type": {str(k): str(v) for k, v in types.items()}, "event_relation": triples}


def _triple_key(t: Sequence[str], canonical: bool) -> str:
    c = canonical_triple(t) if canonical else (normalise_text(t[0]), t[1], normalise_text(t[2]))
    return "\x1f".join(c)


def score_many(
    predictions: Sequence[str | Mapping[str, Any]],
    golds: Sequence[EvalSubgraph],
    *,
    canonical: bool = True,
) -> SchemaScore:
    """Micro-averaged scores over questions (sklearn): types over all gold instances, triplets over all triplets.

    An unreadable prediction counts as empty (every gold type and triplet missed).
    """
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} questions")
    gold_types: list[str] = []
    pred_types: list[str] = []
    gold_sets: list[set[str]] = []
    pred_sets: list[set[str]] = []
    for pred, gold in zip(predictions, golds, strict=True):
        try:
            p = parse_prediction(pred)
        except BadPredictionError:
            p = {"event_type": {}, "event_relation": []}
        ptypes = {k: normalise_text(v) for k, v in p["event_type"].items()}
        for iid, tname in gold.event_types.items():
            gold_types.append(normalise_text(tname))
            pred_types.append(ptypes.get(iid, "\x00missing"))
        gold_sets.append({_triple_key(t, canonical) for t in gold.schema_triples})
        pred_sets.append({_triple_key(t, canonical) for t in p["event_relation"]})
    acc = float(accuracy_score(gold_types, pred_types)) if gold_types else 0.0
    # micro P/R/F1 over the multilabel indicator matrix = set overlap summed over questions
    mlb = MultiLabelBinarizer()
    mlb.fit(gold_sets + pred_sets + [{"\x00"}])
    y_true, y_pred = mlb.transform(gold_sets), mlb.transform(pred_sets)
    prec, rec, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="micro", zero_division=0)
    return SchemaScore(acc, float(prec), float(rec), float(f1), len(gold_types),
                       sum(map(len, gold_sets)), sum(map(len, pred_sets)))


def score_schema(prediction: str | Mapping[str, Any], gold: EvalSubgraph, *, canonical: bool = True) -> SchemaScore:
    """Scores of one model output against one question's evaluation subgraph."""
    return score_many([prediction], [gold], canonical=canonical)
