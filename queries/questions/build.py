"""Questions from components: pairs, Table 1 relation, context, vetted negatives, EV² rows.

One :class:`QuestionBuilder` per run turns Algorithm 1 components
(:mod:`eventkg.queries.graph.components`) into :class:`Draft` questions by the rules of
:mod:`eventkg.queries.questions.generate`: every choice made, every random number drawn, and the
events the row will show listed, but no text read yet. The caller reads the texts of a
batch of drafts at once (:meth:`eventkg.queries.graph.event_texts.StoreTexts.prefetch`: one keyed
lookup in the store, not one per event) and then makes their
:class:`~eventkg.queries.questions.rows.GeneratedQuestion` rows. Everything asked of the whole graph
(is a negative linked to ``e0``? which family member holds for CRR? is a Vague partner
unrelated?) goes through one :class:`~eventkg.queries.induction.vetting.MeetInTheMiddle`, loaded once per
head event; the rest is Python over the component's 3-5 events.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventkg.graphstore.model import EVENT_RELATIONS, FAMILIES, INVERSE, VAGUE, family_of
from eventkg.queries.graph.components import Component
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.induction.induce import induce
from eventkg.queries.induction.table1 import ALL_RELATIONS, CODE
from eventkg.queries.induction.vetting import MeetInTheMiddle
from eventkg.queries.negatives.unlinked import FAMILY_MASK, draw_unlinked
from eventkg.queries.questions.balance import LazyVectors, UseBalance, rank_split
from eventkg.queries.questions.rows import CEC_QUESTIONS, CRR_CHOICES, CRR_QUESTION, GeneratedQuestion, NegativeSource

Triple = tuple[int, str, int]
#: how far a negative's cosine to the query may be from the answer's, when negatives are matched in similarity
SIMILARITY_BAND = 0.10
#: the similarity band's widths tried in turn (multiples of the band), the next only when the last matched
#: too few: a wider band keeps the answer's similarity rank at chance (negatives as often below as above)
#: and costs no question the narrow band could match
BAND_STEPS = (1.0, 2.0)
#: draws per negative among preferred texts (fresh, then never gold) before the next kind is drawn
PREFERRED_TRIES = 8
#: in-file degrees matched exactly below this, by band above
EXACT_INFILE = 8


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


def path_relation(paths: list[list[Triple]]) -> tuple[str | None, list[Triple]]:
    """The first (shortest) path Table 1 induces something for, and that relation."""
    for p in paths:  # shortest first, so a direct edge wins
        rel = induce([r for _, r, _ in p])
        if rel is not None:
            return rel, p
    return None, []


def degree_band(degree: np.ndarray) -> np.ndarray:
    """Each event's degree band: -1 without relations, else floor(log2(degree)) (1, 2-3, 4-7, ...)."""
    band = np.full(len(degree), -1, dtype=np.int8)
    has = degree > 0
    band[has] = np.minimum(np.floor(np.log2(degree[has])), 126).astype(np.int8)
    return band


def infile_key(degree: np.ndarray) -> np.ndarray:
    """Each event's in-file degree key: the degree itself below :data:`EXACT_INFILE` (so that no choice
    has fewer or more links than the answer more often than chance), else its band above it."""
    return exact_then_band(degree, EXACT_INFILE)


def exact_then_band(values: np.ndarray, exact: int) -> np.ndarray:
    """``values`` kept as they are below ``exact``, else ``exact`` plus their :func:`degree_band`."""
    band = degree_band(values).astype(np.int32)
    return np.where(values < exact, values, exact + band).astype(np.int32)


#: named counts matched exactly below this, by band above
EXACT_NAMED = 4


def named_key(named: np.ndarray) -> np.ndarray:
    """Each event's key of how many questions name it (:func:`infile_named`): exact below
    :data:`EXACT_NAMED`, by band above (finer keys leave too few negatives per key on a small graph)."""
    return exact_then_band(named, EXACT_NAMED)


def infile_degree(size: int, contexts: Iterable[list[Triple]]) -> np.ndarray:
    """Each event's degree in the graph the questions' contexts state: its distinct neighbours over
    every context triple (the audit's in-file degree, :func:`eventkg.queries.audit.checks.infile_graph`)."""
    pairs = {(a, b) for context in contexts for h, _, t in context for a, b in ((h, t), (t, h))}
    if not pairs:
        return np.zeros(size, dtype=np.int64)
    return np.bincount(np.fromiter((a for a, _ in pairs), dtype=np.int64, count=len(pairs)), minlength=size)


