"""What the CEC and the CRR builder share: DAG paths of a component, the Table 1 relation a pair is asked
by, instance stories, names, and the base :class:`QuestionBuilder`.

One builder per run (:class:`~eventkg.queries.questions.cec.CecBuilder` or
:class:`~eventkg.queries.questions.crr.CrrBuilder`) turns Algorithm 1 components
(:mod:`eventkg.queries.graph.components`) into :class:`Draft` questions by the rules of
:mod:`eventkg.queries.questions.generate`: every choice made, every random number drawn, and the events
the row will show listed, but no text read yet. The caller reads the texts of a batch of drafts at once
(:meth:`eventkg.queries.graph.event_texts.StoreTexts.prefetch`) and then makes their
:class:`~eventkg.queries.questions.rows.GeneratedQuestion` rows. The base owns what both tasks do alike:
the pairs of a component, the skip counts, the (event, relation, answer) asked once, the matching keys
of the file (:meth:`QuestionBuilder.match_infile`), the shown instance of a type and the row's names.
Everything asked of the whole graph goes through one
:class:`~eventkg.queries.induction.vetting.MeetInTheMiddle`, loaded once per head event.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventkg.graphstore.model import INVERSE
from eventkg.queries.graph.components import Component
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.induction.induce import induce
from eventkg.queries.induction.table1 import CODE
from eventkg.queries.induction.vetting import MeetInTheMiddle
from eventkg.queries.questions.balance import (
    SIMILARITY_BAND,
    LazyVectors,
    Named,
    UseBalance,
    degree_band,
    group_by_key,
    infile_degree,
    infile_key,
    infile_named,
    linked_population,
    match_key,
    named_key,
)
from eventkg.queries.questions.rows import GeneratedQuestion
from eventkg.queries.questions.spec import QuestionSpec

Triple = tuple[int, str, int]
#: draws per negative among preferred texts (fresh, then never gold) before the next kind is drawn
PREFERRED_TRIES = 8


def dag_paths(comp: Component, max_len: int) -> dict[int, dict[int, list[list[Triple]]]]:
    """head -> tail -> DAG paths (as triples) of at most max_len edges, shortest first."""
    succ: dict[int, list[Triple]] = {}
    for t in comp.triples:
        succ.setdefault(t[0], []).append(t)
    out: dict[int, dict[int, list[list[Triple]]]] = {}
    for h in comp.nodes:
        found: dict[int, list[list[Triple]]] = {}
        stack: list[list[Triple]] = [[t] for t in succ.get(h, [])]
        while stack:
            path = stack.pop()
            found.setdefault(path[-1][2], []).append(path)
            if len(path) < max_len:
                stack.extend(path + [t] for t in succ.get(path[-1][2], []))
        for paths in found.values():
            paths.sort(key=lambda p: (len(p), [CODE[r] for _, r, _ in p]))
        out[h] = found
    return out


def _reach(comp: Component, node: int, forward: bool) -> set[int]:
    """The events ``node`` reaches in the component DAG along its edges (``forward``) or against them."""
    step: dict[int, list[int]] = {}
    for h, _, t in comp.triples:
        a, b = (h, t) if forward else (t, h)
        step.setdefault(a, []).append(b)
    seen: set[int] = set()
    stack = [node]
    while stack:
        for x in step.get(stack.pop(), []):
            if x not in seen:
                seen.add(x)
                stack.append(x)
    return seen


def ancestors(comp: Component, node: int) -> set[int]:
    """The events that reach ``node`` in the component DAG."""
    return _reach(comp, node, forward=False)


def descendants(comp: Component, node: int) -> set[int]:
    """The events ``node`` reaches in the component DAG."""
    return _reach(comp, node, forward=True)


def stored_orientation(triples: Iterable[Triple], direction: str) -> list[Triple]:
    """``triples`` of a component as the store holds them: a backward copy's triples turned back (the
    same facts, each stated by its stored relation, whichever copy the question was drawn from)."""
    if direction == "forward":
        return list(triples)
    return [(t, INVERSE[r], h) for h, r, t in triples]



def path_relation(paths: list[list[Triple]]) -> tuple[str | None, list[Triple]]:
    """The first (shortest) path Table 1 induces something for, and that relation."""
    for p in paths:  # shortest first, so a direct edge wins
        rel = induce([r for _, r, _ in p])
        if rel is not None:
            return rel, p
    return None, []



def first_ask(asked: set[tuple[int, str, int]], key: tuple[int, str, int], repeat: bool) -> bool:
    """Whether the question of ``key`` (event, relation, answer) may be asked: the first time it comes, or
    every time with ``repeat``; the key is then counted as asked."""
    if not repeat and key in asked:
        return False
    asked.add(key)
    return True


def stories(csr: EventCSR) -> np.ndarray:
    """Each instance event's story, -1 for schema events: its connected component among the relation
    edges between instance events (the EV² loader links one question's instances, and only those)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n, inst = len(csr), csr.level == 1
    src = np.repeat(np.arange(n), np.diff(csr.indptr))
    keep = inst[src] & inst[csr.nbr]
    graph = coo_matrix((np.ones(int(keep.sum()), dtype=np.int8), (src[keep], csr.nbr[keep])), shape=(n, n))
    return np.where(inst, connected_components(graph.tocsr(), directed=False)[1], -1)


def story_instances(csr: EventCSR, story: np.ndarray, together: Sequence[int], rng: random.Random) -> dict[int, int] | None:
    """An instance of each type of ``together``, all of one story (seeded among the stories that hold
    them all); None when no story does."""
    per = {p: csr.instances(p) for p in together}
    first = min(together, key=lambda p: len(per[p]))
    candidates = sorted({int(story[i]) for i in per[first]})
    rng.shuffle(candidates)
    for s in candidates:
        got: dict[int, int] = {}
        for p in together:
            here = [i for i in per[p] if story[i] == s]
            if not here:
                break
            got[p] = rng.choice(here)
        else:
            return got
    return None


@dataclass
class Draft:
    """One question with every choice made: ``make()`` writes its row once the texts of
    ``shown`` (the events the row names) can be read."""

    shown: list[int]
    make: Callable[[], GeneratedQuestion]


class QuestionBuilder:
    """What the CEC and the CRR builder share; holds the graph, the vetting search and the options of one run
    (``spec``: :class:`~eventkg.queries.questions.spec.QuestionSpec`). A subclass says how one pair of a
    component becomes questions (:meth:`_pair`)."""

    def __init__(self, csr: EventCSR, spec: QuestionSpec, rng: random.Random, pool: np.ndarray, *,
                 tries: int = 64) -> None:
        from eventkg.queries.retrieval.subgraphs import verbalise  # its module imports scikit-learn: load on use

        self.csr, self.task, self.level, self.rng = csr, spec.task.upper(), spec.level, rng
        self.pool, self.allowed = pool, np.zeros(len(csr), dtype=bool)
        self.allowed[pool] = True
        self.max_len, self.pairs, self.vague_prob = spec.max_len, spec.pairs, spec.vague_prob
        self.require_context, self.repeat = spec.require_context, spec.repeat
        self.tries, self.verbalise = tries, verbalise
        self.vet = MeetInTheMiddle(csr, self.max_len)
        # negatives come from the population answers come from (events with relations), drawn
        # within the answer's degree band, so that no degree or in-file link count tells them apart
        self.band = degree_band(np.diff(csr.indptr))
        self.linked = linked_population(pool, self.band)
        self.key = self.band.astype(np.int32)  # the store band until match_infile adds the file's degree
        self.by_key = group_by_key(self.linked, self.key)
        self.named = np.zeros(len(csr), dtype=np.int32)  # how often the file names each event (match_infile)
        self.asked: set[tuple[int, str, int]] = set()  # (event, relation, answer) already asked
        self.vectors: LazyVectors | None = None  # see use_similarity
        self.preset: dict[int, int] = {}  # this question's shown instance per type, drawn for its similarity
        self.uses = UseBalance(len(csr))
        self.width = SIMILARITY_BAND
        self.story = stories(csr) if self.level == "instance" and spec.one_story else None
        self.skipped: dict[str, int] = {}  # why a drafted question was skipped -> how many

    def skip(self, why: str) -> None:
        """Count a question left out, by reason (never a silent fallback)."""
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def first_ask(self, key: tuple[int, str, int]) -> bool:
        """Whether ``key`` may be asked (:func:`first_ask`); a repeat is counted as skipped."""
        if first_ask(self.asked, key, self.repeat):
            return True
        self.skip("(event, relation, answer) already asked")
        return False

    # -- pairs -----------------------------------------------------------------------------
    def questions(self, comp: Component) -> Iterator[Any]:
        """The drafted questions of ``comp``: its (head, tail) pairs in seeded order, up to ``pairs`` that
        give a question (:meth:`_pair`)."""
        dag = dag_paths(comp, self.max_len)
        candidates = [(h, t) for h in comp.nodes for t in sorted(dag[h])]
        self.rng.shuffle(candidates)
        made = 0
        for h, t in candidates:
            if made >= self.pairs:
                break
            built = self._pair(comp, made, h, t, dag[h][t])
            if built:
                made += 1
                yield from built

    def _pair(self, comp: Component, made: int, h: int, t: int, paths: list[list[Triple]]) -> list[Any]:
        """The drafts of the pair ``(h, t)`` of ``comp`` (``paths``: its DAG paths, shortest first; ``made``:
        the pairs of ``comp`` that gave questions so far); empty when it gives none."""
        raise NotImplementedError

    def match_infile(self, pending: Sequence[Named]) -> None:
        """Match negatives (CRR: Vague partners) to answers in the file too: each event's key becomes
        (in-file degree, exact below :data:`~eventkg.queries.questions.balance.EXACT_INFILE` and by band
        above; store degree band) (:func:`~eventkg.queries.questions.balance.match_key`), the in-file degree
        counted over the contexts of ``pending``, so that negatives come from the population answers come
        from (named in the file's contexts as often, neither more nor less); the answers' gold uses are
        counted."""
        infile = infile_key(infile_degree(len(self.csr), (p.context for p in pending)))
        self.named = named_key(infile_named(len(self.csr), pending))
        self.uses.set_gold([p.t for p in pending])
        self.key = match_key(infile, self.band)
        self.by_key = group_by_key(self.linked, self.key)

    def use_similarity(self, vectors: LazyVectors, width: float = SIMILARITY_BAND) -> None:
        """Match negatives in similarity too: each one's cosine to the query (``vectors``: the shown
        texts, encoded on first use) within ``width`` of the answer's, below or above it at random."""
        self.vectors, self.width = vectors, width

    def shown_text(self, p: int) -> int:
        """The position whose text shows ``p`` in this question: itself, or (instance level) one of its
        instances, drawn once per question (:attr:`preset`)."""
        if self.level != "instance":
            return p
        if p not in self.preset:
            shown = self.csr.instances(p)
            if not shown:  # a type no question can show (a Vague item's related partner): its name
                return p
            self.preset[p] = self.rng.choice(shown)
        return self.preset[p]


    # -- names -----------------------------------------------------------------------------
    def _context(self, namer: Namer, context: list[Triple]) -> dict[str, Any]:
        named = namer.triples(context)
        return {"context": self.verbalise(named), "context_tpl": [list(x) for x in named]}

    def _namer(self, nodes: list[int], together: Sequence[int]) -> Namer | None:
        """The names of ``nodes``; at instance level those of ``together`` (the query, the answer, the
        context) shown by instances of one story, as in EV²; None (counted) when no story holds them all."""
        shown: dict[int, int] = {}
        if self.story is not None:
            got = story_instances(self.csr, self.story, list(dict.fromkeys(together)), self.rng)
            if got is None:
                self.skip("no story holds every event of the question")
                return None
            shown = got
        elif self.level == "instance":
            shown = dict(self.preset)  # the instances the similarity was matched on
        return Namer(self.csr, self.level, list(dict.fromkeys(nodes)), self.rng, shown)

    def _finish(self, row: dict[str, Any], namer: Namer, schema_triples: list[Triple]) -> GeneratedQuestion:
        csr = self.csr
        if self.level == "instance":
            row["instances"] = {namer.name(p): csr.text(namer.instance[p]) for p in namer.order}
            row["event_type"] = {namer.name(p): namer.type_name(p) for p in namer.order}
            row["event_relation"] = [[csr.name(h), r, csr.name(t)] for h, r, t in dict.fromkeys(schema_triples)]
        names = {namer.name(p): namer.store_id(p) for p in namer.order}
        ctx_ids: dict[str, None] = {}
        for h, _, t in row["context_tpl"]:
            ctx_ids.setdefault(names[h])
            ctx_ids.setdefault(names[t])
        return GeneratedQuestion(row, self.task, self.level, names, list(ctx_ids))


class Namer:
    """Names of the events in one question: EV² type names, or ``eventN`` instance ids.

    The random draws (instance numbers and shown instances) are made when it is built; the
    texts are read only when a name is asked for."""

    def __init__(self, csr: EventCSR, level: str, order: list[int], rng: random.Random,
                 shown: dict[int, int] | None = None) -> None:
        self.csr, self.level, self.order = csr, level, order
        self.instance: dict[int, int] = {}
        self._numbers: dict[int, str] = {}
        if level == "instance":
            numbers = rng.sample(range(1, 101), len(order)) if len(order) <= 100 else range(1, len(order) + 1)
            for p, k in zip(order, numbers, strict=False):
                self.instance[p] = shown[p] if shown and p in shown else rng.choice(csr.instances(p))
                self._numbers[p] = f"event{k}"

    def shown(self) -> list[int]:
        """The events whose texts the names and the row read."""
        return [*self.order, *self.instance.values()]

    def name(self, p: int) -> str:
        return self._numbers[p] if self.level == "instance" else self.csr.name(p)

    def type_name(self, p: int) -> str:
        return self.csr.name(p)

    def store_id(self, p: int) -> str:
        return self.csr.ids[self.instance[p] if self.level == "instance" else p]

    def triples(self, triples: list[Triple]) -> list[tuple[str, str, str]]:
        return [(self.name(h), r, self.name(t)) for h, r, t in triples]
