"""Algorithm 1 over an event graph: CEC and CRR questions (the EV² paper, section 3) in EV²'s JSON-lines schema.

The engine behind :func:`eventkg.queries.questions.make.make_questions`, the entry point. Construction, per Algorithm 1 component (forward and backward copies, see
:mod:`eventkg.queries.graph.components`):

1. pairs ``(head, tail)`` where ``tail`` is reachable from ``head`` in the component DAG by a
   path of at most ``max_len`` (4) edges, and ``head`` has predecessors (they are the
   background); up to ``pairs`` (3) pairs per component, in seeded random order;
2. the queried relation is the direct edge's relation, else Table 1 induction over the DAG
   path (:func:`eventkg.queries.induction.induce.induce`); pairs whose path induces nothing are skipped;
3. the context is every component triple among the head's predecessors (ancestors) and the
   head, so it never states the answer triple or its inverse, and every context triple is a
   stored edge (read through the inverse table);
4. CEC (4-way): the answer plus 3 negatives from a sampler (FAISS hard negatives from
   :mod:`eventkg.queries.negatives.nearest`, or :class:`~eventkg.queries.negatives.unlinked.UnlinkedNegatives`); every negative is checked
   here against the graph whatever sampler proposed it: same level, not in the component,
   not the query or answer, no duplicate, and not linked to the query by the asked
   relation's family by any walk of at most ``max_len`` edges (so no negative is a true
   answer, even by induction);
5. CRR (3-way): the choices are the asked relation's family plus Vague; the pair's own
   family is asked when exactly one member of it holds over the whole graph (walks of at
   most ``max_len``); each pair also gives a Vague item, built as EV² builds them (242 of the
   release's 244): ``e0`` with an event unrelated to it (same level, outside the component, no
   relation of any family by a walk of at most ``max_len``: the kind CEC uses as negatives),
   asked within the pair's family, of which ``e0`` really has an edge outside the context.
   Pairs are drafted first; the Vague partner is then drawn to stand for the pair's related
   partner: of its degree band in the store and in the graph the drafted contexts state, and
   (with similarity matching) of its cosine to ``e0``; a pair whose partner cannot be matched
   gives neither question (counted). The labels (answer positions) keep to quotas within
   each family: Vague ``vague_prob / (1 + vague_prob)`` (a third by default), the two family
   members half the rest each; a question whose label is over its quota is skipped, counted.
   CEC negatives are drawn once every answer and context is drafted: in the answer's degree
   band in the store and in the graph the drafted contexts state (the file's own graph). A CEC
   question whose answer another kept question names (or whose names hold another's answer) is set
   aside where the graph offers enough questions kept apart, else the questions are taken as drafted (:func:`~eventkg.queries.questions.cec.answers_apart`).

Instance level: components are walked over event types that have instance events
(``HAS_TYPE``); each type in a question is shown as one of its instances, numbered
``eventN`` per question as in EV²; the query, the answer and the context by instances of one
story (a connected set of instance events joined by relation edges, as the EV² loader stores one
question's) when ``one_story`` is asked (a question no story holds is skipped, counted; off by
default: its negatives, of unrelated types, come from other stories, so the most similar choice
and the word overlap of a CRR pair tell the answer), with ``instances``, ``event_type`` and ``event_relation``
(as the release: the type-level triples of the question's graph, i.e. the context plus the
answer triple ``(type(e0), rel, type(e1))``; for Vague, the context plus the edge of
``e0`` whose family is asked).

Everything is deterministic for a seed and a graph (the index is ordered by event id, so
two backends holding the same graph give the same questions).

Speed (figures: ``docs/performance.md``, ``bench/query_bench_questions.py``): the graph
is read in columns into numpy arrays (:mod:`eventkg.queries.graph.csr`), and each "is this event
linked to ``e0``?" is answered by meeting in the middle, two steps from each end
(:mod:`eventkg.queries.induction.vetting`) instead of a 4-step search from ``e0``. The answers are the
same as the 4-step search's (walks of at most ``max_len``, read both ways), so the rules above
hold unchanged. Where this module's parts live: rows and errors
(:mod:`~eventkg.queries.questions.rows`), construction (:mod:`~eventkg.queries.questions.build`, the shared part;
:mod:`~eventkg.queries.questions.cec` and :mod:`~eventkg.queries.questions.crr`, each task's builder), the matching
keys and bands (:mod:`~eventkg.queries.questions.balance`),
vetted random negatives (:mod:`~eventkg.queries.negatives.unlinked`), writing
(:mod:`~eventkg.queries.questions.store`), the graph's own check
(:func:`eventkg.queries.oracle.kg_oracle_answer`).
"""

from __future__ import annotations

import gc
import itertools
import random
from collections.abc import Iterable

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.progress import Progress
from eventkg.queries.graph.components import iter_components
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.graph.event_graph import EventGraph, as_csr
from eventkg.queries.questions.balance import SIMILAR_AUTO_MAX, LazyVectors
from eventkg.queries.questions.build import Draft
from eventkg.queries.questions.cec import CecBuilder, answers_apart
from eventkg.queries.questions.crr import CrrBuilder
from eventkg.queries.questions.rows import GeneratedQuestion, NegativeSource
from eventkg.queries.questions.spec import QuestionSpec

