"""The shapes of the node and edge rows a store takes and gives back: :class:`NodeRow`, :class:`EdgeRow`.

A row is a plain dict (loaders build millions of them; a class per row would cost time), typed
here so the interface says what it carries. The properties are those :mod:`eventkg.graphstore.model`
declares for a label or type (``NODE_TYPES``, ``REL_TYPES``); a row carries only its own label's
or type's (``validate_batch`` refuses others), so every property key is optional. A property's
value may be None: on a write it never overwrites a stored value, on a read it is one the node or
edge does not hold. ``tests/graphstore/test_rows.py`` keeps these keys and types in step with the
model's declarations.
"""

from typing import Required, TypedDict


class NodeRow(TypedDict, total=False):
    """One node: ``{"id": str, "sources": [str, ...], <declared properties>...}``.

    ``id`` identifies the node within its label (with the label: ``(label, id)``); ``sources``
    names the datasets that wrote it (unioned when a second write meets the node). The label is
    not in the row: it is the key the row is filed under (``Batch.nodes[label]``, a method's
    ``label`` argument). Reads give ``id`` and ``sources`` always.
    """

    id: Required[str]
    sources: list[str]
    # Event
    text: str | None
    level: str | None
    frequency: float | None
    pattern: str | None
    cluster: int | None
    # Concept
    name: str | None
    # Argument (also ``text``, ``split``)
    qtype: str | None
    id_string: str | None
    split: str | None
    state: int | None
    # Question (also ``level``)
    qid: str | None
    task: str | None
    rel: str | None
    origin: str | None
    question: str | None
    e0: str | None
    e1: str | None
    choices: list[str] | None
    answer: str | None
    context: str | None
    context_tpl: str | None
    payload: str | None


class EdgeRow(TypedDict, total=False):
    """One edge: ``{"src": id, "dst": id, "sources": [str, ...], <declared properties>...}``.

    ``src`` and ``dst`` are node ids in the stored direction; their labels come from the
    relationship type (:data:`eventkg.graphstore.model.REL_TYPES`), which is the key the row is
    filed under (``Batch.edges[TYPE]``), so ``(type, src, dst)`` identifies the edge. ``sources``
    as for nodes. Reads give ``src``, ``dst`` and ``sources`` always.
    """

    src: Required[str]
    dst: Required[str]
    sources: list[str]
    # CAUSES, BEFORE, HAS_SUBEVENT, RELATED
    weight: float | None
    # ASER's discourse relations
    count: float | None
    # NOUN_ENTAIL, VERB_ENTAIL, EVENT_ENTAIL (AbsPyramid)
    instance: str | None
    concept: str | None
    label: int | None
    det_split: str | None
    gen_split: str | None
    gen_row: str | None
    # ABSTRACTS_TO, RELATED
    relation: str | None
    # CLoMo's premise relations
    state: int | None
    # PART_OF, HAS_CHOICE, HAS_CONTEXT
    order: int | None
    # ASKS
    role: str | None
    # HAS_CHOICE (also ``order``)
    correct: int | None
