"""CEC and CRR questions from the event graph (seed 001, section 3), in EV²'s JSON-lines schema.

Construction, per Algorithm 1 component (forward and backward copies, see
:mod:`eventkg.queries.components`):

1. pairs ``(head, tail)`` where ``tail`` is reachable from ``head`` in the component DAG by a
   path of at most ``max_len`` (4) edges, and ``head`` has predecessors (they are the
   background); up to ``pairs`` (3) pairs per component, in seeded random order;
2. the queried relation is the direct edge's relation, else Table 1 induction over the DAG
   path (:func:`eventkg.queries.induce.induce`); pairs whose path induces nothing are skipped;
3. the context is every component triple among the head's predecessors (ancestors) and the
   head, so it never states the answer triple or its inverse, and every context triple is a
   stored edge (read through the inverse table);
4. CEC (4-way): the answer plus 3 negatives from a sampler (FAISS hard negatives from
   :mod:`eventkg.queries.negatives`, or :class:`GraphNegativeSampler`); every negative is checked
   here against the graph whatever sampler proposed it: same level, not in the component,
   not the query or answer, no duplicate, and not linked to the query by the asked
   relation's family by any walk of at most ``max_len`` edges (so no negative is a true
   answer, even by induction);
5. CRR (3-way): the choices are the asked relation's family plus Vague; the pair's own
   family is asked when exactly one member of it holds over the whole graph (walks of at
   most ``max_len``); with probability ``vague_prob`` a Vague item follows, built as EV²
   builds them (242 of the release's 244): ``e0`` with an event unrelated to it (same
   level, outside the component, no relation of any family by a walk of at most
   ``max_len``: the kind CEC uses as negatives), asked within the family of an edge ``e0``
   really has (about a third of CRR questions are Vague).

Instance level: components are walked over event types that have instance events
(``HAS_TYPE``); each type in a question is shown as one of its instances, numbered
``eventN`` per question as in EV², with ``instances``, ``event_type`` and ``event_relation``
(as the release: the type-level triples of the question's graph, i.e. the context plus the
answer triple ``(type(e0), rel, type(e1))``; for Vague, the context plus the edge of
``e0`` whose family is asked).

Everything is deterministic for a seed and a graph (the index is ordered by event id, so
two backends holding the same graph give the same questions).
"""

from __future__ import annotations

import gc
import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from eventkg.errors import EventKGError
from eventkg.graphstore.base import Batch, GraphStore, WriteResult
from eventkg.graphstore.model import FAMILIES, VAGUE, family_of, node_id
from eventkg.queries.components import Component, iter_components
from eventkg.queries.event_graph import EventIndex, UnknownEventError, as_index
from eventkg.queries.induce import CODE, induce
from eventkg.queries.oracle import answer_by_induction
from eventkg.queries.subgraphs import verbalise

TASKS = ("CEC", "CRR")
LEVELS = ("schema", "instance")
SOURCE = "generated"

CEC_QUESTIONS: dict[str, str] = {
    "Causes": 'Which is result of "{e0}"?',
    "IsResult": 'Which is the cause of "{e0}"?',
    "Before": 'Which happened after "{e0}"?',
    "After": 'Which happened before "{e0}"?',
    "HasSubevent": 'Which is a subevent of "{e0}"?',
    "IsSubevent": 'Which event has the subevent of "{e0}"?',
}
CRR_QUESTION = 'Is "{e0}" "{a}", "{b}" or "Vague" "{e1}"?'
CRR_CHOICES: dict[str, list[str]] = {fam: [a, b, VAGUE] for fam, (a, b) in FAMILIES.items()}
_FAMILY_MASK = {fam: (1 << CODE[a]) | (1 << CODE[b]) for fam, (a, b) in FAMILIES.items()}


class QuestionError(EventKGError):
    """Bad arguments to question generation, or a question row the graph cannot answer."""


class NegativeSource(Protocol):
    """Anything that proposes negative event ids (``eventkg.queries.negatives.NegativeSampler`` does)."""

    def sample(
        self, query_event_id: str, relation: str, answer_id: str, k: int = 3,
        exclude: set[str] = ..., rng: Any = None,
    ) -> list[str]: ...


