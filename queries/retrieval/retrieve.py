"""Retrieval for prompts: text -> nearest events -> typed k-hop subgraph -> prompt text.

``retrieve(store, "PersonX studies for the exam", k=5, hops=2)`` embeds the text, finds
the k nearest Event nodes in the store's FAISS index (:mod:`eventkg.queries.vectors.index`),
pulls their ``hops``-hop neighbourhood over the event relations (and ``HAS_TYPE``, so
instance events bring their event types) with ``store.neighbourhood``, and wraps it in a
:class:`RetrievedSubgraph`.

``.to_prompt(style="direct")`` follows the "direct guidance" of the EV² paper's section 5.4:
the event types of the events and the relations between event types are listed before
the question. ``style="context"`` writes EV²'s context sentences instead
(``"learn" is before "remember information".``).

Trimming: with ``max_tokens`` the header, footer and question are always kept and the
fact lines are added in order of relevance while they fit. Relevance of a line = the
smallest hop distance of its events from the retrieved seeds, then the highest cosine
similarity of its events to the query text. Tokens are counted by ``count_tokens``
(default :func:`approx_tokens`: words and punctuation marks, each one token — close to
what BPE tokenizers give for short English phrases; pass e.g.
``lambda s: len(tokenizer.encode(s))`` for your model's exact count).

Bounded on big graphs: over Event->Event types the neighbourhood comes from the ranked
adjacency of :mod:`eventkg.queries.graph.adjacency` (built once beside the vector index, memory-mapped
after). Each node contributes at most ``per_node`` neighbours (default
:data:`DEFAULT_PER_NODE`), its best by edge count/weight, then by the neighbour's
frequency; each hop adds at most ``limit`` new nodes. A node that had more is listed in
``RetrievedSubgraph.truncated`` as (id, kept, degree), in ``to_dict()["truncated"]`` and
in a note line of the prompt, so a reader knows a hub was cut. Other types (e.g.
``ABSTRACTS_TO``) go through ``store.neighbourhood`` with the per-hop limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from eventkg.errors import EventKGError
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import ASER_RELATIONS, CANONICAL, NODE_TYPES, REL_TYPES, upper_snake
from eventkg.queries.graph import adjacency, columnar
from eventkg.queries.vectors.files import index_dir
from eventkg.queries.vectors.index import VectorIndex, open_index

DEFAULT_REL_TYPES = ("CAUSES", "BEFORE", "HAS_SUBEVENT", "HAS_TYPE")
STYLES = ("direct", "context")
_NAMES = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"} | {
    upper_snake(a): a for a in ASER_RELATIONS
}
_SENTENCE = {
    "Causes": '"{h}" causes "{t}".',
    "Before": '"{h}" is before "{t}".',
    "HasSubevent": '"{t}" is a subevent of "{h}".',
}


class RetrieveError(EventKGError):
    """A retrieval request names an unknown relation type, style or level."""


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
    """A retrieved neighbourhood, its seeds and what each node's relevance is."""

    query: str
    seeds: list[tuple[str, float]]
    graph: nx.MultiDiGraph
    hops: dict[str, int] = field(default_factory=dict)
    similarity: dict[str, float] = field(default_factory=dict)
    #: (event id, neighbours kept, neighbours it has) for each node whose neighbours were capped
    truncated: list[tuple[str, int, int]] = field(default_factory=list)

    def truncation_note(self) -> str | None:
        """One line saying which high-degree events were cut, or None."""
        if not self.truncated:
            return None
        parts = [f'"{_node_text(self.graph, n) if n in self.graph else n}" {kept} of {deg:,}' for n, kept, deg in self.truncated[:3]]
        more = f" and {len(self.truncated) - 3} more" if len(self.truncated) > 3 else ""
        return (f"Note: {len(self.truncated)} high-degree event(s) have more neighbours than shown; "
                f"only the most frequent are kept ({'; '.join(parts)}{more}).")

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
        """(head text, relation name, tail text), most relevant first."""
        return [(e[0][2], e[0][3], e[0][4]) for e in self._edges()]

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
        types = [(self._type_rank(inst), f'- "{inst}" is an instance of the event type "{typ}".') for inst, typ in self.event_types]
        if style == "direct":
            facts = [(e[0], f'- ({e[0][2]}, {e[0][3]}, {e[0][4]})') for e in self._edges()]
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

    def _type_rank(self, inst_text: str) -> tuple:
        for n in self.graph.nodes:
            if _node_text(self.graph, n) == inst_text:
                return (*self._rank(n), inst_text)
        return (99, 0.0, inst_text)


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


def retrieve(
    store: GraphStore,
    text: str,
    k: int = 5,
    hops: int = 2,
    rel_types: Sequence[str] | None = None,
    *,
    level: str | None = None,
    model_name: str | None = None,
    limit: int | None = DEFAULT_HOP_LIMIT,
    per_node: int | None = DEFAULT_PER_NODE,
    index: VectorIndex | None = None,
) -> RetrievedSubgraph:
    """The k events nearest to ``text`` and their ``hops``-hop typed neighbourhood.

    Args:
        store: The store to read.
        text: The query text, embedded with the vector index's model.
        k: Seed events: the nearest ``k``.
        hops: Steps taken from the seeds.
        rel_types: Paper names (``Causes``, ``After``...) or stored types; default the three event
            relations and ``HAS_TYPE``.
        level: Restrict the seeds to ``schema`` or ``instance`` events.
        model_name: The sentence-transformers model of the vector index (default: the setting's).
        limit: At most this many nodes added per hop (None: all), so a hub in a big graph cannot
            turn one prompt into thousands of triples.
        per_node: At most this many neighbours followed from one node, best-ranked first (None: all).
        index: A vector index the caller holds and knows is fresh (its staleness checks, and the
            adjacency's once loaded, are skipped).

    Returns:
        The subgraph, its seeds and scores; ``to_prompt()``, ``to_json()`` and ``triples()`` render it.

    Raises:
        RetrieveError: The text is empty, or a relation type is unknown.
    """
    if not text.strip():
        raise RetrieveError("retrieve: the query text is empty")
    types = stored_types(rel_types)
    vi = index or open_index(store, model_name, level)
    qvec = vi.embedder.encode([text])[0]
    seeds = vi.search(qvec, k)[0]
    seed_ids = [i for i, _ in seeds]
    truncated: list[tuple[str, int, int]] = []
    if all(t in adjacency.EVENT_TYPES for t in types):
        graph, truncated = _bounded(store, seed_ids, hops, types, per_node, limit, trust=index is not None)
    else:
        graph = store.neighbourhood(seed_ids, hops=hops, rel_types=types, direction="both", limit=limit, induced=False)
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