#: drafts whose texts are read from the store in one lookup (``event_texts.StoreTexts``)
TEXT_BATCH = 4096
#: drafts held at most while the texts are still being read (``event_texts.PendingTexts``)
TEXT_BATCH_MAX = 64 * TEXT_BATCH
#: CEC answers and contexts drafted beyond ``n`` (one in this many more; twice ``n`` with similarity
#: matching), as some find no matched negatives
OVERDRAFT = 4

#: rounds of walks from every start a small graph is given before it runs out (the first round is
#: Algorithm 1's; a later one walks new paths from the same starts, and ends the walk when it finds none)
WALK_ROUNDS = 8


def question_pool(csr: EventCSR, level: str) -> np.ndarray:
    """Events a question of ``level`` may use: schema events, or (instance) the schema types with instances."""
    schema = csr.level == 0
    pool = np.flatnonzero(schema) if level == "schema" else np.flatnonzero(schema & (np.diff(csr.inst_indptr) > 0))
    return pool.astype(np.int32) if len(csr) < 2**31 else pool


def _generate_questions(
    source: GraphStore | EventGraph,
    spec: QuestionSpec,
    *,
    negatives: NegativeSource | None = None,
    progress: Progress | None = None,
    stats: dict[str, int] | None = None,
) -> list[GeneratedQuestion]:
    """Up to ``spec.n`` questions with their store ids, by the rules of the module docstring.

    The engine behind :func:`eventkg.queries.questions.make.make_questions`, which checks ``spec`` first
    (:meth:`~eventkg.queries.questions.spec.QuestionSpec.check`). ``source``: an :class:`EventIndex`, its
    :class:`EventCSR`, or a networkx graph in the store's shape. ``negatives``: CEC negatives proposed by
    a sampler (each vetted here). Fewer than ``spec.n`` come back only when the graph runs out of
    components. ``stats`` (a dict) receives how many drafted questions were skipped, by reason.
    """
    csr, task, n = as_csr(source), spec.task.upper(), spec.n
    pool = question_pool(csr, spec.level)
    rng = random.Random(f"eventkg-questions-{spec.seed}")
    builder = CecBuilder(csr, spec, rng, pool, negatives) if task == "CEC" else CrrBuilder(csr, spec, rng, pool)
    if (spec.similar or spec.similar is None and len(builder.linked) <= SIMILAR_AUTO_MAX):
        builder.use_similarity(LazyVectors(lambda p: csr.text(p) if csr.level[p] == 1 else csr.name(p).replace("_", " "),
                                           spec.embed_model))
    out: list[GeneratedQuestion] = []
    # the loop makes many short-lived objects and no cycles; cyclic-GC passes would only cost time
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        drafted = (d for comp in iter_components(csr, spec.size, spec.seed, allowed=builder.allowed, rounds=WALK_ROUNDS)
                   for d in builder.questions(comp))
        if isinstance(builder, CecBuilder):  # every answer and context first, then negatives matched to them in the file
            extra = n if builder.vectors is not None else n // OVERDRAFT  # similarity finds fewer negatives
            pending = answers_apart(drafted, n + extra + 8)
            # the in-file degree over the first n (those written unless skipped; the rest stand in for skips),
            # so that a negative's links come from questions the file holds, as the answer's do
            builder.match_infile(pending[:n])
            drafted = (d for d in map(builder.cec_draft, pending) if d is not None)
        else:  # CRR: the same for Vague partners, matched to the related partners they stand for
            pairs = list(itertools.islice(drafted, 2 * n + 8))  # a related and a Vague per pair; quotas keep some
            builder.match_infile(builder.within_quota(pairs)[:n])
            drafted = builder.crr_drafts(pairs)
        _write_all(csr, drafted, out, n, progress)
        return out
    finally:
        if stats is not None:
            stats.update(builder.skipped)
        builder.vet.unload()
        if gc_was_on:
            gc.enable()


def _write_all(csr: EventCSR, drafted: Iterable[Draft], out: list[GeneratedQuestion], n: int,
               progress: Progress | None) -> None:
    """Up to ``n`` rows of ``drafted`` into ``out``, their texts read a batch at a time."""
    drafts: list[Draft] = []
    for d in drafted:
        drafts.append(d)
        if (len(drafts) >= TEXT_BATCH and (_texts_ready(csr) or len(drafts) >= TEXT_BATCH_MAX)
                or len(out) + len(drafts) >= n):
            _write_rows(csr, drafts, out, progress)
        if len(out) >= n:
            return
    _write_rows(csr, drafts, out, progress)


def _texts_ready(csr: EventCSR) -> bool:
    """Whether the texts can be read now (not still being read in another thread)."""
    ready = getattr(csr.texts, "ready", None)
    return ready is None or ready()


def _write_rows(csr: EventCSR, drafts: list[Draft], out: list[GeneratedQuestion],
                progress: Progress | None) -> None:
    """The rows of ``drafts`` (emptied), their texts read in one go."""
    csr.texts.prefetch(p for d in drafts for p in d.shown)
    for d in drafts:
        out.append(d.make())
        if progress:
            progress("questions", len(out), None)
    drafts.clear()
