"""Generated CEC and CRR questions: :func:`make_questions`, the one entry point (``eventkg questions``,
the demo and Python callers).

It checks the options before any work, refuses a store that cannot give questions of the
asked level with its reason, sets up FAISS hard negatives for CEC, runs Algorithm 1
(:mod:`eventkg.queries.questions.generate`) and writes the questions back as ``Question``
nodes on request. Same graph, same seed: same questions.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.progress import Notice, Progress
from eventkg.queries.errors import NegativesError, QuestionError
from eventkg.queries.questions.rows import GeneratedQuestion, NegativeSource
from eventkg.queries.questions.spec import QuestionSpec

if TYPE_CHECKING:  # read when the graph is: importing this module stays cheap
    from eventkg.queries.graph.event_graph import EventGraph

#: the expected-count notice vets the keys' negatives and partners only when there are at most this many
VET_KEYS_MAX = 2_000


def make_questions(
    source: GraphStore | EventGraph,
    spec: QuestionSpec,
    *,
    graph: EventGraph | None = None,
    sampler: NegativeSource | None = None,
    progress: Progress | None = None,
    notice: Notice | None = None,
    stats: dict[str, int] | None = None,
) -> list[GeneratedQuestion]:
    """Up to ``spec.n`` EV²-style questions of ``spec.task`` and ``spec.level`` from ``source``'s graph.

    Args:
        source: A store, or a graph already read (an :data:`~eventkg.queries.graph.event_graph.EventGraph`:
            an :class:`~eventkg.queries.graph.event_graph.EventIndex`, its :class:`~eventkg.queries.graph.csr.EventCSR`,
            or a networkx graph in the store's shape).
        spec: What to ask for (:class:`~eventkg.queries.questions.spec.QuestionSpec`). With ``spec.save``
            the questions are drawn with the store read-only
            (:meth:`~eventkg.graphstore.base.GraphStore.read_only_phase`) and saved after as Question nodes
            (same seed, same ids: a re-run changes nothing).
        graph: The store's event graph, when a caller asking several times read it once.
        sampler: CEC negatives from this source instead of ``spec.negatives`` (vetted all the same).
        progress: Hears the number of questions made so far.
        notice: Hears a line before the work when the graph's distinct keys give fewer than ``spec.n``
            (:func:`~eventkg.queries.questions.capacity.question_capacity`), and one when fewer came, and why.
        stats: Receives the questions skipped or dropped, by reason.

    Returns:
        :class:`~eventkg.queries.questions.rows.GeneratedQuestion` objects (``.row``: the EV² JSON row).

    Raises:
        QuestionError: A bad option, or a store that cannot give questions of the asked level (with its reason).

    >>> [q.row for q in make_questions(store, QuestionSpec("cec", n=10, negatives="random"))]  # doctest: +SKIP
    """
    task, stats = spec.check(), {} if stats is None else stats
    read_here = graph is None and isinstance(source, GraphStore)  # the graph and sampler are this call's own
    # drawn with the store read-only when it is saved to after: its engine keeps less of what it read
    with source.read_only_phase() if spec.save and read_here else nullcontext():
        store, graph = _store_and_graph(source, graph, spec.level, spec.save, notice)
        if notice and not spec.repeat:
            _expect(graph, task, spec, notice)
        made = _draw(store, graph, task, spec, sampler, progress, stats)
        if notice and len(made) < spec.n:
            notice(_fewer(made, spec.n, task, spec.level, stats))
        if read_here:  # let the graph read here go before the bulk session's COPYs (the memory budget)
            graph = sampler = None
    if spec.save and made:
        from eventkg.queries.questions.store import store_questions

        store_questions(store, made, spec.seed)
    return made


def _expect(graph: EventGraph, task: str, spec: QuestionSpec, notice: Notice) -> None:
    """Say before the work when the graph holds fewer questions than asked (its distinct keys,
    :mod:`eventkg.queries.questions.capacity`): the direct edges' bound first, then the keys with a context,
    vetted only when they are fewer and at most :data:`VET_KEYS_MAX`."""
    from eventkg.queries.questions.capacity import direct_bound, expected_notice, question_capacity

    if direct_bound(graph, task, spec.level, spec.vague_prob) >= spec.n:  # a large graph: no walk needed
        return
    opts = {"size": spec.size, "max_len": spec.max_len, "vague_prob": spec.vague_prob,
            "require_context": spec.require_context, "limit": spec.n}
    cap = question_capacity(graph, task, spec.level, vetted=False, **opts)
    if cap.complete and cap.questions < spec.n and cap.keys <= VET_KEYS_MAX:  # vetting costs a search per key
        cap = question_capacity(graph, task, spec.level, **opts)
    line = expected_notice(cap, spec.n)
    if line:
        notice(line)


def _fewer(made: list[GeneratedQuestion], n: int, task: str, level: str, stats: dict[str, int]) -> str:
    why = ", ".join(f"{v:,} {k}" for k, v in sorted(stats.items())) or "none skipped"
    return f"the graph yields {len(made):,} {task} {level} questions of the {n:,} asked (skipped: {why})"


def _draw(store: GraphStore | None, graph: EventGraph, task: str, spec: QuestionSpec, sampler: NegativeSource | None,
          progress: Progress | None, stats: dict[str, int]) -> list[GeneratedQuestion]:
    """Algorithm 1 over ``graph``, with the FAISS sampler of ``store`` set up for CEC when asked."""
    from eventkg.queries.questions.generate import _generate_questions

    if task != "CEC":
        return _generate_questions(graph, spec, progress=progress, stats=stats)
    if spec.negatives == "faiss" and sampler is None:
        if store is None:
            raise QuestionError("FAISS negatives are searched in a store's vector index; this source is a graph "
                                "(ask for random negatives or give a sampler)")
        sampler = _faiss_sampler(store, spec.embed_model)
    if spec.adversarial:
        from eventkg.queries.questions.filtering import adversarial_filter

        made = _generate_questions(graph, replace(spec, n=2 * spec.n), negatives=sampler, progress=progress, stats=stats)
        dropped: dict[str, int] = {}
        kept = adversarial_filter(made, spec.n, spec.seed, dropped)
        stats.update({f"dropped by the filter: {k} solves it": v for k, v in dropped.items()})
        return kept
    return _generate_questions(graph, spec, negatives=sampler, progress=progress, stats=stats)


def event_vectors(graph: GraphStore | EventGraph, embed_model: str | None) -> np.ndarray:
    """One unit-norm sentence vector per event position of ``graph`` (its name read as words, as the
    audit reads a schema choice), from ``embed_model`` (None: the configured one)."""
    from eventkg.queries.graph.event_graph import as_csr
    from eventkg.queries.vectors.embeddings import Embedder

    csr = as_csr(graph)
    vectors = np.asarray(Embedder(embed_model, device="cpu").encode([csr.name(p).replace("_", " ") for p in range(len(csr))]))
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def _store_and_graph(source: GraphStore | EventGraph, graph: EventGraph | None, level: str, save: bool,
                     notice: Notice | None) -> tuple[GraphStore | None, EventGraph]:
    """The store (None when ``source`` is a graph) and the graph to walk, the store checked first."""
    if not isinstance(source, GraphStore):
        if save:
            raise QuestionError("questions are saved as Question nodes of a store; this source is a graph")
        return None, source
    _check_store(source, level)
    if graph is None:
        from eventkg.queries.graph.event_graph import EventIndex

        if notice:
            notice("reading the event graph ...")
        graph = EventIndex.from_store(source)
    return source, graph


def _check_store(store: GraphStore, level: str) -> None:
    """Raise a :class:`QuestionError` that says why, before any work, when the store cannot
    give questions of ``level``: no EV² event relations (an ASER store ingested without
    mapping its discourse relations to event relations), or, for the instance level, no
    instance events at all."""
    from eventkg.queries.graph.columnar import edge_counts
    from eventkg.queries.negatives.nearest import require_event_relations

    try:
        require_event_relations(store, "temporal")  # BEFORE, CAUSES or HAS_SUBEVENT: any one will do
    except NegativesError as exc:
        raise QuestionError(str(exc)) from None
    if level == "instance" and not edge_counts(store, ["HAS_TYPE"])["HAS_TYPE"]:
        raise QuestionError(
            f"store {store.url} has no instance-level events (instance -HAS_TYPE-> type): ASER and EECKG "
            "hold schema-level events only; ingest EV² instance files (`eventkg ingest ev2 ...`) or ask "
            "for the schema level"
        )


def _faiss_sampler(store: GraphStore, embed_model: str | None) -> NegativeSource:
    """The schema-level hard-negative sampler; a one-line error when FAISS cannot be loaded."""
    try:
        from eventkg.queries.negatives.nearest import NearestNegatives
    except ImportError as exc:
        raise QuestionError(f"FAISS negatives unavailable ({exc}); ask for random negatives") from None
    # every proposed negative is vetted against the in-memory graph by the generator (walks of at most
    # max_len edges, as the sampler's own store search would), so the sampler skips that search
    return NearestNegatives(store, embed_model=embed_model, level="schema", vet_links=False)
