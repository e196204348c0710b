"""The EV² kg-oracle: answers each question from graph evidence with that question's answer hidden.

The EV² loader writes every question's gold edge (``e0 -rel-> e1``) into the store, and an
edge's ``sources`` names only the dataset (``ev2``), not the question; an oracle reading the
stored edges would read the answer. So the oracle does not read EV²-only edges at all: it
rebuilds the EV² part of the graph from the ``Question`` nodes' payloads, sorting every
triple a question contributes into *background* (what the question shows as its context)
and *gold* (its answer), and builds two views (type level, event-type names):

* ``schema`` view, for schema questions: edges that some other dataset also holds (EECKG,
  ASER...), plus the background of every imported EV² question — schema ``context_tpl``,
  instance ``context_tpl`` mapped through ``event_type``, and instance ``event_relation``
  triples except those touching a candidate's type (CEC: any choice; CRR: ``e1``); in the
  release those are exactly the answer triples, and dropping them for every candidate,
  right or wrong, keeps which one is gold from leaking.
  No gold of any question: a schema question's answer is the same fact as its twins'.
* ``instance`` view, for instance questions: the schema view plus the gold edges of the
  schema-level questions — EV²'s thesis that the schema graph (given as knowledge) answers
  instance questions through the events' types. No instance-level gold, ever.

Consequences, tested: moving the gold of every question in an instance file to a wrong
choice leaves every prediction unchanged; doing it in a schema file leaves the schema
predictions unchanged (the instance ones may move: their knowledge changed).

Answering is Table 1 induction (:mod:`eventkg.queries.induction.induce`) over walks of at most ``max_len``
edges read both ways: CEC takes the one choice the asked relation reaches from ``e0`` (a
direct edge breaks a tie), CRR the one family member induced from ``e0`` to ``e1``, and
``Vague`` when none is (closed world, as EV² builds Vague: no relation of the family). With
no evidence at all about ``e0``, or no single answer, it abstains (``None``).
Generated questions (origin ``generated``) are answered by nobody: they are computed from
the graph's paths, so every graph reading of them reads the answer; the oracle abstains.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import CANONICAL, FAMILIES, STORED_TO_FORWARD, VAGUE, event_id
from eventkg.queries.errors import QuestionError, UnknownEventError
from eventkg.queries.graph.csr import EVENT_REL_TYPES, event_name
from eventkg.queries.graph.event_graph import EventGraph, EventIndex, as_index
from eventkg.queries.induction.table1 import CODE

EV2_SOURCE = "ev2"
Triple = tuple[str, str, str]


def _is_instance(row: Mapping[str, Any]) -> bool:
    return "instances" in row or "event_type" in row


def _candidates(row: Mapping[str, Any]) -> list[str]:
    """The names whose relation to ``e0`` the question asks about (CEC choices; CRR ``e1``)."""
    choices = list(row.get("choices") or [])
    if _crr_family(choices) is not None:
        return [row["e1"]]
    return choices


def _crr_family(choices: list[str]) -> str | None:
    return next((f for f, (a, b) in FAMILIES.items() if choices == [a, b, VAGUE]), None)


def _valid(t: Any) -> bool:
    return isinstance(t, list | tuple) and len(t) == 3 and t[1] in CANONICAL and all(isinstance(x, str) for x in t)


def imported_payloads(store: GraphStore, source: str | None = None) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(Question node, its parsed EV² row) for every imported question (of ``source`` when given);
    nodes without a readable payload are passed over."""
    for q in store.iter_nodes("Question"):
        if q.get("origin") != "imported" or not q.get("payload"):
            continue
        if source is not None and source not in (q.get("sources") or []):
            continue
        try:
            yield q, json.loads(q["payload"])
        except json.JSONDecodeError:
            continue


def contributions(row: Mapping[str, Any]) -> tuple[list[Triple], list[Triple]]:
    """``(background, gold)`` type-level triples of one EV² row (see the module docstring).

    Background never depends on which choice is gold: in ``event_relation`` every triple
    touching a candidate's type is dropped, whichever candidate it names.
    """
    context = [tuple(t) for t in row.get("context_tpl") or [] if _valid(t)]
    rel = row.get("rel")
    gold_raw = [(row["e0"], rel, row["e1"])] if rel in CANONICAL else []
    if not _is_instance(row):
        return context, gold_raw  # type: ignore[return-value]
    types: Mapping[str, str] = row.get("event_type") or {}
    mapped = [(types[h], r, types[t]) for h, r, t in context if h in types and t in types]
    cands = {types[c] for c in _candidates(row) if c in types}
    kept = [tuple(t) for t in row.get("event_relation") or [] if _valid(t) and not {t[0], t[2]} & cands]
    gold = [(types[h], r, types[t]) for h, r, t in gold_raw if h in types and t in types]
    return mapped + kept, gold  # type: ignore[return-value]


