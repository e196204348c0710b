"""Facts of lifted types, ranked for a text and a question, and their prompt lines.

:func:`rank_facts` orders what a prompt may hold, most useful first, each fact once:

1. when the question's relation is known (``relation="IsResult"``...), the facts of that
   relation from the lifted types, with the type on the side the question asks about;
2. the other schema facts of the lifted types, best type first;
3. facts between instance events of other stories around the seed instances, best seed first.

Inside a type its facts go by the similarity of the other end to the text; a type with more
than ``per_node`` facts keeps its most similar (listed as truncated). A fact is shown in the
direction asked: an ``IsResult`` question sees ``("type", IsResult, "cause")``, not only the
stored ``Causes``. Prompt lines quote texts as JSON strings (``- ("a, b", Causes, "c")``) so
:func:`parse_fact_line` reads them back even when a sentence holds commas or quotes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from eventkg.graphstore.model import CANONICAL, STORED_TO_FORWARD
from eventkg.queries.retrieval.lifting import TypeLayer, TypeScore

#: weight of the far end's own lifted score in a schema fact's rank (the near end's counts 1)
FAR_END = 0.5


@dataclass(frozen=True)
class Fact:
    """One event-relation edge as shown: head, relation name (as asked), tail; and where it comes from."""

    head: str  # event id
    relation: str  # paper name, in the direction shown
    tail: str
    stored: str  # stored type
    src: str  # stored source id (canonical direction)
    dst: str
    kind: str  # "schema" or "instance"
    asked: bool = False  # the question's relation, from the asked side

    @property
    def key(self) -> tuple[str, str, str]:
        """The stored edge: one key per fact whatever its spelling."""
        return (self.src, self.stored, self.dst)


def shown(stored: str, src: str, dst: str, anchor: Collection[str], relation: str | None) -> tuple[str, str, str, bool]:
    """(head, name, tail, asked) of a stored edge, spelled as ``relation`` asks from ``anchor``."""
    forward = STORED_TO_FORWARD.get(stored)
    if relation and relation in CANONICAL and CANONICAL[relation][0] == stored and forward:
        is_forward = CANONICAL[relation][1]
        if is_forward and src in anchor:
            return src, relation, dst, True
        if not is_forward and dst in anchor:
            return dst, relation, src, True
    return src, forward or stored, dst, False


def rank_facts(
    layer: TypeLayer,
    types: Sequence[TypeScore],
    seeds: Sequence[tuple[str, float]],
    similarity: Callable[[Sequence[str]], dict[str, float]],
    *,
    relation: str | None = None,
    per_node: int | None = 20,
    exclude: Collection[str] = (),
    scores: dict[str, float] | None = None,
    rel_types: Collection[str] = ("CAUSES", "BEFORE", "HAS_SUBEVENT"),
) -> tuple[list[Fact], list[tuple[str, int, int]]]:
    """Facts of ``types`` then of the seed instances, ranked (see the module docstring).

    ``scores`` (type id -> its lifted score, every type voted for, not only those in ``types``)
    ranks a type's facts: the near type's score plus :data:`FAR_END` times the far end's, so a
    fact between two types the text points at goes first.

    Returns:
        The facts, each stored edge once, and (type id, kept, facts it has) for each type cut.
    """
    asked: list[tuple[float, int, Fact]] = []
    rest: list[tuple[float, int, Fact]] = []
    best = types[0].score if types and types[0].score > 0 else 1.0
    truncated: list[tuple[str, int, int]] = []
    seen: set[tuple[str, str, str]] = set()
    for rank, t in enumerate(types):
        anchor = set(t.ids)
        edges = [(r, o, out, m) for m in t.ids for r, o, out in layer.edges.get(m, []) if r in rel_types and o not in exclude]
        sims = similarity(sorted({o for _, o, _, _ in edges}))
        edges.sort(key=lambda e: (-sims.get(e[1], -1.0), layer.text.get(e[1], ""), e[0]))
        if per_node is not None and len(edges) > per_node:
            truncated.append((t.ids[0], per_node, len(edges)))
            edges = edges[:per_node]
        for r, o, out, m in edges:
            src, dst = (m, o) if out else (o, m)
            if (src, r, dst) in seen:
                continue
            seen.add((src, r, dst))
            h, name, tl, is_asked = shown(r, src, dst, anchor, relation)
            rel = (t.score + FAR_END * (scores or {}).get(o, 0.0)) / best
            (asked if is_asked else rest).append((-rel, rank, Fact(h, name, tl, r, src, dst, "schema", is_asked)))
    instance: list[Fact] = []
    for sid, _ in seeds:
        if sid in layer.text or sid in exclude or sid not in layer.types_of:
            continue
        for r, o, out in layer.edges.get(sid, []):
            src, dst = (sid, o) if out else (o, sid)
            if r not in rel_types or o in exclude or (src, r, dst) in seen:
                continue
            seen.add((src, r, dst))
            instance.append(Fact(src, STORED_TO_FORWARD.get(r, r), dst, r, src, dst, "instance"))
    ordered = [f for _, _, f in sorted(asked, key=lambda x: x[:2])] + [f for _, _, f in sorted(rest, key=lambda x: x[:2])]
    return ordered + instance, truncated


_LINE = re.compile(r'^- \(("(?:[^"\\]|\\.)*"), ([A-Za-z_]+), ("(?:[^"\\]|\\.)*")\)$')


def fact_line(head: str, relation: str, tail: str) -> str:
    """``- ("head", Relation, "tail")``, texts as JSON strings."""
    return f"- ({json.dumps(head, ensure_ascii=False)}, {relation}, {json.dumps(tail, ensure_ascii=False)})"


def parse_fact_line(line: str) -> tuple[str, str, str] | None:
    """A :func:`fact_line` back to (head, relation, tail); None for any other line."""
    m = _LINE.match(line.strip())
    if not m:
        return None
    return json.loads(m[1]), m[2], json.loads(m[3])


def parse_facts(prompt: str) -> list[tuple[str, str, str]]:
    """Every fact line of a prompt, in order."""
    return [t for t in map(parse_fact_line, prompt.splitlines()) if t is not None]
