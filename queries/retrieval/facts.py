"""Facts of lifted types, ranked for a text and a question, and their prompt lines.

:func:`rank_facts` orders what a prompt may hold, most useful first, each fact once:

1. when the question's relation is known (``relation="IsResult"``...), the facts of that
   relation from the lifted types, with the type on the side the question asks about;
2. the other schema facts of the lifted types, by :func:`fact_value`: the budget is spread over
   the types by how likely each is (a type's share falls with its distance from the best type's
   score and with how many facts it has), a far end the text points at too counts, and ties
   go by the far end's similarity to the text;
3. facts between instance events of other stories around the seed instances, best seed first.

A type with more than ``per_node`` facts keeps those whose far end is most similar to the text
(listed as truncated). A schema fact is written from its lifted type's side: the asked relation
as asked (``("type", IsResult, "cause")``), the others in the direction that puts the type first
(``("type", After, "earlier")``), so :func:`pack_fact_lines` can give each type and relation one
line, ``- ("type", Causes, ["a", "b"])``, and a budget holds more facts. Lines quote texts as
JSON strings so :func:`parse_facts` reads them back even when a sentence holds commas or quotes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from eventkg.graphstore.model import CANONICAL, INVERSE, STORED_TO_FORWARD
from eventkg.queries.retrieval.lifting import TypeLayer, TypeScore

#: how fast a type's share of the budget falls with its score's distance from the best type's
TYPE_TEMPERATURE = 0.4
#: a type's share is divided by (its number of facts) to this power
PER_TYPE_FACTS = 0.5
#: weight of the far end's own lifted score in a schema fact's value
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
    """(head, name, tail, asked) of a stored edge, spelled as ``relation`` asks from ``anchor``,
    else from ``anchor``'s side (an edge into the anchor read backwards: ``After``, ``IsResult``)."""
    forward = STORED_TO_FORWARD.get(stored)
    if relation and relation in CANONICAL and CANONICAL[relation][0] == stored and forward:
        is_forward = CANONICAL[relation][1]
        if is_forward and src in anchor:
            return src, relation, dst, True
        if not is_forward and dst in anchor:
            return dst, relation, src, True
    if forward and dst in anchor and src not in anchor:
        return dst, INVERSE[forward], src, False
    return src, forward or stored, dst, False


