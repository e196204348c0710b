"""Retrieval for prompts: text -> seed events -> the facts that answer it -> prompt text.

``retrieve(store, "Julia went over her notes for weeks")`` works in one of two modes:

- ``lifted`` (the default on a store with a type layer: schema events and ``HAS_TYPE``, as
  EV² ingests): hybrid seeds (dense + full-text, :mod:`~eventkg.queries.retrieval.hybrid`),
  lifted to the schema event types the text instantiates (:mod:`~eventkg.queries.retrieval.lifting`),
  whose facts come first, then facts of other stories' instances around the seeds
  (:mod:`~eventkg.queries.retrieval.facts`). ``relation="IsResult"`` (the question's
  relation, when known) puts that relation's facts first, spelled as asked.
- ``neighbourhood`` (the default on a store without types, e.g. ASER): the k events nearest
  the text in the store's FAISS index (:mod:`eventkg.queries.vectors.index`) and their
  ``hops``-hop neighbourhood over the event relations (and ``HAS_TYPE``).

``.to_prompt(style="direct")`` follows the "direct guidance" of the EV² paper's section 5.4:
event types and the relations between them before the question; ``style="context"`` writes
EV²'s context sentences instead (``"learn" is before "remember information".``). Fact lines
quote texts as JSON strings, so :func:`~eventkg.queries.retrieval.facts.parse_facts` reads a
prompt back.

Trimming: with ``max_tokens`` the header, footer and question are always kept and the fact
lines are added in rank order while they fit (lifted: the order of
:func:`~eventkg.queries.retrieval.facts.rank_facts`, a fact whose head and relation already have
a line joining it as one more tail, ``- ("type", Causes, ["a", "b"])``; neighbourhood: the
smallest hop distance from the seeds, then the highest cosine similarity to the text). Tokens are counted by
``count_tokens`` (default :func:`approx_tokens`: words and punctuation marks, each one token;
pass e.g. ``lambda s: len(tokenizer.encode(s))`` for your model's exact count).

Bounded on big graphs: in the neighbourhood mode, over Event->Event types the neighbourhood
comes from the ranked adjacency of :mod:`eventkg.queries.graph.adjacency` (built once beside
the vector index, memory-mapped after). Each node contributes at most ``per_node`` neighbours
(default :data:`DEFAULT_PER_NODE`), its best by edge count/weight, then by the neighbour's
frequency (EV²'s edges carry neither: then by id); each hop adds at most ``limit`` new nodes.
In the lifted mode a type keeps its ``per_node`` facts most similar to the text. A node cut
either way is listed in ``RetrievedSubgraph.truncated`` as (id, kept, degree), in
``to_dict()["truncated"]`` and in a note line of the prompt that says what it was cut by.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import ASER_RELATIONS, CANONICAL, NODE_TYPES, REL_TYPES, upper_snake
from eventkg.queries.errors import RetrieveError
from eventkg.queries.graph import adjacency, columnar
from eventkg.queries.retrieval.facts import Fact, fact_group_line, fact_line, pack_fact_lines
from eventkg.queries.retrieval.lifting import TypeScore, type_layer
from eventkg.queries.retrieval.subgraphs import CONTEXT_TEMPLATES
from eventkg.queries.vectors.files import index_dir
from eventkg.queries.vectors.index import VectorIndex, open_index

DEFAULT_REL_TYPES = ("CAUSES", "BEFORE", "HAS_SUBEVENT", "HAS_TYPE")
STYLES = ("direct", "context")
MODES = ("auto", "lifted", "neighbourhood")
_NAMES = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"} | {
    upper_snake(a): a for a in ASER_RELATIONS
}
_SENTENCE = {
    "Causes": '"{h}" causes "{t}".',
    "Before": '"{h}" is before "{t}".',
    "HasSubevent": '"{t}" is a subevent of "{h}".',
}


def approx_tokens(text: str) -> int:
    """Words and punctuation marks (each counts one token)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def relation_name(stored: str, props: dict[str, Any] | None = None) -> str:
    """The paper/CLI name of a stored type (``CAUSES`` -> ``Causes``, ``NOUN_ENTAIL`` -> ``NounEntail``)."""
    if stored == "RELATED" and props and props.get("relation"):
        return str(props["relation"])
    return _NAMES.get(stored) or "".join(part.capitalize() for part in stored.split("_"))


