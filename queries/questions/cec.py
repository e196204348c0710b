"""CEC drafting: the answer's question, kept apart from the other questions' names, and its three negatives
matched to the answer (:class:`CecBuilder`).

A CEC question is drafted as a :class:`Pending` (query, answer, context) for every question of the file
first; :func:`answers_apart` keeps the answers out of the other questions' names, the file's matching keys
are counted (:meth:`~eventkg.queries.questions.build.QuestionBuilder.match_infile`), and only then are the
negatives drawn (:meth:`CecBuilder.negatives_for`): of the answer's key, not linked to the query by the
asked family, named as often, fresh texts first, and with similarity matching within the band of the
answer's cosine to the query (:mod:`eventkg.queries.questions.balance`). The answer's position is dealt
from a shuffled deck (:func:`deal_position`), so every position holds the answer equally often.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventkg.graphstore.model import family_of
from eventkg.queries.graph.components import Component
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.negatives.unlinked import FAMILY_MASK, draw_unlinked
from eventkg.queries.questions.balance import BAND_STEPS, band_tries, named_first, rank_split
from eventkg.queries.questions.build import (
    PREFERRED_TRIES,
    Draft,
    Namer,
    QuestionBuilder,
    Triple,
    ancestors,
    path_relation,
)
from eventkg.queries.questions.rows import CEC_QUESTIONS, GeneratedQuestion, NegativeSource
from eventkg.queries.questions.spec import QuestionSpec

#: choices of a CEC question: the answer and three negatives
CHOICES = 4


@dataclass
class Pending:
    """A CEC question before its negatives, which are drawn once every question's context is known."""

    qid: str
    nodes: list[int]
    h: int
    t: int
    rel: str
    context: list[Triple]


def answers_apart(pending: Iterable[Pending], want: int) -> list[Pending]:
    """Up to ``want`` of ``pending``, first those whose answer no other kept question names (as its
    queried event or in its context) and whose names hold no other kept question's answer.

    Questions drafted around one event name each other's answers: in a chain ``a -> b -> c`` the
    forward copy asks ``(b, c)`` with ``a`` in its context and the backward copy ``(b, a)`` with ``c`` in
    its, so an answer is named by its siblings while a negative drawn from a large graph is named by
    none, and "the choice the file names most" picks the answer. Kept apart, every answer is named by
    no other question and its negatives are drawn among events named as rarely. The questions are kept
    aside: where the graph offers fewer than ``want`` questions kept apart, the first ``want`` drafted come
    back as drafted (a small graph, whose file names most of its events, has named non-answers to match
    on, and cannot spare the questions)."""
    named: set[int] = set()
    answers: set[int] = set()
    kept: list[Pending] = []
    drafted: list[Pending] = []
    for p in pending:
        if len(drafted) < want:
            drafted.append(p)
        names = {p.h, *(x for h, _, t in p.context for x in (h, t))}
        if p.t in named or p.t in answers or not answers.isdisjoint(names):
            continue
        kept.append(p)
        named |= names
        answers.add(p.t)
        if len(kept) >= want:
            return kept
    return drafted


def deal_position(deck: list[int], k: int, rng: random.Random) -> int:
    """The next answer position of ``k`` from ``deck`` (refilled when empty): each position once per block
    of ``k``, each block in seeded order, so every position holds the answer as often (within one)."""
    if not deck:
        deck.extend(range(k))
        rng.shuffle(deck)
    return deck.pop()