def fact_value(type_score: float, best: float, n_facts: int, far_score: float) -> float:
    """The log-value of a schema fact of a lifted type, for the budget's order (higher first).

    ``(type_score - best) / TYPE_TEMPERATURE - PER_TYPE_FACTS * ln(n_facts)`` is the type's share
    spread over its facts; ``ln(1 + FAR_END * far_score)`` prefers a far end the text points at too.
    Facts of equal value keep the order of their far ends' similarity to the text.
    """
    return ((type_score - best) / TYPE_TEMPERATURE - PER_TYPE_FACTS * math.log(max(n_facts, 1))
            + math.log1p(FAR_END * max(far_score, 0.0)))


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
    and the far ends' similarity to the text rank the facts by :func:`fact_value`.

    Returns:
        The facts, each stored edge once, and (type id, kept, facts it has) for each type cut.
    """
    asked: list[tuple[float, int, Fact]] = []
    rest: list[tuple[float, int, Fact]] = []
    best = types[0].score if types else 0.0
    truncated: list[tuple[str, int, int]] = []
    seen: set[tuple[str, str, str]] = set()
    for rank, t in enumerate(types):
        anchor = set(t.ids)
        edges = [(r, o, out, m) for m in t.ids for r, o, out in layer.edges.get(m, []) if r in rel_types and o not in exclude]
        sims = similarity(sorted({o for _, o, _, _ in edges}))
        edges.sort(key=lambda e: (-sims.get(e[1], -1.0), layer.text.get(e[1], ""), e[0]))
        n_facts = len(edges)
        if per_node is not None and len(edges) > per_node:
            truncated.append((t.ids[0], per_node, len(edges)))
            edges = edges[:per_node]
        for r, o, out, m in edges:
            src, dst = (m, o) if out else (o, m)
            if (src, r, dst) in seen:
                continue
            seen.add((src, r, dst))
            h, name, tl, is_asked = shown(r, src, dst, anchor, relation)
            rel = fact_value(t.score, best, n_facts, (scores or {}).get(o, 0.0))
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


_TEXT = r'"(?:[^"\\]|\\.)*"'
_LINE = re.compile(rf"^- \(({_TEXT}), ([A-Za-z_]+), ({_TEXT})\)$")
_GROUP = re.compile(rf"^- \(({_TEXT}), ([A-Za-z_]+), \[({_TEXT}(?:, {_TEXT})*)\]\)$")


def fact_line(head: str, relation: str, tail: str) -> str:
    """``- ("head", Relation, "tail")``, texts as JSON strings."""
    return f"- ({json.dumps(head, ensure_ascii=False)}, {relation}, {json.dumps(tail, ensure_ascii=False)})"


def fact_group_line(head: str, relation: str, tails: Sequence[str]) -> str:
    """One head and relation with its tails: :func:`fact_line` for one tail, else
    ``- ("head", Relation, ["tail 1", "tail 2"])``.

    Args:
        head: The head's text.
        relation: The relation's name as shown (``Causes``, ``IsResult``...).
        tails: The tails' texts, at least one.

    Returns:
        One prompt line; :func:`parse_facts` reads it back to one triple per tail.
    """
    if len(tails) == 1:
        return fact_line(head, relation, tails[0])
    listed = ", ".join(json.dumps(t, ensure_ascii=False) for t in tails)
    return f"- ({json.dumps(head, ensure_ascii=False)}, {relation}, [{listed}])"


def parse_fact_line(line: str) -> tuple[str, str, str] | None:
    """A :func:`fact_line` back to (head, relation, tail); None for any other line."""
    m = _LINE.match(line.strip())
    if not m:
        return None
    return json.loads(m[1]), m[2], json.loads(m[3])


def parse_fact_lines(line: str) -> list[tuple[str, str, str]]:
    """A :func:`fact_line` or :func:`fact_group_line` back to its (head, relation, tail) facts."""
    one = parse_fact_line(line)
    if one:
        return [one]
    m = _GROUP.match(line.strip())
    if not m:
        return []
    head = json.loads(m[1])
    return [(head, m[2], t) for t in json.loads(f"[{m[3]}]")]


def parse_facts(prompt: str) -> list[tuple[str, str, str]]:
    """Every fact of a prompt's fact lines (one or several per line), in order."""
    return [t for line in prompt.splitlines() for t in parse_fact_lines(line)]


def pack_fact_lines(
    facts: Sequence[tuple[int, str, str, str]],
    titles: Sequence[str],
    budget: int | None,
    count: Callable[[str], int],
    group: bool = True,
    render: Callable[[str, str, Sequence[str]], str] = fact_group_line,
) -> list[str]:
    """The body of a prompt: ``facts`` ((section, head, relation, tail), best first) added while
    they fit in ``budget`` tokens (None: all), each section under its title.

    With ``group`` a fact whose section, head and relation are already shown joins that line
    (:func:`fact_group_line`), costing only its tail; a fact that does not fit is skipped and
    the next one tried.

    Args:
        facts: (section index, head text, relation name, tail text), best first.
        titles: Each section's title line ("" for none), counted once it has a line.
        budget: Tokens the body may take (None: no limit).
        count: The token counter.
        group: Join facts of one head and relation into one line.
        render: (head, relation, tails) -> line.

    Returns:
        The body's lines, sections in order, each line where its first fact came.
    """
    lines: list[dict[tuple[str, str], list[str]]] = [{} for _ in titles]
    used: dict[tuple[int, str, str], int] = {}  # tokens of each line as it stands
    left = budget
    for n, (sec, head, rel, tail) in enumerate(facts):
        key = (head, rel) if group else (head, f"{rel}\0{n}")
        tails = lines[sec].get(key, [])
        now = count(render(head, rel, [*tails, tail]))
        cost = now - used.get((sec, *key), 0) + (count(titles[sec]) if not lines[sec] and titles[sec] else 0)
        if left is not None and cost > left:
            continue
        lines[sec].setdefault(key, []).append(tail)
        used[(sec, *key)] = now
        if left is not None:
            left -= cost
    body: list[str] = []
    for sec, title in enumerate(titles):
        if lines[sec]:
            body += [title] if title else []
            body += [render(h, key.split("\0")[0], tails) for (h, key), tails in lines[sec].items()]
    return body