def stored_types(rel_types: Sequence[str] | None) -> list[str]:
    """Paper names (``IsResult``) or stored names (``CAUSES``) -> stored type names."""
    if rel_types is None:
        return list(DEFAULT_REL_TYPES)
    out: list[str] = []
    for r in rel_types:
        t = CANONICAL[r][0] if r in CANONICAL else upper_snake(r) if upper_snake(r) in REL_TYPES else r
        if t not in REL_TYPES:
            raise RetrieveError(f"unknown relation type {r!r}; use e.g. Causes, Before, HasSubevent or a stored type")
        if t not in out:
            out.append(t)
    return out


def _node_text(g: nx.MultiDiGraph, nid: str) -> str:
    attrs = g.nodes[nid]
    label = attrs.get("label", "Event")
    caption = NODE_TYPES[label].caption if label in NODE_TYPES else "text"
    return str(attrs.get(caption) or attrs.get("text") or nid)


@dataclass
class RetrievedSubgraph:
    """What :func:`retrieve` found: its seeds, the subgraph, each node's relevance, and in the lifted
    mode the text's types (``types``) and the ranked facts (``facts``); ``triples`` is a property."""

    query: str
    seeds: list[tuple[str, float]]
    graph: nx.MultiDiGraph
    hops: dict[str, int] = field(default_factory=dict)
    similarity: dict[str, float] = field(default_factory=dict)
    #: (event id, neighbours kept, neighbours it has) for each node whose neighbours were capped
    truncated: list[tuple[str, int, int]] = field(default_factory=list)
    #: lifted mode: the schema event types of the text, best first (empty in the neighbourhood mode)
    types: list[TypeScore] = field(default_factory=list)
    #: lifted mode: the ranked facts, each stored edge once (None in the neighbourhood mode)
    facts: list[Fact] | None = None
    #: the question's relation the facts were spelled for, if given
    relation: str | None = None

    def truncation_note(self) -> str | None:
        """One line saying which high-degree events were cut, or None."""
        if not self.truncated:
            return None
        parts = [f'"{_node_text(self.graph, n) if n in self.graph else n}" {kept} of {deg:,}' for n, kept, deg in self.truncated[:3]]
        more = f" and {len(self.truncated) - 3} more" if len(self.truncated) > 3 else ""
        cut_by = ("the most similar to the text are kept" if self.facts is not None
                  else "the strongest edges (count or weight, then frequency, then id) are kept")
        return (f"Note: {len(self.truncated)} high-degree event(s) have more neighbours than shown; "
                f"{cut_by} ({'; '.join(parts)}{more}).")

    # -- facts ------------------------------------------------------------------------------
    def _rank(self, *nodes: str) -> tuple[int, float]:
        hop = min(self.hops.get(n, 99) for n in nodes)
        sim = max(self.similarity.get(n, -1.0) for n in nodes)
        return hop, -sim

    def _edges(self) -> list[tuple[tuple, str, str, str, dict]]:
        """(rank, src, dst, stored type, props) for every relation edge, most relevant first."""
        out = []
        for src, dst, rtype, props in self.graph.edges(keys=True, data=True):
            if rtype == "HAS_TYPE":
                continue
            name = relation_name(rtype, props)
            key = (*self._rank(src, dst), _node_text(self.graph, src), name, _node_text(self.graph, dst))
            out.append((key, src, dst, rtype, props))
        out.sort(key=lambda e: e[0])
        return out

    @property
    def triples(self) -> list[tuple[str, str, str]]:
        """(head text, relation name, tail text), most relevant first (a property, not a method).

        In the lifted mode the facts' order and spelling (the question's relation as asked)."""
        if self.facts is not None:
            return [(self.text_of(f.head), f.relation, self.text_of(f.tail)) for f in self.facts]
        return [(e[0][2], e[0][3], e[0][4]) for e in self._edges()]

    def text_of(self, node: str) -> str:
        """The caption of a node of the subgraph (its id when absent)."""
        return _node_text(self.graph, node) if node in self.graph else node

    @property
    def event_types(self) -> list[tuple[str, str]]:
        """(instance event text, event type text) from ``HAS_TYPE`` edges, most relevant first."""
        rows = [
            (self._rank(s, d), _node_text(self.graph, s), _node_text(self.graph, d))
            for s, d, t in self.graph.edges(keys=True)
            if t == "HAS_TYPE"
        ]
        return [(a, b) for _, a, b in sorted(rows)]

    # -- outputs ----------------------------------------------------------------------------
    def to_networkx(self) -> nx.MultiDiGraph:
        """A copy of the subgraph in the store's networkx shape."""
        return self.graph.copy()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "seeds": [{"id": i, "text": _node_text(self.graph, i), "score": round(s, 4)} for i, s in self.seeds if i in self.graph],
            "nodes": [
                {"id": n, "label": a.get("label"), "text": _node_text(self.graph, n), "hop": self.hops.get(n),
                 "score": round(self.similarity[n], 4) if n in self.similarity else None}
                for n, a in sorted(self.graph.nodes(data=True), key=lambda x: self._rank(x[0]))
            ],
            "event_types": [list(t) for t in self.event_types],
            "triples": [list(t) for t in self.triples],
            "types": [{"name": t.name, "ids": list(t.ids), "score": round(t.score, 4)} for t in self.types],
            "relation": self.relation,
            "truncated": [
                {"id": n, "text": _node_text(self.graph, n) if n in self.graph else None, "kept": kept, "degree": deg}
                for n, kept, deg in self.truncated
            ],
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_prompt(
        self,
        style: str = "direct",
        max_tokens: int | None = None,
        question: str | None = None,
        count_tokens: Callable[[str], int] = approx_tokens,
    ) -> str:
        """Prompt text carrying the subgraph (see the module docstring for style and trimming)."""
        if style not in STYLES:
            raise RetrieveError(f"unknown prompt style {style!r}; expected one of {', '.join(STYLES)}")
        if self.facts is not None:
            return self._lifted_prompt(style, max_tokens, question, count_tokens)
        types = [(self._type_rank(inst), f'- "{inst}" is an instance of the event type "{typ}".') for inst, typ in self.event_types]
        if style == "direct":
            facts = [(e[0], fact_line(e[0][2], e[0][3], e[0][4])) for e in self._edges()]
            head = [
                "Event knowledge retrieved from an event graph. Use it when it helps to answer.",
            ]
            sections = [("Event types:", types), ("Relations between events (head, relation, tail):", facts)]
        else:
            facts = [(e[0], _SENTENCE.get(e[0][3], '"{h}" {r} "{t}".').format(h=e[0][2], r=e[0][3], t=e[0][4])) for e in self._edges()]
            head = []
            sections = [("Event types:", types), ("Context:", facts)]
        note = self.truncation_note()
        if note:
            head = [*head, note]
        tail = [f"Question: {question}"] if question else []
        return _fit(head, sections, tail, max_tokens, count_tokens)

    def _lifted_prompt(self, style: str, max_tokens: int | None, question: str | None, count: Callable[[str], int]) -> str:
        """Lifted mode: the likely types in one line, then schema facts, then other stories' facts
        (direct style: one line per head and relation, ``- ("type", Causes, ["a", "b"])``)."""
        head = ["Event knowledge retrieved from an event graph. Use it when it helps to answer."]
        if self.types:
            names = ", ".join(json.dumps(t.name, ensure_ascii=False) for t in self.types[:3])
            head.append(f"Likely event types, best first: {names}.")
        note = self.truncation_note()
        if note:
            head.append(note)
        if style == "direct":
            titles = ("Relations between event types (head, relation, tail):",
                      "Relations between events of other stories (head, relation, tail):")
        else:
            titles = ("Context (event types):", "Context (events of other stories):")
        facts = [(0 if f.kind == "schema" else 1, self.text_of(f.head), f.relation, self.text_of(f.tail)) for f in self.facts or []]
        tail = [f"Question: {question}"] if question else []
        budget = None if max_tokens is None else max_tokens - count("\n".join(head + tail))
        body = pack_fact_lines(facts, titles, budget, count, group=style == "direct",
                               render=fact_group_line if style == "direct" else _context_line)
        return "\n".join(head + body + ([""] if tail and body else []) + tail)

    def _type_rank(self, inst_text: str) -> tuple:
        for n in self.graph.nodes:
            if _node_text(self.graph, n) == inst_text:
                return (*self._rank(n), inst_text)
        return (99, 0.0, inst_text)


