"""What a store holds, counted: ``eventkg stats`` is :func:`store_stats`.

Only counts read in the store (no graph is loaded), so it answers at once on any size.
"""

from __future__ import annotations

from typing import Any

from eventkg.graphstore.base import GraphStore

# An instance a source names without its sentence (EV²'s release has some) is stored with text ''.
WITHOUT_TEXT = "MATCH (e:Event) WHERE e.level = 'instance' AND e.text = '' RETURN count(e) AS n"


def instances_without_text(store: GraphStore) -> int:
    """Instance events stored without text (see ``ingest/ev2.py``), counted in the store."""
    return int(store.query(WITHOUT_TEXT)[0]["n"])


def store_stats(store: GraphStore) -> dict[str, Any]:
    """What the store holds, counted.

    Args:
        store: An open store.

    Returns:
        ``{"nodes": {label: n}, "edges": {TYPE: n}, "instances_without_text": n}``.

    Examples:
        >>> store_stats(open_store("./my.lbug"))["nodes"]  # doctest: +SKIP
    """
    counts = store.counts()
    counts["instances_without_text"] = instances_without_text(store)
    return counts
