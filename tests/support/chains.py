"""Chains of events as one batch: the embedded store's write-path tests' smallest graph.

``chain_batch(n)``: events ``e{start}``..``e{start + n - 1}`` (schema level), each joined to the
next by a SYNCHRONOUS edge and, with ``skip=True``, to the one after next by a PRECEDENCE edge.
"""

from __future__ import annotations

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id


def chain_batch(n: int, start: int = 0, *, skip: bool = False) -> Batch:
    b = Batch()
    ids = [event_id(f"e{i}") for i in range(start, start + n)]
    for i, eid in enumerate(ids, start):
        b.add_node("Event", {"id": eid, "text": f"e{i}", "level": "schema", "sources": ["t"]})
    for a, c in zip(ids, ids[1:], strict=False):
        b.add_edge("SYNCHRONOUS", {"src": a, "dst": c, "sources": ["t"], "count": 2.0})
    if skip:
        for a, c in zip(ids, ids[2:], strict=False):
            b.add_edge("PRECEDENCE", {"src": a, "dst": c, "sources": ["t"], "count": 1.0})
    return b
