"""Small worlds the query tests share: three coherent scenarios with look-alike loose events, and clustered vectors.

``write_world`` writes the scenarios through ``write_batch`` (schema events, a few typed
instances, the edges); ``clustered`` makes unit vectors shaped like sentence embeddings.
"""

from __future__ import annotations

import numpy as np

from eventkg.graphstore.base import Batch, GraphStore
from eventkg.graphstore.model import canonical_edge, event_id

# A small world of three scenarios (schema level) with a few instance events typed by them.
SCHEMA_TRIPLES = [
    # studying
    ("study", "Causes", "learn"),
    ("study", "HasSubevent", "read book"),
    ("learn", "Before", "remember information"),
    ("learn", "Causes", "pass exam"),
    ("pass exam", "Causes", "graduate"),
    ("graduate", "Causes", "get job"),
    ("take exam", "Before", "pass exam"),
    # cooking
    ("buy food", "Before", "cook dinner"),
    ("cook dinner", "HasSubevent", "chop vegetables"),
    ("cook dinner", "Causes", "eat dinner"),
    ("eat dinner", "Causes", "feel full"),
    ("eat dinner", "HasSubevent", "chew food"),
    ("chew food", "HasSubevent", "swallow food"),
    ("feel full", "IsResult", "eat dessert"),
    # travelling
    ("book flight", "Before", "board plane"),
    ("board plane", "Before", "fly"),
    ("fly", "Causes", "arrive"),
    ("travel", "HasSubevent", "fly"),
    ("arrive", "After", "land"),
]
# unconnected events that look like answers (hard-negative material)
LOOSE_EVENTS = [
    "acquire knowledge", "gain understanding", "memorize facts", "forget information",
    "teach class", "attend lecture", "write essay", "do homework", "bake bread", "wash dishes",
    "rent car", "miss flight", "learn", "study hard",
]
INSTANCES = [
    ("Tom reads the biology textbook all evening", "read book"),
    ("Tom finally understands how cells divide", "learn"),
    ("Anna chops onions and carrots for the stew", "chop vegetables"),
]


def world_events() -> set[str]:
    return {t for h, _, tl in SCHEMA_TRIPLES for t in (h, tl)} | set(LOOSE_EVENTS)


def write_world(store: GraphStore) -> None:
    """Write the world through ``write_batch`` (schema events, instances, edges)."""
    b = Batch()
    for text in sorted(world_events()):
        b.add_node("Event", {"id": event_id(text), "text": text, "level": "schema", "sources": ["test"]})
    for text, _ in INSTANCES:
        b.add_node("Event", {"id": event_id(text, "instance"), "text": text, "level": "instance", "sources": ["test"]})
    for h, rel, t in SCHEMA_TRIPLES:
        src, rtype, dst = canonical_edge(event_id(h), rel, event_id(t))
        b.add_edge(rtype, {"src": src, "dst": dst, "sources": ["test"]})
    for text, typ in INSTANCES:
        b.add_edge("HAS_TYPE", {"src": event_id(text, "instance"), "dst": event_id(typ), "sources": ["test"]})
    store.write_batch(b)


def clustered(n: int, d: int, centres: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around random centres (the shape of real sentence embeddings)."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, d)).astype(np.float32)
    x = c[rng.integers(0, centres, n)] + rng.normal(scale=0.6, size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)