def _context_line(head: str, relation: str, tails: Sequence[str]) -> str:
    """A context-style sentence of one fact (``"a" causes "b".``)."""
    return CONTEXT_TEMPLATES.get(relation, '"{h}" {r} "{t}".').format(h=head, r=relation, t=tails[0])


def _fit(
    head: list[str],
    sections: list[tuple[str, list[tuple[tuple, str]]]],
    tail: list[str],
    max_tokens: int | None,
    count: Callable[[str], int],
) -> str:
    """Keep head and tail; add fact lines by relevance while the whole stays within budget."""
    fixed = "\n".join(head + tail)
    budget = None if max_tokens is None else max_tokens - count(fixed)
    kept: dict[int, list[tuple[tuple, str]]] = {i: [] for i in range(len(sections))}
    candidates = sorted(((rank, i, line) for i, (_, lines) in enumerate(sections) for rank, line in lines), key=lambda x: (x[0], x[1]))
    for rank, i, line in candidates:
        cost = count(line) + (count(sections[i][0]) if not kept[i] and sections[i][0] else 0)
        if budget is not None and cost > budget:
            continue
        kept[i].append((rank, line))
        if budget is not None:
            budget -= cost
    body: list[str] = []
    for i, (title, _) in enumerate(sections):
        if kept[i]:
            if title:
                body.append(title)
            body.extend(line for _, line in kept[i])
    return "\n".join(head + body + ([""] if tail and body else []) + tail)