def infile_named(size: int, pending: Iterable[Pending | CrrPending]) -> np.ndarray:
    """Each event's count of questions that name it as their queried event or in their context (the
    audit's "named elsewhere", :func:`eventkg.queries.audit.checks.infile_named`): answers are often the
    events other questions ask about, and a negative named so less often is told apart by that alone."""
    counts = np.zeros(size, dtype=np.int64)
    for p in pending:
        named = {p.h, *(x for h, _, t in p.context for x in (h, t))}
        counts[np.fromiter(named, dtype=np.int64, count=len(named))] += 1
    return counts


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
class Pending:
    """A CEC question before its negatives, which are drawn once every question's context is known."""

    qid: str
    nodes: list[int]
    h: int
    t: int
    rel: str
    context: list[Triple]


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
        return (self.label, 2) if self.draft is not None else (2,)


@dataclass
class Draft:
    """One question with every choice made: ``make()`` writes its row once the texts of
    ``shown`` (the events the row names) can be read."""

    shown: list[int]
    make: Callable[[], GeneratedQuestion]


class QuestionBuilder:
    """Turns components into questions; holds the graph, the vetting search and the options of one run."""

    def __init__(self, csr: EventCSR, task: str, level: str, rng: random.Random, negatives: NegativeSource | None,
                 pool: Sequence[int], *, max_len: int, pairs: int, vague_prob: float, require_context: bool,
                 tries: int = 64, repeat: bool = False, one_story: bool = False) -> None:
        from eventkg.queries.retrieval.subgraphs import verbalise  # its module imports scikit-learn: load on use

        self.csr, self.task, self.level, self.rng, self.negatives = csr, task, level, rng, negatives
        self.pool, self.allowed = pool, np.zeros(len(csr), dtype=bool)
        self.allowed[pool] = True
        self.max_len, self.pairs, self.vague_prob, self.require_context = max_len, pairs, vague_prob, require_context
        self.tries, self.verbalise = tries, verbalise
        self.vet = MeetInTheMiddle(csr, max_len)
        # negatives come from the population answers come from (events with relations), drawn
        # within the answer's degree band, so that no degree or in-file link count tells them apart
        self.band = degree_band(np.diff(csr.indptr))
        self.linked = pool[self.band[pool] >= 0]
        self.by_band = {int(b): self.linked[self.band[self.linked] == b] for b in np.unique(self.band[self.linked])}
        self.key, self.by_key = self.band.astype(np.int32), self.by_band  # CEC: see match_infile
        self.named = np.zeros(len(csr), dtype=np.int32)  # how often the file names each event (match_infile)
        self.positions: list[int] = []  # answer positions still to hand out (exact balance)
        self.asked: set[tuple[int, str, int]] = set()  # (event, relation, answer) already asked
        self.partners: dict[int, set[int]] = {}  # e0 -> its Vague partners so far
        self.repeat = repeat
        self.vectors: LazyVectors | None = None  # see use_similarity
        self.preset: dict[int, int] = {}  # this question's shown instance per type, drawn for its similarity
        self.uses = UseBalance(len(csr))
        self.width = SIMILARITY_BAND
        self.story = stories(csr) if level == "instance" and one_story else None
        self.labels: dict[str, list[int]] = {}  # CRR questions made per family and label (choice position): a, b, Vague
        self.skipped: dict[str, int] = {}  # why a drafted question was skipped -> how many

    def skip(self, why: str) -> None:
        """Count a question left out, by reason (never a silent fallback)."""
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def position(self, k: int) -> int:
        """The next answer position of ``k``: each position once per block of ``k``, blocks in seeded order."""
        if not self.positions:
            self.positions = list(range(k))
            self.rng.shuffle(self.positions)
        return self.positions.pop()

    # -- pairs -----------------------------------------------------------------------------
    def questions(self, comp: Component) -> Iterator[Draft | Pending]:
        dag = dag_paths(comp, self.max_len)
        candidates = [(h, t) for h in comp.nodes for t in sorted(dag[h])]
        self.rng.shuffle(candidates)
        made = 0
        for h, t in candidates:
            if made >= self.pairs:
                break
            if self.task == "CEC":
                anc = ancestors(comp, h)
                if self.require_context and not anc:
                    continue
            rel, _path = path_relation(dag[h][t])
            if rel is None:
                continue
            qid = f"{comp.cid}-{made}"
            if self.task == "CEC":
                keep = anc | {h}
                context = [tr for tr in comp.triples if tr[0] in keep and tr[2] in keep]
                built: list[Pending] | list[CrrPending] = self._cec(qid, comp, h, t, rel, context)
            else:
                built = self._crr_sided(qid, comp, h, t, rel)
            if built:
                made += 1
                yield from built

    # -- CEC -------------------------------------------------------------------------------
    def match_infile(self, pending: Sequence[Pending | CrrPending]) -> None:
        """Match negatives (CRR: Vague partners) to answers in the file too: each event's key becomes
        (in-file degree, exact below :data:`EXACT_INFILE` and by band above; store degree band), the
        in-file degree counted over the contexts of ``pending``, so that negatives come from the
        population answers come from (named in the file's contexts as often, neither more nor less);
        the answers' gold uses are counted."""
        infile = infile_key(infile_degree(len(self.csr), (p.context for p in pending)))
        self.named = named_key(infile_named(len(self.csr), pending))
        self.uses.set_gold([p.t for p in pending])
        self.key = (infile + 1) * 256 + self.band.astype(np.int32) + 1
        keys = self.key[self.linked]
        order = np.argsort(keys, kind="stable")
        uniq, starts = np.unique(keys[order], return_index=True)
        self.by_key = {int(k): part for k, part in zip(uniq, np.split(self.linked[order], starts[1:]), strict=True)}

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

    def negatives_for(self, nodes: list[int], h: int, t: int, rel: str) -> list[int] | None:
        """Three vetted negatives of the answer's key (degree band; after :meth:`match_infile`, in the
        store and in the file), texts kept near three negative uses per gold use; with similarity, as
        many below the answer's cosine to the query as above on average; None (counted) when too few."""
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
        tries = [(step, k_below) for step in BAND_STEPS]
        tries += [(BAND_STEPS[-1], k) for k in sorted({0, 1, 2, 3} - {k_below}, key=lambda k: abs(k - k_below))]
        for step, k in tries:
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
        out.sort(key=lambda z: (z not in first, self.named[z] != self.named[t], not self.uses.room(z)))
        return out

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

    def _cec(self, qid: str, comp: Component, h: int, t: int, rel: str, context: list[Triple]) -> list[Pending]:
        if not self.repeat and (h, rel, t) in self.asked:
            self.skip("(event, relation, answer) already asked")
            return []
        self.asked.add((h, rel, t))
        return [Pending(qid, list(comp.nodes), h, t, rel, context)]

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
        choices.insert(self.position(4), t)
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

    # -- CRR -------------------------------------------------------------------------------
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
        if self.vet.induced(t, tuple(CODE[r] for r in FAMILIES[fam])) != 1 << CODE[rel]:
            return []  # both directions of the family hold somewhere: no single right answer
        if not self.repeat and (h, rel, t) in self.asked:
            self.skip("(event, relation, answer) already asked")
            return []
        self.asked.add((h, rel, t))
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
            if not self._room(2, p.cell):
                self.skip("CRR label over its quota")
            elif (vague := self._vague(p, *partner)) is not None:
                self.made(2, p.cell)
                yield vague

    def _room(self, label: int, cell: str, labels: dict[str, list[int]] | None = None) -> bool:
        """Whether one more question of ``label`` in quota cell ``cell`` (:attr:`CrrPending.cell`: the family
        and the context's side) keeps every label of the cell within one of its quota (Vague's share
        ``vague_prob / (1 + vague_prob)``, as one Vague per related pair with that probability gives; the
        two members half the rest each): per cell, so that neither the asked family (the audit's label
        prior) nor the context's relations tell the label. ``labels``: counts other than the run's."""
        vague = self.vague_prob / (1 + self.vague_prob)
        share = vague if label == 2 else (1 - vague) / 2
        counts = (self.labels if labels is None else labels).get(cell, [0, 0, 0])
        return counts[label] < share * (sum(counts) + 1) + 1

    def made(self, label: int, cell: str, labels: dict[str, list[int]] | None = None) -> None:
        """Count a CRR question of ``label`` in quota cell ``cell`` (in ``labels``, else the run's counts)."""
        (self.labels if labels is None else labels).setdefault(cell, [0, 0, 0])[label] += 1

    def _vague_partner(self, p: CrrPending) -> tuple[int, int, int] | None:
        """``(partner, neighbour, code)`` for EV²'s Vague item on ``p.h``: an event unrelated to ``h`` (the
        CEC-negative kind: no relation of any family by a walk of at most ``max_len``) and an edge of the
        pair's family ``h`` really has outside the context (the family the item asks; the edge joins
        ``event_relation``, as in the release). The partner stands for the related partner
        ``t``: of its key (store degree band; in-file degree after :meth:`match_infile`) and, with
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
        for step in BAND_STEPS:  # the narrow band, then wider where it holds none
            near = same[np.abs(cos - target) <= step * self.width]
            if len(near):
                if step != BAND_STEPS[0]:
                    self.skip(f"similarity band widened to {step * self.width:.2f} (made all the same)")
                return near
        return None

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
        ok = ((1 << self.csr.code[lo:hi].astype(np.int64)) & FAMILY_MASK[fam]) != 0
        ok[np.asarray(hidden, dtype=np.int64) - lo] = False
        held = np.flatnonzero(ok)
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
