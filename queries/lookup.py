"""Events of a store named by their text: the lookups behind ``eventkg paths`` and ``eventkg negatives``.

A user names events as text (``learn``, ``pass exam``); the store keys them by
:func:`~eventkg.graphstore.model.event_id` of (normalised text, level). These functions turn
names into ids, with one error that says what was looked for and where.
"""

from __future__ import annotations

import math
from typing import Any

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import CANONICAL, EVENT_LEVELS, check_event_level, event_id, normalise_text
from eventkg.queries.errors import UnknownEventError

LEVELS = EVENT_LEVELS  # the data model's event levels


def find_event(store: GraphStore, text: str, level: str | None = None) -> tuple[str, dict[str, Any]]:
    """The Event named ``text`` (its id, or its text at ``level``; schema first when no level): ``(id, node)``.

    >>> find_event(store, "pass exam", "schema")[1]["text"]  # doctest: +SKIP
    'pass exam'
    """
    check_event_level(level, UnknownEventError)
    for eid in (text, *(event_id(text, lvl) for lvl in ([level] if level else LEVELS))):
        node = store.get_nodes("Event", [eid]).get(eid)
        if node is not None:
            return eid, node
    where = f"at level {level}" if level else "at any level"
    raise UnknownEventError(f"no Event with text {normalise_text(text)!r} {where} in store {store.url} "
                            f"(no Event {text!r} as an id either)")


def default_answer(store: GraphStore, query_id: str, relation: str) -> str:
    """An event the query has a direct ``relation`` edge to (the first by text): a question's answer by default."""
    rtype, forward = CANONICAL[relation]
    g = store.neighbourhood([query_id], hops=1, rel_types=[rtype], direction="out" if forward else "in")
    others = sorted((g.nodes[n].get("text") or n, n) for n in g.nodes if n != query_id)
    if not others:
        raise UnknownEventError(f"the event has no {relation} edge to take as the answer; give --answer TEXT")
    return others[0][1]


def paths_between(store: GraphStore, event_a: str, event_b: str, *, max_len: int = 4, level: str = "schema",
                  inducing_only: bool = True) -> list[dict[str, Any]]:
    """The paths of up to ``max_len`` edges from ``event_a`` to ``event_b``, each with the relation it induces.

    Edges are read both ways (a stored edge walked backwards reads as its inverse). Only the
    neighbourhood of the two events is fetched, not the whole graph: every node on a path of
    at most L edges lies within ceil(L/2) hops of one end. Each path is
    ``{"nodes": [names], "relations": [...], "induced": str | None, "length": int}``.
    """
    from eventkg.queries.graph.csr import EVENT_REL_TYPES
    from eventkg.queries.graph.event_graph import EventIndex
    from eventkg.queries.induction.induce import paths

    a, _ = find_event(store, event_a, level)
    b, _ = find_event(store, event_b, level)
    g = store.neighbourhood([a, b], hops=math.ceil(max_len / 2), rel_types=list(EVENT_REL_TYPES))
    idx = EventIndex.from_graph(g)
    return [
        {"nodes": [idx.name(idx.pos[n]) for n in p.nodes], "relations": list(p.relations), "induced": p.induced,
         "length": len(p)}
        for p in paths(idx, a, b, max_len, inducing_only=inducing_only)
    ]