def _as_random(rng: Any) -> random.Random:
    if isinstance(rng, random.Random):
        return rng
    return random.Random(rng)


class GraphNegativeSampler:
    """Random events from a pool (default: the query's level) not linked to the query by the family.

    Fast and embedding-free: the fallback when hard negatives are not asked for.
    """

    def __init__(self, source: EventIndex | Any, *, pool: Sequence[int] | None = None, max_len: int = 4,
                 tries: int = 64) -> None:
        self.index = as_index(source)
        self.max_len = max_len
        self.tries = tries
        self._pool = list(pool) if pool is not None else None
        self._by_level: dict[str, list[int]] = {}

    def _pool_for(self, level: str) -> list[int]:
        if self._pool is not None:
            return self._pool
        if level not in self._by_level:
            self._by_level[level] = [p for p in range(len(self.index)) if self.index.level[p] == level]
        return self._by_level[level]

    def sample(self, query_event_id: str, relation: str, answer_id: str, k: int = 3,
               exclude: set[str] = frozenset(), rng: Any = None) -> list[str]:  # type: ignore[assignment]
        """Up to ``k`` event ids; never the query, the answer, ``exclude`` or a family-linked event."""
        idx = self.index
        q = idx.pos.get(query_event_id)
        if q is None:
            raise UnknownEventError(f"query event {query_event_id!r} is not in the graph")
        rng = _as_random(rng)
        fam_mask = _FAMILY_MASK[family_of(relation)]
        linked = idx.reach(q, self.max_len, fam_mask)
        pool = self._pool_for(idx.level[q])
        skip = set(exclude) | {query_event_id, answer_id}
        out: list[str] = []
        for _ in range(self.tries * k):
            if len(out) >= k or not pool:
                break
            z = pool[rng.randrange(len(pool))]
            zid = idx.ids[z]
            if zid in skip or linked.get(z, 0) & fam_mask:
                continue
            skip.add(zid)
            out.append(zid)
        return out


@dataclass
class GeneratedQuestion:
    """One question: the EV² row plus the store ids behind the names it uses."""

    row: dict[str, Any]
    task: str
    level: str
    names: dict[str, str] = field(default_factory=dict)  # name in the row -> Event id in the store
    context_ids: list[str] = field(default_factory=list)  # context events, in order of appearance

    @property
    def answer(self) -> str:
        return self.row["e1"] if self.task == "CEC" else self.row["rel"]


def _dag_paths(comp: Component, max_len: int) -> dict[int, dict[int, list[list[tuple[int, str, int]]]]]:
    """head -> tail -> DAG paths (as triples) of at most max_len edges, shortest first."""
    succ: dict[int, list[tuple[int, str, int]]] = {}
    for t in comp.triples:
        succ.setdefault(t[0], []).append(t)
    out: dict[int, dict[int, list[list[tuple[int, str, int]]]]] = {}
    for h in comp.nodes:
        found: dict[int, list[list[tuple[int, str, int]]]] = {}
        stack: list[list[tuple[int, str, int]]] = [[t] for t in succ.get(h, [])]
        while stack:
            path = stack.pop()
            found.setdefault(path[-1][2], []).append(path)
            if len(path) < max_len:
                stack.extend(path + [t] for t in succ.get(path[-1][2], []))
        for paths in found.values():
            paths.sort(key=lambda p: (len(p), [CODE[r] for _, r, _ in p]))
        out[h] = found
    return out


def _ancestors(comp: Component, node: int) -> set[int]:
    pred: dict[int, list[int]] = {}
    for h, _, t in comp.triples:
        pred.setdefault(t, []).append(h)
    seen: set[int] = set()
    stack = [node]
    while stack:
        for p in pred.get(stack.pop(), []):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