def _stored(triples: Iterable[Triple]) -> list[tuple[str, str, str]]:
    out = []
    for h, r, t in triples:
        rtype, forward = CANONICAL[r]
        a, b = event_id(h, "schema"), event_id(t, "schema")
        out.append((a, rtype, b) if forward else (b, rtype, a))
    return out


class EV2Oracle:
    """The two evidence views of one store, and the answering rule (module docstring)."""

    def __init__(self, store: GraphStore, max_len: int = 4) -> None:
        self.max_len = max_len
        other = [
            (e["src"], rtype, e["dst"])
            for rtype in EVENT_REL_TYPES
            for e in store.iter_edges(rtype)
            if set(e.get("sources") or []) - {EV2_SOURCE}
        ]
        background: list[Triple] = []
        schema_gold: list[Triple] = []
        for q, row in imported_payloads(store, EV2_SOURCE):
            bg, gold = contributions(row)
            background += bg
            if (q.get("level") or ("instance" if _is_instance(row) else "schema")) == "schema":
                schema_gold += gold
        props = [(n["id"], n.get("text"), n.get("level")) for n in store.iter_nodes("Event")]
        base = other + _stored(background)
        self.views = {
            "schema": EventIndex.build(base, (), props),
            "instance": EventIndex.build(base + _stored(schema_gold), (), props),
        }
        self.index = self.views["instance"]

    def answer(self, row: Mapping[str, Any], origin: str | None = None) -> str | None:
        """The answer the evidence singles out for an EV² row, or ``None`` (abstain)."""
        if (origin or row.get("_origin")) == "generated":
            return None
        idx = self.views["instance" if _is_instance(row) else "schema"]
        try:
            return induce_answer(idx, row, self.max_len)
        except (UnknownEventError, KeyError):
            return None


def _position(idx: EventIndex, row: Mapping[str, Any], name: str) -> int:
    if _is_instance(row):
        types = row.get("event_type") or {}
        if name not in types:
            raise KeyError(name)
        name = types[name]
    return idx.lookup(name, "schema")


def induce_answer(idx: EventIndex, row: Mapping[str, Any], max_len: int = 4, *, strict: bool = False) -> str | None:
    """CEC/CRR answer by Table 1 induction over ``idx`` (walks of <= ``max_len``), or ``None``.

    ``strict`` (the generator's check) answers even for an ``e0`` with no edge and raises a
    :class:`QuestionError` for a CEC relation that is not an event relation.
    """
    choices = list(row.get("choices") or [])
    e0 = _position(idx, row, row["e0"])
    if not strict and not idx.adj[e0]:
        return None  # nothing is known about e0: no reading of the graph decides
    fam = _crr_family(choices)
    if fam is not None:
        return answer_by_induction(idx, e0, max_len, family=fam, e1=_position(idx, row, row["e1"]))
    rel = row.get("rel")
    if rel not in CODE:
        if strict:
            raise QuestionError(f"question {row.get('id')!r}: CEC relation {rel!r} is not an event relation")
        return None
    candidates: list[tuple[str, int]] = []
    for c in choices:
        try:
            candidates.append((c, _position(idx, row, c)))
        except (UnknownEventError, KeyError):
            continue
    return answer_by_induction(idx, e0, max_len, rel=rel, candidates=candidates)


def answer_by_induction(idx: EventIndex, e0: int, max_len: int, *, family: str | None = None, e1: int | None = None,
                        rel: str | None = None, candidates: Sequence[tuple[str, int]] = ()) -> str | None:
    """The one answer Table 1 induction over walks of <= ``max_len`` from ``e0`` singles out.

    CRR (``family`` and ``e1``): the family's one relation induced to ``e1``, Vague when none is,
    else the one of those stored directly. CEC (``rel`` and ``(choice, position)`` candidates):
    the one candidate ``rel`` is induced to, else the one joined to ``e0`` directly by ``rel``.
    ``None`` where that leaves no single answer. Shared by the kg-oracle and the generator's check.
    """
    reach = idx.reach(e0, max_len)
    if family is not None:
        held = [r for r in FAMILIES[family] if reach.get(e1, 0) >> CODE[r] & 1]
        if not held:
            return VAGUE
        if len(held) == 1:
            return held[0]
        direct = [r for r in idx.relations(e0, e1) if r in held]
        return direct[0] if len(direct) == 1 else None
    hits = [(c, p) for c, p in candidates if reach.get(p, 0) >> CODE[rel] & 1]
    if len(hits) == 1:
        return hits[0][0]
    direct = [c for c, p in hits if rel in idx.relations(e0, p)]
    return direct[0] if len(direct) == 1 else None


