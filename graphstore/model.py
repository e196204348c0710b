"""The eventkg data model: node labels, relationship types, event relations and ids.

Everything that writes to or reads from a store agrees on this one module, so the two
backends declare identical schemas and the loaders never spell a label by hand.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field

from eventkg.graphstore.errors import EventLevelError

# Column types understood by both backends (Ladybug declares them, Neo4j ignores them).
STRING = "STRING"
DOUBLE = "DOUBLE"
INT64 = "INT64"
STRING_LIST = "STRING[]"


@dataclass(frozen=True)
class NodeType:
    """A node label with its declared properties (``id`` and ``sources`` are implicit)."""

    label: str
    properties: dict[str, str]
    caption: str  # property Neo4j Browser shows as the node's caption


@dataclass(frozen=True)
class RelType:
    """A relationship type joining exactly one (from, to) label pair."""

    name: str
    source: str
    target: str
    properties: dict[str, str] = field(default_factory=dict)


NODE_TYPES: dict[str, NodeType] = {
    n.label: n
    for n in [
        NodeType(
            "Event",
            {"text": STRING, "level": STRING, "frequency": DOUBLE, "pattern": STRING, "cluster": INT64},
            caption="text",
        ),
        NodeType("Concept", {"name": STRING}, caption="name"),
        NodeType(
            "Argument",
            {"text": STRING, "qtype": STRING, "id_string": STRING, "split": STRING, "state": INT64},
            caption="text",
        ),
        NodeType("Statement", {"text": STRING}, caption="text"),
        NodeType("Premise", {"text": STRING}, caption="text"),
        NodeType(
            "Question",
            {
                "qid": STRING,
                "task": STRING,
                "level": STRING,
                "rel": STRING,
                "split": STRING,
                "origin": STRING,
                "question": STRING,
                "e0": STRING,
                "e1": STRING,
                "choices": STRING_LIST,
                "answer": STRING,
                "context": STRING,
                "context_tpl": STRING,  # JSON list of [head, Relation, tail]
                "payload": STRING,  # the whole source row as JSON, for lossless export
            },
            caption="qid",
        ),
    ]
}

# --- event relations ---------------------------------------------------------------------

EVENT_RELATIONS = ("Causes", "IsResult", "Before", "After", "HasSubevent", "IsSubevent")
# paper name -> (stored type, stored forward?)  Only the canonical direction is stored.
CANONICAL: dict[str, tuple[str, bool]] = {
    "Causes": ("CAUSES", True),
    "IsResult": ("CAUSES", False),
    "Before": ("BEFORE", True),
    "After": ("BEFORE", False),
    "HasSubevent": ("HAS_SUBEVENT", True),
    "IsSubevent": ("HAS_SUBEVENT", False),
}
INVERSE: dict[str, str] = {
    "Causes": "IsResult",
    "IsResult": "Causes",
    "Before": "After",
    "After": "Before",
    "HasSubevent": "IsSubevent",
    "IsSubevent": "HasSubevent",
}
FAMILIES: dict[str, tuple[str, str]] = {
    "causal": ("Causes", "IsResult"),
    "temporal": ("Before", "After"),
    "hierarchical": ("HasSubevent", "IsSubevent"),
}
VAGUE = "Vague"
#: an Event's ``level``: a type (EV²'s schema events, ASER, EECKG) or one instance of a type (EV² instances)
EVENT_LEVELS = ("schema", "instance")


def check_event_level(level: str | None, error: type[Exception] = EventLevelError, *, optional: bool = True) -> None:
    """Refuse a ``level`` that is not one of :data:`EVENT_LEVELS`: the one check of every caller.

    ``None`` (both levels) passes when ``optional``. ``error`` is the caller's error class, so a
    layer raises its own (one line, naming no command-line flag).
    """
    if (level is None and optional) or level in EVENT_LEVELS:
        return
    raise error(f"unknown event level {level!r}; expected one of {', '.join(EVENT_LEVELS)}")
STORED_TO_FORWARD = {"CAUSES": "Causes", "BEFORE": "Before", "HAS_SUBEVENT": "HasSubevent"}


def family_of(relation: str) -> str:
    """The family name (causal/temporal/hierarchical) of a paper relation name."""
    for fam, members in FAMILIES.items():
        if relation in members:
            return fam
    raise ValueError(f"unknown event relation {relation!r}; expected one of {', '.join(EVENT_RELATIONS)}")


def canonical_edge(head: str, relation: str, tail: str) -> tuple[str, str, str]:
    """(head, Relation, tail) in paper names -> (src, STORED_TYPE, dst) in stored direction."""
    if relation not in CANONICAL:
        raise ValueError(f"unknown event relation {relation!r}; expected one of {', '.join(EVENT_RELATIONS)}")
    rtype, forward = CANONICAL[relation]
    return (head, rtype, tail) if forward else (tail, rtype, head)


ASER_RELATIONS = (
    "Precedence",
    "Succession",
    "Synchronous",
    "Reason",
    "Result",
    "Condition",
    "Contrast",
    "Concession",
    "Conjunction",
    "Instantiation",
    "Restatement",
    "ChosenAlternative",
    "Alternative",
    "Exception",
    "Co_Occurrence",
)


def upper_snake(name: str) -> str:
    """ChosenAlternative -> CHOSEN_ALTERNATIVE, Co_Occurrence -> CO_OCCURRENCE."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).replace("__", "_").upper()