class _Builder:
    """Turns components into questions; holds the index, samplers and options of one run."""

    def __init__(self, idx: EventIndex, task: str, level: str, rng: random.Random, negatives: NegativeSource,
                 fallback: GraphNegativeSampler, allowed: Callable[[int], bool], *, max_len: int, pairs: int,
                 vague_prob: float, require_context: bool) -> None:
        self.idx, self.task, self.level, self.rng = idx, task, level, rng
        self.negatives, self.fallback, self.allowed = negatives, fallback, allowed
        self.max_len, self.pairs, self.vague_prob, self.require_context = max_len, pairs, vague_prob, require_context

    # -- pairs -----------------------------------------------------------------------------
    def questions(self, comp: Component) -> Iterator[GeneratedQuestion]:
        dag = _dag_paths(comp, self.max_len)
        candidates = [(h, t) for h in comp.nodes for t in sorted(dag[h])]
        self.rng.shuffle(candidates)
        made = 0
        for h, t in candidates:
            if made >= self.pairs:
                break
            anc = _ancestors(comp, h)
            if self.require_context and not anc:
                continue
            rel, path = self._relation(dag[h][t])
            if rel is None:
                continue
            keep = anc | {h}
            context = [tr for tr in comp.triples if tr[0] in keep and tr[2] in keep]
            qid = f"{comp.cid}-{made}"
            built = (self._cec(qid, comp, h, t, rel, path, context) if self.task == "CEC"
                     else self._crr(qid, comp, h, t, rel, path, context))
            if built:
                made += 1
                yield from built

    @staticmethod
    def _relation(paths: list[list[tuple[int, str, int]]]) -> tuple[str | None, list[tuple[int, str, int]]]:
        for p in paths:  # shortest first, so a direct edge wins
            rel = induce([r for _, r, _ in p])
            if rel is not None:
                return rel, p
        return None, []

    # -- CEC -------------------------------------------------------------------------------
    def _negatives(self, comp: Component, h: int, t: int, rel: str) -> list[int] | None:
        idx = self.idx
        exclude = {idx.ids[p] for p in comp.nodes}
        fam_mask = _FAMILY_MASK[family_of(rel)]
        linked = idx.reach(h, self.max_len, fam_mask)
        chosen: list[int] = []

        def accept(ids: list[str]) -> None:
            for zid in ids:
                z = idx.pos.get(zid)
                if (z is None or len(chosen) >= 3 or zid in exclude or not self.allowed(z)
                        or idx.level[z] != idx.level[h] or linked.get(z, 0) & fam_mask):
                    continue
                exclude.add(zid)
                chosen.append(z)

        accept(self.negatives.sample(idx.ids[h], rel, idx.ids[t], k=3, exclude=set(exclude), rng=self.rng))
        if len(chosen) < 3 and self.negatives is not self.fallback:
            accept(self.fallback.sample(idx.ids[h], rel, idx.ids[t], k=3 - len(chosen), exclude=set(exclude),
                                        rng=self.rng))
        return chosen if len(chosen) == 3 else None

    def _cec(self, qid, comp, h, t, rel, path, context) -> list[GeneratedQuestion]:
        negs = self._negatives(comp, h, t, rel)
        if negs is None:
            return []
        choices = [t, *negs]
        self.rng.shuffle(choices)
        namer = self._namer([h, t, *negs, *(x for tr in context for x in (tr[0], tr[2]))])
        row: dict[str, Any] = {
            "id": qid, "e0": namer.name(h), "rel": rel, "e1": namer.name(t),
            "negative_chosen": [namer.name(z) for z in negs],
            "context": verbalise(namer.triples(context)), "context_tpl": [list(x) for x in namer.triples(context)],
            "question": CEC_QUESTIONS[rel].format(e0=namer.name(h)),
            "choices": [namer.name(c) for c in choices],
        }
        return [self._finish(row, namer, context + [(h, rel, t)])]

    # -- CRR -------------------------------------------------------------------------------
    def _crr(self, qid, comp, h, t, rel, path, context) -> list[GeneratedQuestion]:
        mask = self.idx.reach(h, self.max_len).get(t, 0)
        fam = family_of(rel)
        if mask & _FAMILY_MASK[fam] != 1 << CODE[rel]:
            return []  # both directions of the family hold somewhere: no single right answer
        namer = self._namer([h, t, *(x for tr in context for x in (tr[0], tr[2]))])
        out = [self._crr_row(qid, h, t, rel, fam, context, [(h, rel, t)], namer)]
        if self.rng.random() < self.vague_prob:
            vague = self._vague(qid, comp, h, context)
            if vague is not None:
                out.append(vague)
        return out

    def _vague(self, qid, comp, h, context) -> GeneratedQuestion | None:
        """EV²'s Vague item: ``e0`` with an event unrelated to it (the CEC-negative kind: no
        relation of any family by a walk of at most ``max_len``), asked within the family of
        an edge ``e0`` really has outside the context (that edge joins ``event_relation``, as
        in the release)."""
        idx = self.idx
        shown = {(a, b) for a, _, b in context} | {(b, a) for a, _, b in context}
        edges = sorted({(nb, r) for nb, r in idx.neighbours(h) if (h, nb) not in shown}, key=lambda e: (e[0], CODE[e[1]]))
        if not edges:
            return None
        x, r = edges[self.rng.randrange(len(edges))]
        z = self._unrelated(comp, h)
        if z is None:
            return None
        namer = self._namer([h, z, *(n for tr in context for n in (tr[0], tr[2]))])
        return self._crr_row(qid, h, z, VAGUE, family_of(r), context, [(h, r, x)], namer)

    def _unrelated(self, comp: Component, h: int) -> int | None:
        """A seeded random event of ``h``'s level, outside the component, with no induced relation to ``h``."""
        idx = self.idx
        linked = idx.reach(h, self.max_len)
        pool = self.fallback._pool_for(idx.level[h])
        inside = set(comp.nodes)
        for _ in range(self.fallback.tries * 3):
            if not pool:
                return None
            z = pool[self.rng.randrange(len(pool))]
            if z != h and z not in inside and self.allowed(z) and idx.level[z] == idx.level[h] and not linked.get(z):
                return z
        return None

    def _crr_row(self, qid, h, t, rel, fam, context, extra, namer) -> GeneratedQuestion:
        a, b, _ = CRR_CHOICES[fam]
        e0, e1 = namer.name(h), namer.name(t)
        row: dict[str, Any] = {
            "id": qid, "e0": e0, "rel": rel, "e1": e1,
            "context": verbalise(namer.triples(context)), "context_tpl": [list(x) for x in namer.triples(context)],
            "question": CRR_QUESTION.format(e0=e0, a=a, b=b, e1=e1),
            "choices": list(CRR_CHOICES[fam]),
        }
        return self._finish(row, namer, context + extra)

    # -- names -----------------------------------------------------------------------------
    def _namer(self, nodes: list[int]) -> _Namer:
        return _Namer(self.idx, self.level, list(dict.fromkeys(nodes)), self.rng)

    def _finish(self, row: dict[str, Any], namer: _Namer, schema_triples: list[tuple[int, str, int]]) -> GeneratedQuestion:
        if self.level == "instance":
            row["instances"] = {namer.name(p): self.idx.text[namer.instance[p]] for p in namer.order}
            row["event_type"] = {namer.name(p): self.idx.name(p) for p in namer.order}
            row["event_relation"] = [[self.idx.name(h), r, self.idx.name(t)] for h, r, t in dict.fromkeys(schema_triples)]
        names = {namer.name(p): namer.store_id(p) for p in namer.order}
        ctx_ids: dict[str, None] = {}
        for h, _, t in row["context_tpl"]:
            ctx_ids.setdefault(names[h])
            ctx_ids.setdefault(names[t])
        return GeneratedQuestion(row, self.task, self.level, names, list(ctx_ids))


