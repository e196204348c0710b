"""CRR drafting: a related pair and a Vague item per pair, their context, the label quotas and the Vague
partner (:class:`CrrBuilder`).

A pair's context is drawn from a seeded side of ``e0`` and stated as stored (:func:`crr_context`), so its
relation words do not follow the copy the pair was drawn from; the pair's own family is asked only where
exactly one member holds over the graph (:func:`one_member_holds`). Pairs are drafted first
(:class:`CrrPending`); once the file's matching keys are counted, each pair's Vague partner is drawn to stand
for its related partner (its key and, with similarity, its cosine to ``e0``), and the labels keep to their
quotas in each (family, context side) cell (:func:`quota_room`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventkg.graphstore.model import EVENT_RELATIONS, FAMILIES, VAGUE, family_of
from eventkg.queries.graph.components import Component
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.induction.table1 import ALL_RELATIONS, CODE
from eventkg.queries.negatives.unlinked import FAMILY_MASK, draw_unlinked
from eventkg.queries.questions.balance import BAND_STEPS, within_band
from eventkg.queries.questions.build import (
    PREFERRED_TRIES,
    Draft,
    Namer,
    QuestionBuilder,
    Triple,
    ancestors,
    descendants,
    path_relation,
    stored_orientation,
)
from eventkg.queries.questions.rows import CRR_CHOICES, CRR_QUESTION, GeneratedQuestion
from eventkg.queries.questions.spec import QuestionSpec

#: a CRR label: the answer's place in EV²'s [a, b, Vague] choices
VAGUE_LABEL = 2


def crr_context(comp: Component, h: int, t: int, downstream: bool) -> tuple[list[Triple], bool]:
    """A CRR question's context and the side of ``h`` it shows, so that neither tells the label.

    The component's triples among ``h`` and its ancestors (``downstream`` False) or its descendants other
    than ``t`` (True), stated by their stored relations. A related pair's label is its copy's direction
    (forward: the family's first member); a context of ancestors stated as drawn would name that
    direction's relation words, and the side ``h`` stands on in it (``h``'s stored causes or its effects)
    would follow the copy too. Drawn from either side and stated as stored, it shows ``h`` upstream
    (the context holds ``h``'s stored successors) as often with one label as with the other, once the
    quotas keep the labels a third each per side (:attr:`CrrPending.cell`).

    Returns:
        The triples, and whether the context holds ``h``'s stored successors (``h`` upstream of it).
    """
    keep = (descendants(comp, h) - {t} if downstream else ancestors(comp, h)) | {h}
    triples = [tr for tr in comp.triples if tr[0] in keep and tr[2] in keep]
    return stored_orientation(triples, comp.direction), downstream == (comp.direction == "forward")


def one_member_holds(induced: int, rel: str) -> bool:
    """Whether ``rel`` is the only member of its family that holds from ``e0`` to ``e1`` (``induced``: the bit
    mask, by relation code, of the family's members some walk induces): a pair is asked within its family
    only then, else both directions hold somewhere and there is no single right answer."""
    return induced == 1 << CODE[rel]


def quota_room(counts: Sequence[int], label: int, vague_prob: float) -> bool:
    """Whether one more question of ``label`` keeps the cell's ``counts`` ([a, b, Vague]) within one of the
    label's quota: Vague's share ``vague_prob / (1 + vague_prob)`` (as one Vague per related pair with that
    probability gives), the two family members half the rest each."""
    vague = vague_prob / (1 + vague_prob)
    share = vague if label == VAGUE_LABEL else (1 - vague) / 2
    return counts[label] < share * (sum(counts) + 1) + 1


def family_entries(codes: np.ndarray, hidden: Sequence[int], mask: int) -> np.ndarray:
    """The offsets in a row of relation ``codes`` whose relation is of the family ``mask`` and whose entry is
    not among the ``hidden`` offsets (the context's): where a Vague item's edge of the asked family is read
    from when random draws miss it."""
    ok = ((1 << codes.astype(np.int64)) & mask) != 0
    ok[np.asarray(hidden, dtype=np.int64)] = False
    return np.flatnonzero(ok)


@dataclass
class CrrPending:
    """A CRR pair before the label quotas are applied: the related question (``draft``, labelled by the
    answer's place in EV²'s [a, b, Vague]; None when it cannot be shown) and a Vague question on ``h``,
    whose partner is drawn once every question's context is known (matched to ``t``, the related
    partner it stands for, as CEC negatives are to the answer)."""

    qid: str
    label: int
    nodes: list[int]
    h: int
    t: int
    fam: str
    context: list[Triple]
    draft: Draft | None
    upstream: bool = False  # the context holds h's stored successors (see crr_context)

    @property
    def cell(self) -> str:
        """The quota cell: the asked family and the side of ``h`` the context shows (labels a third each
        per cell, so that neither the family nor the context's relations tell the label)."""
        return f"{self.fam}/{'up' if self.upstream else 'down'}"

    @property
    def labels(self) -> tuple[int, ...]:
        """The labels this pair can give, in the order they are made."""
        return (self.label, VAGUE_LABEL) if self.draft is not None else (VAGUE_LABEL,)


class CrrBuilder(QuestionBuilder):
    """Drafts CRR questions: a related pair and its Vague item, labels within their quotas."""

    def __init__(self, csr: EventCSR, spec: QuestionSpec, rng: random.Random, pool: np.ndarray, *,
                 tries: int = 64) -> None:
        super().__init__(csr, spec, rng, pool, tries=tries)
        self.partners: dict[int, set[int]] = {}  # e0 -> its Vague partners so far
        self.labels: dict[str, list[int]] = {}  # CRR questions made per quota cell and label: a, b, Vague

    def _pair(self, comp: Component, made: int, h: int, t: int, paths: list[list[Triple]]) -> list[CrrPending]:
        """The pair (:meth:`_crr_sided`); none when Table 1 induces no relation over its paths."""
        rel, _path = path_relation(paths)
        if rel is None:
            return []
        return self._crr_sided(f"{comp.cid}-{made}", comp, h, t, rel)

    def _crr_sided(self, qid: str, comp: Component, h: int, t: int, rel: str) -> list[CrrPending]:
        """The pair with its context drawn from a seeded side of ``h`` (the other when that one is empty;
        none when both are and a context is required): :func:`crr_context`."""
        first = self.rng.random() < 0.5
        for downstream in (first, not first):
            context, upstream = crr_context(comp, h, t, downstream)
            if context or not self.require_context:
                got = self._crr(qid, comp, h, t, rel, context)
                for p in got:
                    p.upstream = upstream
                return got
        return []

    def _crr(self, qid: str, comp: Component, h: int, t: int, rel: str, context: list[Triple]) -> list[CrrPending]:
        """The pair, its labels unchecked (:meth:`crr_drafts` keeps the quotas). Not asked from the other
        end: the context would name ``e1``."""
        fam = family_of(rel)
        self.preset = {}
        self.vet.load(h, FAMILY_MASK[fam])
        if not one_member_holds(self.vet.induced(t, tuple(CODE[r] for r in FAMILIES[fam])), rel):
            return []  # both directions of the family hold somewhere: no single right answer
        if not self.first_ask((h, rel, t)):
            return []
        ctx = [x for tr in context for x in (tr[0], tr[2])]
        namer = self._namer([h, t, *ctx], [h, t, *ctx])
        draft = (Draft(namer.shown(), lambda: self._crr_row(qid, h, t, rel, fam, context, [(h, rel, t)], namer))
                 if namer is not None else None)
        return [CrrPending(qid, FAMILIES[fam].index(rel), list(comp.nodes), h, t, fam, context, draft)]

    def within_quota(self, pending: Sequence[CrrPending]) -> list[CrrPending]:
        """The pairs the label quotas would take a question from, in order, were every Vague partner found
        (a pair twice when both its questions would be taken)."""
        counts: dict[str, list[int]] = {}  # a trial count, apart from the questions made
        kept = []
        for p in pending:
            for label in p.labels:
                if self._room(label, p.cell, counts):
                    self.made(label, p.cell, counts)
                    kept.append(p)
        return kept

    def crr_drafts(self, pending: Iterable[CrrPending]) -> Iterator[Draft]:
        """The questions of ``pending`` in order, each while its label is within its quota (else skipped,
        counted). A pair whose Vague partner cannot be matched gives neither question (skipped, counted):
        leaving its related question alone would keep in the file the related partners no Vague partner
        matches (hubs, mostly), and the graph around ``e1`` would tell the label. The pairs whose labels
        were all over their quota are tried once more after the last, when the other labels have caught up."""
        later: list[CrrPending] = []
        yield from self._crr_pass(pending, later)
        yield from self._crr_pass(later, None)

    def _crr_pass(self, pending: Iterable[CrrPending], later: list[CrrPending] | None) -> Iterator[Draft]:
        """One pass of :meth:`crr_drafts`; the pairs over quota go to ``later`` (else skipped, counted)."""
        for p in pending:
            wanted = [label for label in p.labels if self._room(label, p.cell)]
            if not wanted:
                if later is not None:
                    later.append(p)
                else:
                    self.skip("CRR label over its quota")
                continue
            partner = self._vague_partner(p)
            if partner is None:
                self.skip("CRR pair without a Vague partner of the related partner's degree"
                          + (" and similarity" if self.vectors is not None else ""))
                continue
            if p.label in wanted and p.draft is not None:
                self.made(p.label, p.cell)
                yield p.draft
            if not self._room(VAGUE_LABEL, p.cell):
                self.skip("CRR label over its quota")
            elif (vague := self._vague(p, *partner)) is not None:
                self.made(VAGUE_LABEL, p.cell)
                yield vague

    def _room(self, label: int, cell: str, labels: dict[str, list[int]] | None = None) -> bool:
        """Whether one more question of ``label`` in quota cell ``cell`` (:attr:`CrrPending.cell`: the family
        and the context's side) keeps the cell within the label's quota (:func:`quota_room`): per cell, so
        that neither the asked family (the audit's label prior) nor the context's relations tell the label.
        ``labels``: counts other than the run's."""
        return quota_room((self.labels if labels is None else labels).get(cell, [0, 0, 0]), label, self.vague_prob)

    def made(self, label: int, cell: str, labels: dict[str, list[int]] | None = None) -> None:
        """Count a CRR question of ``label`` in quota cell ``cell`` (in ``labels``, else the run's counts)."""
        (self.labels if labels is None else labels).setdefault(cell, [0, 0, 0])[label] += 1

    def _vague_partner(self, p: CrrPending) -> tuple[int, int, int] | None:
        """``(partner, neighbour, code)`` for EV²'s Vague item on ``p.h``: an event unrelated to ``h`` (the
        CEC-negative kind: no relation of any family by a walk of at most ``max_len``) and an edge of the
        pair's family ``h`` really has outside the context (the family the item asks; the edge joins
        ``event_relation``, as in the release). The partner stands for the related partner
        ``t``: of its key (store degree band; in-file degree after
        :meth:`~eventkg.queries.questions.build.QuestionBuilder.match_infile`) and, with
        similarity, of its cosine to ``h``; preferably a text the file never shows as an answer, used once.
        None when there is none."""
        h = p.h
        edge = self._edge_outside(h, p.context, p.fam)
        same = self.by_key.get(int(self.key[p.t]))
        if edge is None or same is None:
            return None
        self.preset = {}
        self.vet.load(h, ALL_RELATIONS)
        if self.vectors is not None:
            same = self._near_in_similarity(h, p.t, same)
            if same is None:
                return None
        skip = set(p.nodes) | (set() if self.repeat else self.partners.get(h, set()))
        for accept, tries in ((self.uses.room, PREFERRED_TRIES), (self.uses.never_gold, PREFERRED_TRIES),
                              (None, self.tries)):
            got = draw_unlinked(self.vet, same, self.rng, 1, ALL_RELATIONS, set(skip), tries, accept=accept)
            if got:
                if accept is not self.uses.room:
                    self.skip("Vague partners beyond their share of uses (drawn all the same)")
                return got[0], *edge
        return None

    def _vague(self, p: CrrPending, z: int, x: int, code: int) -> Draft | None:
        """The Vague question on ``p.h`` with partner ``z``, asked within the family of the edge ``(x, code)``."""
        h, context, r = p.h, p.context, EVENT_RELATIONS[code]
        ctx = [n for tr in context for n in (tr[0], tr[2])]
        namer = self._namer([h, z, *ctx], [h, *ctx])
        if namer is None:
            return None
        self.partners.setdefault(h, set()).add(z)  # (e0, Vague, partner) asked once unless repeat
        self.uses.used([z])
        qid = p.qid + "-v"
        return Draft([*namer.shown(), x],
                     lambda: self._crr_row(qid, h, z, VAGUE, family_of(r), context, [(h, r, x)], namer))

    def _near_in_similarity(self, h: int, x: int, same: np.ndarray) -> np.ndarray | None:
        """The events of ``same`` whose cosine to ``h`` is within the band around ``x``'s (their shown texts)."""
        vec = self.vectors
        assert vec is not None
        cos = vec.cosines(self.shown_text(h), [self.shown_text(int(z)) for z in same])
        target = float(vec.cosines(self.shown_text(h), [self.shown_text(x)])[0])
        found = within_band(cos, target, self.width)  # the narrow band, then wider where it holds none
        if found is None:
            return None
        near, step = found
        if step != BAND_STEPS[0]:
            self.skip(f"similarity band widened to {step * self.width:.2f} (made all the same)")
        return same[near]

    def _edge_outside(self, h: int, context: list[Triple], fam: str | None = None) -> tuple[int, int] | None:
        """A seeded random entry ``(neighbour, code)`` of ``h`` whose neighbour the context does not join
        to ``h`` (of family ``fam``: the first of a few draws that is, else None; entries in (neighbour,
        code) order, a hub's row indexed, not listed)."""
        shown = {b for a, _, b in context if a == h} | {a for a, _, b in context if b == h}
        lo, hi = self.csr.row(h)
        hidden = self.csr.positions_to(h, shown)
        if hi - lo - len(hidden) <= 0:
            return None
        for _ in range(PREFERRED_TRIES if fam is not None else 1):
            i = lo + self.rng.randrange(hi - lo - len(hidden))
            for pos in hidden:  # ascending: step over the hidden entries
                if pos <= i:
                    i += 1
            entry = self.csr.entry(i)
            if fam is None or family_of(EVENT_RELATIONS[entry[1]]) == fam:
                return entry
        if fam is None:
            return None
        # none drawn: one of the family's entries outside the context, if the row holds any (read once)
        held = family_entries(self.csr.code[lo:hi], [pos - lo for pos in hidden], FAMILY_MASK[fam])
        return self.csr.entry(lo + int(held[self.rng.randrange(len(held))])) if len(held) else None

    def _crr_row(self, qid: str, h: int, t: int, rel: str, fam: str, context: list[Triple], extra: list[Triple],
                 namer: Namer) -> GeneratedQuestion:
        a, b, _ = CRR_CHOICES[fam]
        e0, e1 = namer.name(h), namer.name(t)
        row: dict[str, Any] = {
            "id": qid, "e0": e0, "rel": rel, "e1": e1, **self._context(namer, context),
            "question": CRR_QUESTION.format(e0=e0, a=a, b=b, e1=e1),
            "choices": list(CRR_CHOICES[fam]),  # EV²'s order (its loader and scorers expect it)
        }
        return self._finish(row, namer, context + extra)