#: Nodes added per hop unless the caller says otherwise (the prompt is trimmed later anyway).
DEFAULT_HOP_LIMIT = 50
#: Neighbours followed from one node (its best by count/frequency) unless the caller says otherwise.
DEFAULT_PER_NODE = 20
#: Lifted mode: facts kept of one type (its most similar to the text) unless the caller says otherwise.
DEFAULT_TYPE_FACTS = 50
#: ``per_node``'s default: :data:`DEFAULT_PER_NODE` or :data:`DEFAULT_TYPE_FACTS`, by mode
AUTO = -1


#: Lifted types whose facts a retrieval brings, best first, unless the caller says otherwise.
DEFAULT_TYPES = 5


def retrieve(
    store: GraphStore,
    text: str,
    k: int = 5,
    hops: int = 2,
    rel_types: Sequence[str] | None = None,
    *,
    level: str | None = None,
    embed_model: str | None = None,
    limit: int | None = DEFAULT_HOP_LIMIT,
    per_node: int | None = AUTO,
    index: VectorIndex | None = None,
    relation: str | None = None,
    mode: str = "auto",
    search: str | None = None,
    types: int = DEFAULT_TYPES,
    exclude: Collection[str] = (),
    model_name: str | None = None,
) -> RetrievedSubgraph:
    """The facts that answer ``text``: lifted types' facts, or the k nearest events' neighbourhood.

    Args:
        store: The store to read.
        text: The query text (a sentence the store may never have seen).
        k: Seed events kept in ``.seeds`` (the lifted mode weighs ten times as many candidates).
        hops: Neighbourhood mode: steps taken from the seeds.
        rel_types: Paper names (``Causes``, ``After``...) or stored types; default the three event
            relations and ``HAS_TYPE``.
        level: Restrict the seeds to ``schema`` or ``instance`` events (then the neighbourhood mode).
        embed_model: The sentence-embedding model of the vector index, a folder or a
            sentence-transformers name (default: ``$EVENTKG_EMBED_MODEL``, else the bundled one).
        limit: Neighbourhood mode: at most this many nodes added per hop (None: all).
        per_node: At most this many neighbours followed from one node (neighbourhood, default
            :data:`DEFAULT_PER_NODE`) or facts of one type (lifted, default :data:`DEFAULT_TYPE_FACTS`),
            best-ranked first (None: all).
        index: A vector index the caller holds and knows is fresh (its staleness checks, and the
            adjacency's once loaded, are skipped).
        relation: The question's relation (``Causes``, ``IsResult``, ``Before``, ``After``,
            ``HasSubevent``, ``IsSubevent``): its facts from the lifted types come first,
            written with the type on the side asked.
        mode: ``auto`` (lifted on a store with schema types and no ``level``, else
            neighbourhood), ``lifted`` or ``neighbourhood``.
        search: Seeds from ``hybrid`` (dense + full-text), ``dense`` or ``fulltext`` search;
            default hybrid in the lifted mode, dense in the neighbourhood mode.
        types: Lifted mode: the best this many types bring their facts.
        exclude: Event ids hidden from this retrieval (never seeds, votes or facts): e.g. the
            instance events of the story a benchmark question comes from.
        model_name: Deprecated spelling of ``embed_model`` (a ``DeprecationWarning``; goes in the next release).

    Returns:
        The subgraph, its seeds, types and facts; ``to_prompt()``, ``to_json()`` and the
        ``triples`` property render it.

    Raises:
        RetrieveError: The text is empty, or a relation type, relation, mode or search is unknown.
    """
    if not text.strip():
        raise RetrieveError("retrieve: the query text is empty")
    rtypes = stored_types(rel_types)
    _check(mode, search, relation)
    if model_name is not None:
        warnings.warn("retrieve(model_name=...) is deprecated: use embed_model=; model_name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        embed_model = embed_model or model_name
    vi = index or open_index(store, embed_model, level, notice=_notice, progress=_progress)
    layer = type_layer(store, (str(index_dir(store)), len(vi))) if mode == "lifted" or (mode == "auto" and level is None) else None
    if layer is not None and (mode == "lifted" or layer):
        from eventkg.queries.retrieval.lifted import lifted_parts

        cap = DEFAULT_TYPE_FACTS if per_node == AUTO else per_node
        p = lifted_parts(store, vi, layer, text, k=k, n_types=types, relation=relation, per_node=cap,
                         search=search or "hybrid", exclude=set(exclude), rel_types=rtypes)
        return RetrievedSubgraph(text, p.seeds, p.graph, p.hops, p.similarity, p.truncated, p.types, p.facts, relation)
    cap = DEFAULT_PER_NODE if per_node == AUTO else per_node
    return _neighbourhood(store, vi, text, k, hops, rtypes, cap, limit, search or "dense", set(exclude),
                          trust=index is not None)


def _notice(message: str) -> None:
    """A lazy index build says what it does on stderr (the CLI draws bars instead)."""
    print(message, file=sys.stderr, flush=True)


def _progress(_stage: str, done: int, total: int | None) -> None:
    end = "\n" if total is not None and done >= total else ""
    print(f"\rembedding events for the vector index: {done:,} of {total:,}", end=end, file=sys.stderr, flush=True)


def _check(mode: str, search: str | None, relation: str | None) -> None:
    from eventkg.queries.retrieval.hybrid import SEARCHES

    if mode not in MODES:
        raise RetrieveError(f"unknown retrieval mode {mode!r}; expected one of {', '.join(MODES)}")
    if search is not None and search not in SEARCHES:
        raise RetrieveError(f"unknown search {search!r}; expected one of {', '.join(SEARCHES)}")
    if relation is not None and relation not in CANONICAL:
        raise RetrieveError(f"unknown relation {relation!r}; expected one of {', '.join(CANONICAL)}")


def _neighbourhood(
    store: GraphStore,
    vi: VectorIndex,
    text: str,
    k: int,
    hops: int,
    types: list[str],
    per_node: int | None,
    limit: int | None,
    search: str,
    exclude: set[str],
    *,
    trust: bool,
) -> RetrievedSubgraph:
    """The k nearest events and their capped neighbourhood (the mode of stores without types)."""
    qvec = vi.embedder.encode([text])[0]
    if search == "dense" and not exclude:
        seeds = vi.search(qvec, k)[0]
    else:
        from eventkg.queries.retrieval.hybrid import seed_events

        seeds = seed_events(store, vi, text, qvec, k, search=search, exclude=exclude)
    seed_ids = [i for i, _ in seeds]
    truncated: list[tuple[str, int, int]] = []
    if all(t in adjacency.EVENT_TYPES for t in types):
        graph, truncated = _bounded(store, seed_ids, hops, types, per_node, limit, trust=trust)
    else:
        graph = store.neighbourhood(seed_ids, hops=hops, rel_types=types, direction="both", limit=limit, induced=False)
    if exclude:
        graph.remove_nodes_from([n for n in exclude if n in graph])
    hop = _hop_distances(graph, seed_ids)
    vecs = vi.vectors(list(graph.nodes))
    sims: dict[str, float] = {}
    if vecs:
        ids = list(vecs)
        scores = np.stack([vecs[i] for i in ids]) @ qvec
        sims = {i: float(s) for i, s in zip(ids, scores, strict=True)}
    return RetrievedSubgraph(text, seeds, graph, hop, sims, truncated)


def _bounded(
    store: GraphStore,
    seed_ids: list[str],
    hops: int,
    types: list[str],
    per_node: int | None,
    limit: int | None,
    *,
    trust: bool,
) -> tuple[nx.MultiDiGraph, list[tuple[str, int, int]]]:
    """The capped neighbourhood from the ranked adjacency, with node properties from the store."""
    from eventkg.queries.vectors.index import event_count

    adj = adjacency.open_adjacency(store, index_dir(store), None if trust else event_count(store), types)
    exp = adjacency.expand(adj, adj.positions(seed_ids), hops, types, per_node, limit)
    ids = {p: adj.id_of(p) for p in exp.hops}
    props = store.get_nodes("Event", list(ids.values()))
    g = nx.MultiDiGraph()
    for p in sorted(exp.hops, key=lambda q: (exp.hops[q], ids[q])):
        nid = ids[p]
        g.add_node(nid, label="Event", **{k: v for k, v in props.get(nid, {}).items() if v is not None})
    for src, dst, rtype, w in exp.edges:
        attrs = {}
        prop = columnar.WEIGHT_PROPERTY[rtype]
        if prop and w == w:  # not NaN
            attrs[prop] = w
        g.add_edge(ids[src], ids[dst], key=rtype, type=rtype, **attrs)
    return g, [(ids.get(p) or adj.id_of(p), kept, deg) for p, kept, deg in exp.truncated]


def _hop_distances(g: nx.MultiDiGraph, seeds: list[str]) -> dict[str, int]:
    """Hops from the nearest seed, edges taken in either direction."""
    dist = {s: 0 for s in seeds if s in g}
    frontier = list(dist)
    while frontier:
        nxt = []
        for n in frontier:
            for m in (*g.successors(n), *g.predecessors(n)):
                if m not in dist:
                    dist[m] = dist[n] + 1
                    nxt.append(m)
        frontier = nxt
    return dist