class _Namer:
    """Names of the events in one question: EV² type names, or ``eventN`` instance ids."""

    def __init__(self, idx: EventIndex, level: str, order: list[int], rng: random.Random) -> None:
        self.idx, self.level, self.order = idx, level, order
        self.instance: dict[int, int] = {}
        self._names: dict[int, str] = {}
        if level == "instance":
            numbers = rng.sample(range(1, 101), len(order)) if len(order) <= 100 else range(1, len(order) + 1)
            for p, k in zip(order, numbers, strict=False):
                self.instance[p] = rng.choice(idx.instances_of[p])
                self._names[p] = f"event{k}"
        else:
            for p in order:
                self._names[p] = idx.name(p)

    def name(self, p: int) -> str:
        return self._names[p]

    def store_id(self, p: int) -> str:
        return self.idx.ids[self.instance[p] if self.level == "instance" else p]

    def triples(self, triples: list[tuple[int, str, int]]) -> list[tuple[str, str, str]]:
        return [(self._names[h], r, self._names[t]) for h, r, t in triples]


def check_store_can_generate(store: GraphStore, level: str) -> None:
    """Raise a :class:`QuestionError` that says why, before any work, when the store cannot
    give questions of ``level``: no EV² event relations (an ASER store ingested without
    ``--map-events``), or, for the instance level, no instance events at all."""
    from eventkg.queries.columnar import edge_counts
    from eventkg.queries.negatives import NegativesError, require_event_relations

    try:
        require_event_relations(store, "temporal")  # BEFORE, CAUSES or HAS_SUBEVENT: any one will do
    except NegativesError as exc:
        raise QuestionError(str(exc)) from None
    if level == "instance" and not edge_counts(store, ["HAS_TYPE"])["HAS_TYPE"]:
        raise QuestionError(
            f"store {store.url} has no instance-level events (instance -HAS_TYPE-> type): ASER and EECKG "
            "hold schema-level events only; ingest EV² instance files (`eventkg ingest ev2 ...`) or ask "
            "for --level schema"
        )