ENTAIL_RELATIONS = ("NOUN_ENTAIL", "VERB_ENTAIL", "EVENT_ENTAIL")
CLOMO_RELATIONS = ("NECESSARY_ASSUMPTION", "SUFFICIENT_ASSUMPTION", "STRENGTHENS", "WEAKENS")

_WEIGHTED = {"weight": DOUBLE}
# AbsPyramid ships its Detection and Generation tasks with their own splits; one tuple may
# sit in both (e.g. Detection test, Generation train), so each task's split is its own
# property: ``det_split`` from Detection files, ``gen_split`` from Generation files; ``gen_row``
# names the Generation row (a hash of its event and concept string) whose ``[SEP]`` concepts
# regroup into the one item the release scores per row.
_ENTAIL = {"instance": STRING, "concept": STRING, "label": INT64, "det_split": STRING, "gen_split": STRING,
           "gen_row": STRING}

REL_TYPES: dict[str, RelType] = {
    r.name: r
    for r in [
        *(RelType(t, "Event", "Event", dict(_WEIGHTED)) for t in ("CAUSES", "BEFORE", "HAS_SUBEVENT")),
        *(RelType(upper_snake(a), "Event", "Event", {"count": DOUBLE}) for a in ASER_RELATIONS),
        *(RelType(t, "Event", "Event", dict(_ENTAIL)) for t in ENTAIL_RELATIONS),
        RelType("ABSTRACTS_TO", "Event", "Concept", {"relation": STRING}),
        RelType("HAS_TYPE", "Event", "Event"),
        *(RelType(t, "Premise", "Argument", {"state": INT64}) for t in CLOMO_RELATIONS),
        RelType("COUNTERFACTUAL_OF", "Argument", "Argument"),
        RelType("PART_OF", "Statement", "Argument", {"order": INT64}),
        # a benchmark question and the events it mentions
        RelType("ASKS", "Question", "Event", {"role": STRING}),
        RelType("HAS_CHOICE", "Question", "Event", {"order": INT64, "correct": INT64}),
        RelType("HAS_CONTEXT", "Question", "Event", {"order": INT64}),
        # any other ConceptNet relation kept under its own name (EECKG)
        RelType("RELATED", "Event", "Event", {"relation": STRING, "weight": DOUBLE}),
    ]
}

# --- ids and normalisation -----------------------------------------------------------------

_PERSON = re.compile(r"\bperson([xyz])\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    """Lower-case, `_` to space, collapse whitespace; PersonX/Y/Z keep their spelling."""
    t = _SPACE.sub(" ", text.replace("_", " ").lower()).strip()
    return _PERSON.sub(lambda m: "Person" + m.group(1).upper(), t)


#: bytes of the blake2b digest behind every stable id. Written as 12 URL-safe base64 characters,
#: an id is short enough for LadybugDB to hold inline in its primary-key index (12 bytes or fewer),
#: so a rel COPY's lookup of an edge's ends reads no overflow page (``docs/scale.md``).
ID_DIGEST_BYTES = 9
ID_CHARS = 4 * ID_DIGEST_BYTES // 3  # a stable id's length (3 bytes to 4 characters, no padding)
ID_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"  # URL-safe base64's 64


def id_text(digest: bytes) -> str:
    """A stable id's text from its ``ID_DIGEST_BYTES``-byte digest (URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(digest).decode("ascii")


_FIRST_SCHEME_ID = re.compile(r"[0-9a-f]{20}")


def first_scheme_id(node_id: str) -> bool:
    """True for an id of eventkg's first scheme (20 hex digits of a 10-byte digest), which a store
    written before the ids became 12 characters holds: new rows would not meet its nodes."""
    return bool(_FIRST_SCHEME_ID.fullmatch(node_id))


def stable_id(*parts: str) -> str:
    """A short, stable id from parts (same input, same id, in every process): 12 characters."""
    return id_text(hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=ID_DIGEST_BYTES).digest())


def event_id(text: str, level: str = "schema") -> str:
    """The id of an Event: one node per (normalised text, level), shared across datasets."""
    return stable_id("Event", level, normalise_text(text))


def node_id(label: str, key: str) -> str:
    """The id of a non-Event node from its natural key (e.g. a concept name, a CLoMo id)."""
    return stable_id(label, normalise_text(key) if label == "Concept" else key)