def kg_oracle_answer(store_or_graph: GraphStore | EventGraph, question_row: Mapping[str, Any],
                     max_len: int = 4) -> str | None:
    """Answer a CEC or CRR row from the graph alone, by Table 1 induction over walks of <= ``max_len``.

    CEC: the one choice the asked relation reaches from ``e0``; CRR: the one family member
    holding from ``e0`` to ``e1``, ``Vague`` when none does. Instance rows are answered on
    their event types (``event_type``). Returns ``None`` when the graph does not single out
    one answer. Pass an :class:`EventIndex` when answering many rows from a store.

    It reads every edge, the row's own gold edges included, so it checks that a generated
    question follows from its graph; it is not a baseline. The ``kg-oracle`` baseline, which
    hides each question's answer, is :class:`EV2Oracle`.
    """
    try:
        return induce_answer(as_index(store_or_graph), question_row, max_len, strict=True)
    except KeyError as exc:
        if isinstance(exc, UnknownEventError):
            raise
        raise QuestionError(f"question {question_row.get('id')!r}: instance {exc.args[0]!r} has no event_type") from None


class KGOracle:
    """:func:`kg_oracle_answer` with the graph fetched once (a construction check; reads gold)."""

    def __init__(self, store_or_graph: GraphStore | EventGraph, max_len: int = 4) -> None:
        self.index = as_index(store_or_graph)
        self.max_len = max_len

    def answer(self, question_row: Mapping[str, Any]) -> str | None:
        try:
            return kg_oracle_answer(self.index, question_row, self.max_len)
        except UnknownEventError:
            return None


def _forward(h: str, r: str, t: str) -> Triple:
    """A triple in the stored (forward) direction, in paper names: ``IsResult(a, b)`` -> ``Causes(b, a)``."""
    rtype, forward = CANONICAL[r]
    name = STORED_TO_FORWARD[rtype]
    return (h, name, t) if forward else (t, name, h)


class TripleEvidence:
    """Who states what, for the alignment oracle: instance text -> types given by each question,
    and type-level triple -> the questions (or ``"other"`` datasets) stating it."""

    def __init__(self, store: GraphStore) -> None:
        self.types: dict[str, list[tuple[str, str]]] = {}
        self.support: dict[Triple, set[str]] = {}
        text = {n["id"]: n.get("text") or "" for n in store.iter_nodes("Event")}
        for rtype in EVENT_REL_TYPES:
            for e in store.iter_edges(rtype):
                if set(e.get("sources") or []) - {EV2_SOURCE} and e["src"] in text and e["dst"] in text:
                    t = (event_name(text[e["src"]]), STORED_TO_FORWARD[rtype], event_name(text[e["dst"]]))
                    self.support.setdefault(t, set()).add("other")
        for q, row in imported_payloads(store):
            bg, gold = contributions(row)
            for t in bg + gold + [tuple(x) for x in row.get("event_relation") or [] if _valid(x)]:
                self.support.setdefault(_forward(*t), set()).add(q["id"])
            types = row.get("event_type") or {}
            for iid, sentence in (row.get("instances") or {}).items():
                if iid in types:
                    self.types.setdefault(" ".join(sentence.split()), []).append((q["id"], types[iid]))

    def type_of(self, sentence: str, exclude: str) -> str | None:
        """The type other questions give this instance text most often (ties: alphabetical)."""
        from collections import Counter

        votes = Counter(t for q, t in self.types.get(" ".join(sentence.split()), []) if q != exclude)
        return min(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0] if votes else None

    def triples_among(self, names: list[str], exclude: str) -> list[Triple]:
        """Forward triples between ``names`` that something other than question ``exclude`` states."""
        wanted = set(names)
        return sorted(t for t, who in self.support.items() if t[0] in wanted and t[2] in wanted and who - {exclude})
