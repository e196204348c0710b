"""Typed row builders shared by the loaders, so every source spells nodes the same way.

Schema-level events store ``text`` = the normalised phrase (``pass_exam`` -> ``pass exam``) so a
node looks the same whichever dataset wrote it last; instance events keep their sentence.
"""

from __future__ import annotations

import hashlib
from typing import Any

from eventkg.graphstore.model import ID_DIGEST_BYTES, canonical_edge, event_id, id_text, node_id, normalise_text
from eventkg.graphstore.rows import EdgeRow, NodeRow

_EVENT_PREFIX = {lvl: f"Event\x1f{lvl}\x1f" for lvl in ("schema", "instance")}


def fast_normalise(text: str) -> str:
    """:func:`eventkg.graphstore.model.normalise_text`, skipping the regexes when ``text`` is already
    normal (ASER words are lower-case ASCII, single-spaced): the hot path of big ingests."""
    if (
        text.isascii()
        and text.islower()
        and "_" not in text
        and "  " not in text
        and "person" not in text
        and text == text.strip()
        and not any(c in text for c in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
    ):
        return text
    return normalise_text(text)


def fast_event_id(text: str, level: str = "schema") -> str:
    """Same value as :func:`eventkg.graphstore.model.event_id`, faster on already-normal text."""
    prefix = _EVENT_PREFIX.get(level)
    if prefix is None:
        return event_id(text, level)
    return _normal_event_id(prefix, fast_normalise(text))


def _normal_event_id(prefix: str, norm: str) -> str:
    """The event id of an already normalised text under its level's ``_EVENT_PREFIX``."""
    return id_text(hashlib.blake2b((prefix + norm).encode("utf-8"), digest_size=ID_DIGEST_BYTES).digest())


def event_row(text: str, level: str, source: str, **props: Any) -> NodeRow:
    """An ``Event`` node row; ``props`` with value None are left out (they never overwrite)."""
    norm = fast_normalise(text)
    shown = norm if level == "schema" else " ".join(text.split())
    prefix = _EVENT_PREFIX.get(level)
    eid = _normal_event_id(prefix, norm) if prefix else event_id(text, level)
    row: dict[str, Any] = {"id": eid, "text": shown, "level": level, "sources": [source]}
    row.update({k: v for k, v in props.items() if v is not None})
    return row


def node_row(label: str, key: str, source: str, **props: Any) -> NodeRow:
    """A non-Event node row whose id comes from its natural key."""
    row: dict[str, Any] = {"id": node_id(label, key), "sources": [source]}
    row.update({k: v for k, v in props.items() if v is not None})
    return row


def edge_row(src: str, dst: str, source: str, **props: Any) -> EdgeRow:
    row: dict[str, Any] = {"src": src, "dst": dst, "sources": [source]}
    row.update({k: v for k, v in props.items() if v is not None})
    return row


def event_relation_edge(
    head_id: str, relation: str, tail_id: str, source: str, **props: Any
) -> tuple[str, EdgeRow]:
    """(head, Causes|IsResult|..., tail) -> (STORED_TYPE, edge row) in canonical direction."""
    src, rtype, dst = canonical_edge(head_id, relation, tail_id)
    return rtype, edge_row(src, dst, source, **props)