class CecBuilder(QuestionBuilder):
    """Drafts CEC questions: a pair with a context of the head's ancestors, then its negatives (``negatives``:
    a sampler whose proposals are vetted as the drawn ones are; None: drawn from the graph only)."""

    def __init__(self, csr: EventCSR, spec: QuestionSpec, rng: random.Random, pool: np.ndarray,
                 negatives: NegativeSource | None = None, *, tries: int = 64) -> None:
        super().__init__(csr, spec, rng, pool, tries=tries)
        self.negatives = negatives
        self.positions: list[int] = []  # answer positions still to hand out (exact balance)

    def _pair(self, comp: Component, made: int, h: int, t: int, paths: list[list[Triple]]) -> list[Pending]:
        """The pair as a :class:`Pending`, its context every component triple among ``h`` and its ancestors
        (none: no question when a context is required); none when Table 1 induces no relation over its
        paths or the key was asked before."""
        anc = ancestors(comp, h)
        if self.require_context and not anc:
            return []
        rel, _path = path_relation(paths)
        if rel is None:
            return []
        keep = anc | {h}
        context = [tr for tr in comp.triples if tr[0] in keep and tr[2] in keep]
        if not self.first_ask((h, rel, t)):
            return []
        return [Pending(f"{comp.cid}-{made}", list(comp.nodes), h, t, rel, context)]

    def negatives_for(self, nodes: list[int], h: int, t: int, rel: str) -> list[int] | None:
        """Three vetted negatives of the answer's key (degree band; after
        :meth:`~eventkg.queries.questions.build.QuestionBuilder.match_infile`, in the store and in the file),
        texts kept near three negative uses per gold use; with similarity, as many below the answer's cosine
        to the query as above on average; None (counted) when too few."""
        mask = FAMILY_MASK[family_of(rel)]
        same = self.by_key.get(int(self.key[t]))
        if same is None:
            self.skip("no negative of the answer's degree")
            return None
        self.vet.load(h, mask)
        proposed = self._proposed(nodes, h, t, rel)
        if self.vectors is not None:
            chosen = self._similar_negatives(h, t, same, proposed, mask, set(nodes))
        else:
            skip = set(nodes) | set(proposed)
            chosen = proposed + draw_unlinked(self.vet, same, self.rng, 3 - len(proposed), mask, skip,
                                              PREFERRED_TRIES, accept=lambda z: self.named[z] == self.named[t]
                                              and self.uses.room(z))
            if len(chosen) < 3:
                chosen += draw_unlinked(self.vet, same, self.rng, 3 - len(chosen), mask, skip | set(chosen),
                                        PREFERRED_TRIES, accept=self.uses.room)
            if len(chosen) < 3:  # no fresh text left in the key: one never gold, else any, counted
                self.skip("negatives beyond their share of uses (drawn all the same)")
                for accept, tries in ((self.uses.never_gold, PREFERRED_TRIES), (None, self.tries)):
                    chosen += draw_unlinked(self.vet, same, self.rng, 3 - len(chosen), mask,
                                            set(nodes) | set(chosen), tries, accept=accept)
        if len(chosen) < 3:
            self.skip("no negative of the answer's degree" + (" and similarity" if self.vectors is not None else ""))
            return None
        self.uses.used(chosen)
        return chosen

    def _proposed(self, nodes: list[int], h: int, t: int, rel: str) -> list[int]:
        """The sampler's negatives (if any) that are of the answer's key and level, not linked, with room."""
        if self.negatives is None:
            return []
        csr, skip = self.csr, set(nodes)
        ids = self.negatives.sample(csr.ids[h], rel, csr.ids[t], k=3, exclude={csr.ids[p] for p in nodes}, rng=self.rng)
        out = []
        for z in (csr.position(zid) for zid in ids):
            if (z is not None and z not in skip and self.allowed[z] and csr.level[z] == csr.level[h]
                    and self.key[z] == self.key[t] and self.uses.room(z)):
                skip.add(z)
                out.append(z)
        if not out:
            return []
        linked = self.vet.linked(np.array(out), FAMILY_MASK[family_of(rel)]).tolist()
        return [z for z, bad in zip(out, linked, strict=True) if not bad][:3]

    def _similar_negatives(self, h: int, t: int, same: np.ndarray, proposed: list[int], mask: int,
                           skip: set[int]) -> list[int]:
        """Three unlinked negatives of ``same`` within the band of the answer's cosine to ``h``: a seeded
        number (0-3) below it, the rest above; the sampler's, then those with uses to spare, first."""
        vec = self.vectors
        assert vec is not None
        pool = np.array([z for z in dict.fromkeys([*proposed, *same.tolist()]) if z not in skip], dtype=np.int64)
        cos = vec.cosines(self.shown_text(h), [self.shown_text(int(z)) for z in pool]) if len(pool) else np.zeros(0)
        target = float(vec.cosines(self.shown_text(h), [self.shown_text(t)])[0])
        k_below = rank_split(cos, target, self.width, self.rng)[2]
        # the seeded number below at each width in turn, then (the widest band) the nearest number both sides hold
        for step, k in band_tries(k_below):
            below, above, _ = rank_split(cos, target, step * self.width, self.rng)
            if len(below) < k or len(above) < 3 - k:
                continue
            chosen = (self._first_unlinked(self._ordered(pool[below], t, proposed), k, mask)
                      + self._first_unlinked(self._ordered(pool[above], t, proposed), 3 - k, mask))
            if len(chosen) == 3:
                if k != k_below:
                    self.skip("similarity rank redrawn (too few negatives on one side; made all the same)")
                elif step != BAND_STEPS[0]:
                    self.skip(f"similarity band widened to {step * self.width:.2f} (made all the same)")
                return chosen
        return []

    def _ordered(self, cands: np.ndarray, t: int, first: list[int]) -> list[int]:
        """``cands`` in seeded order, the sampler's first, then those named as often as ``t``, then those
        with uses to spare."""
        out = cands.tolist()
        self.rng.shuffle(out)
        return named_first(out, first, lambda z: self.named[z] == self.named[t], self.uses.room)

    def _first_unlinked(self, cands: list[int], k: int, mask: int) -> list[int]:
        """The first ``k`` of ``cands`` no walk links to the loaded query (vetted a few at a time)."""
        out: list[int] = []
        if k <= 0:
            return out
        for i in range(0, min(len(cands), self.tries * max(k, 1)), 8):
            batch = cands[i:i + 8]
            out += [z for z, bad in zip(batch, self.vet.linked(np.array(batch), mask).tolist(), strict=True) if not bad]
            if len(out) >= k:
                break
        return out[:k]

    def cec_draft(self, p: Pending) -> Draft | None:
        """The question of ``p`` with its negatives drawn; None (counted) when none match the answer."""
        qid, h, t, rel, context = p.qid, p.h, p.t, p.rel, p.context
        self.preset = {}
        negs = self.negatives_for(p.nodes, h, t, rel)
        if negs is None:
            return None
        ctx = [x for tr in context for x in (tr[0], tr[2])]
        namer = self._namer([h, t, *negs, *ctx], [h, t, *ctx])
        if namer is None:
            return None
        choices = list(negs)
        self.rng.shuffle(choices)
        choices.insert(deal_position(self.positions, CHOICES, self.rng), t)
        return Draft(namer.shown(), lambda: self._cec_row(qid, h, t, rel, context, negs, choices, namer))

    def _cec_row(self, qid: str, h: int, t: int, rel: str, context: list[Triple], negs: list[int], choices: list[int],
                 namer: Namer) -> GeneratedQuestion:
        row: dict[str, Any] = {
            "id": qid, "e0": namer.name(h), "rel": rel, "e1": namer.name(t),
            "negative_chosen": [namer.name(z) for z in negs],
            **self._context(namer, context),
            "question": CEC_QUESTIONS[rel].format(e0=namer.name(h)),
            "choices": [namer.name(c) for c in choices],
        }
        return self._finish(row, namer, context + [(h, rel, t)])