def generate_questions(
    source: GraphStore | EventIndex | Any,
    task: str,
    level: str = "schema",
    n: int = 100,
    seed: int = 0,
    *,
    negatives: NegativeSource | None = None,
    size: int = 3,
    max_len: int = 4,
    pairs: int = 3,
    vague_prob: float = 0.5,
    require_context: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[GeneratedQuestion]:
    """Up to ``n`` questions with their store ids (see the module docstring for the rules).

    Fewer than ``n`` come back only when the graph runs out of components.
    """
    task = task.upper()
    if task not in TASKS:
        raise QuestionError(f"unknown task {task!r}; expected CEC or CRR")
    if level not in LEVELS:
        raise QuestionError(f"unknown level {level!r}; expected schema or instance")
    if n < 0:
        raise QuestionError("n must not be negative")
    idx = as_index(source)
    if level == "schema":
        pool = [p for p, lvl in enumerate(idx.level) if lvl == "schema"]
    else:
        pool = sorted(p for p in idx.instances_of if idx.level[p] == "schema")
    allowed = set(pool).__contains__
    fallback = GraphNegativeSampler(idx, pool=pool, max_len=max_len)
    rng = random.Random(f"eventkg-questions-{seed}")
    builder = _Builder(idx, task, level, rng, negatives or fallback, fallback, allowed, max_len=max_len,
                       pairs=pairs, vague_prob=vague_prob, require_context=require_context)
    out: list[GeneratedQuestion] = []
    # the loop makes many short-lived tuples and no cycles; with a million-edge index alive,
    # cyclic-GC passes over it would cost more than the generation itself
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        for comp in iter_components(idx, size, seed, allowed=allowed):
            for q in builder.questions(comp):
                out.append(q)
                if progress:
                    progress(1)
                if len(out) >= n:
                    return out
        return out
    finally:
        if gc_was_on:
            gc.enable()


def generate(
    store_or_graph: GraphStore | EventIndex | Any,
    task: str,
    level: str = "schema",
    n: int = 100,
    seed: int = 0,
    negatives: NegativeSource | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """EV² JSON-lines rows for ``n`` generated ``task`` questions at ``level`` (deterministic for a seed)."""
    return [q.row for q in generate_questions(store_or_graph, task, level, n, seed, negatives=negatives, **options)]


def write_jsonl(rows: Sequence[Mapping[str, Any]], path: str) -> None:
    """Rows as EV² JSON lines (UTF-8, one object per line)."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def store_questions(store: GraphStore, questions: Sequence[GeneratedQuestion], seed: int) -> WriteResult:
    """Write questions as ``Question`` nodes (origin generated) linked like the EV² loader links them."""
    batch = Batch()
    for q in questions:
        row = q.row
        family = "|".join(row["choices"]) if q.task == "CRR" else ""
        qnode = node_id("Question", f"{SOURCE}|{seed}|{q.task}|{q.level}|{row['id']}|{row['rel']}|{family}")
        batch.add_node("Question", {
            "id": qnode, "sources": [SOURCE], "qid": row["id"], "task": q.task, "level": q.level, "rel": row["rel"],
            "origin": "generated", "question": row["question"], "e0": row["e0"], "e1": row["e1"],
            "choices": list(row["choices"]), "answer": q.answer, "context": row["context"],
            "context_tpl": json.dumps(row["context_tpl"], ensure_ascii=False),
            "payload": json.dumps(row, ensure_ascii=False),
        })
        batch.add_edge("ASKS", {"src": qnode, "dst": q.names[row["e0"]], "sources": [SOURCE], "role": "e0"})
        batch.add_edge("ASKS", {"src": qnode, "dst": q.names[row["e1"]], "sources": [SOURCE], "role": "e1"})
        if q.task == "CEC":
            for i, c in enumerate(row["choices"]):
                batch.add_edge("HAS_CHOICE", {"src": qnode, "dst": q.names[c], "sources": [SOURCE], "order": i,
                                              "correct": int(c == row["e1"])})
        for i, eid in enumerate(q.context_ids):
            batch.add_edge("HAS_CONTEXT", {"src": qnode, "dst": eid, "sources": [SOURCE], "order": i})
    return store.write_batch(batch)


# --- the graph's own reading (a construction check, not the kg-oracle baseline) ---------------


def _row_position(idx: EventIndex, row: Mapping[str, Any], name: str) -> int:
    types = row.get("event_type")
    if types is not None or "instances" in row:
        if not types or name not in types:
            raise QuestionError(f"question {row.get('id')!r}: instance {name!r} has no event_type")
        return idx.lookup(types[name], "schema")
    return idx.lookup(name, "schema")


def kg_oracle_answer(store_or_graph: GraphStore | EventIndex | Any, question_row: Mapping[str, Any],
                     max_len: int = 4) -> str | None:
    """Answer a CEC or CRR row from the graph alone, by Table 1 induction over walks of <= ``max_len``.

    CEC: the one choice the asked relation reaches from ``e0``; CRR: the one family member
    holding from ``e0`` to ``e1``, ``Vague`` when none does. Instance rows are answered on
    their event types (``event_type``). Returns ``None`` when the graph does not single out
    one answer. Pass an :class:`EventIndex` when answering many rows from a store.

    It reads every edge, the row's own gold edges included, so it checks that a generated
    question follows from its graph; it is not a baseline. The ``kg-oracle`` baseline, which
    hides each question's answer, is :class:`eventkg.queries.oracle.EV2Oracle`.
    """
    idx = as_index(store_or_graph)
    row = question_row
    choices = list(row.get("choices") or [])
    rel = row.get("rel")
    e0 = _row_position(idx, row, row["e0"])
    fam = next((f for f, c in CRR_CHOICES.items() if c == choices), None)
    if fam is not None:
        return answer_by_induction(idx, e0, max_len, family=fam, e1=_row_position(idx, row, row["e1"]))
    if rel not in CODE:
        raise QuestionError(f"question {row.get('id')!r}: CEC relation {rel!r} is not an event relation")
    candidates = []
    for c in choices:
        try:
            candidates.append((c, _row_position(idx, row, c)))
        except (UnknownEventError, QuestionError):
            continue
    return answer_by_induction(idx, e0, max_len, rel=rel, candidates=candidates)


class KGOracle:
    """:func:`kg_oracle_answer` with the graph fetched once (a construction check; reads gold)."""

    def __init__(self, store_or_graph: GraphStore | EventIndex | Any, max_len: int = 4) -> None:
        self.index = as_index(store_or_graph)
        self.max_len = max_len

    def answer(self, question_row: Mapping[str, Any]) -> str | None:
        try:
            return kg_oracle_answer(self.index, question_row, self.max_len)
        except UnknownEventError:
            return None
