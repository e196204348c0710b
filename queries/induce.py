"""Relation induction over event paths (seed 001, Table 1).

A path between two events reads as a sequence of relations in the papers' names
(``Causes, IsResult, Before, After, HasSubevent, IsSubevent``); Table 1 says which
relation the whole sequence implies between its ends:

=======================================  =========
rule                                     induces
=======================================  =========
``Before+``                              Before
``After+``                               After
``Before* Causes+ Before*``              Before
``After* IsResult+ After*``              After
``Before* HasSubevent+ Before*``         Before
``Causes* HasSubevent+ Causes*``         Causes
``After* IsSubevent+ After*``            After
``IsResult* IsSubevent+ IsResult*``      IsResult
=======================================  =========

Reading we chose (the paper is silent on overlaps): a single edge induces itself
(so ``[Causes]`` -> Causes although rule 3 would say Before); a longer sequence takes the
first rule, in table order, that matches it, so ``HasSubevent, HasSubevent`` -> Before
(rule 5 before rule 6) and ``IsSubevent, IsSubevent`` -> After (rule 7 before rule 8);
a sequence no rule matches induces nothing (``None``).

The rule list is compiled once into a small deterministic automaton
(:data:`AUTOMATON`) so that graph searches can carry the induction state along a walk
and prune as soon as no rule can match any more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from eventkg.errors import EventKGError
from eventkg.graphstore.model import EVENT_RELATIONS

#: relation name -> small int code used by the automaton and the adjacency index
CODE: dict[str, int] = {r: i for i, r in enumerate(EVENT_RELATIONS)}
DEAD = -1


class UnknownRelationError(EventKGError, ValueError):
    """A relation name that is not one of the six event relations."""


@dataclass(frozen=True)
class Rule:
    """``pre* core+ post*`` induces ``result`` (``None`` parts are absent)."""

    pre: str | None
    core: str
    post: str | None
    result: str


RULES: tuple[Rule, ...] = (
    Rule(None, "Before", None, "Before"),
    Rule(None, "After", None, "After"),
    Rule("Before", "Causes", "Before", "Before"),
    Rule("After", "IsResult", "After", "After"),
    Rule("Before", "HasSubevent", "Before", "Before"),
    Rule("Causes", "HasSubevent", "Causes", "Causes"),
    Rule("After", "IsSubevent", "After", "After"),
    Rule("IsResult", "IsSubevent", "IsResult", "IsResult"),
)

# phase of one rule while reading: 0 = still in pre*, 1 = in core+, 2 = in post*, DEAD
_PHASE_ACCEPTS = (False, True, True)


def _step_rule(rule: Rule, phase: int, symbol: str) -> int:
    if phase == 0:
        if symbol == rule.core:
            return 1
        return 0 if symbol == rule.pre else DEAD
    if phase == 1:
        if symbol == rule.core:
            return 1
        return 2 if symbol == rule.post else DEAD
    if phase == 2:
        return 2 if symbol == rule.post else DEAD
    return DEAD


@dataclass(frozen=True)
class Automaton:
    """Deterministic automaton for Table 1: ``trans[state][code]`` and ``output[state]``.

    ``output`` is a relation code or :data:`DEAD` (nothing induced); a transition to
    :data:`DEAD` means no extension of the sequence can induce anything either.
    """

    trans: tuple[tuple[int, ...], ...]
    output: tuple[int, ...]
    start: int = 0

    def run(self, codes: Iterable[int]) -> int:
        """The state after reading ``codes`` from the start (or :data:`DEAD`)."""
        state = self.start
        for c in codes:
            state = self.trans[state][c]
            if state == DEAD:
                return DEAD
        return state


def _compile(rules: Sequence[Rule]) -> Automaton:
    """Subset-free construction: a state is (length so far capped at 2, first symbol, phases)."""
    start_key = (0, None, tuple(0 for _ in rules))
    keys = [start_key]
    index = {start_key: 0}
    trans: list[list[int]] = []
    output: list[int] = []
    i = 0
    while i < len(keys):
        length, first, phases = keys[i]
        if length == 0:
            output.append(DEAD)
        elif length == 1:
            output.append(CODE[first])  # a single edge induces itself
        else:
            hit = next((r.result for r, p in zip(rules, phases, strict=True) if p != DEAD and _PHASE_ACCEPTS[p]), None)
            output.append(CODE[hit] if hit else DEAD)
        row = []
        for symbol in EVENT_RELATIONS:
            new_phases = tuple(_step_rule(r, p, symbol) for r, p in zip(rules, phases, strict=True))
            if all(p == DEAD for p in new_phases):
                # nothing can match any extension; only the bare single edge would still induce
                if length == 0:
                    key = (1, symbol, new_phases)
                else:
                    row.append(DEAD)
                    continue
            else:
                key = (min(length + 1, 2), symbol if length == 0 else None, new_phases)
            if key not in index:
                index[key] = len(keys)
                keys.append(key)
            row.append(index[key])
        trans.append(row)
        i += 1
    return Automaton(tuple(tuple(r) for r in trans), tuple(output))


AUTOMATON: Automaton = _compile(RULES)


def _canon_name(name: str) -> str:
    key = name.strip().replace("_", "").replace("-", "").replace(" ", "").lower()
    for rel in EVENT_RELATIONS:
        if rel.lower() == key:
            return rel
    raise UnknownRelationError(
        f"unknown event relation {name!r}; expected one of {', '.join(EVENT_RELATIONS)}"
    )


def parse_relations(text: str | Sequence[str]) -> list[str]:
    """``"Before,causes, is_result"`` (or a list) -> paper names; case and ``_`` are ignored."""
    parts = text.split(",") if isinstance(text, str) else list(text)
    parts = [p for p in parts if p.strip()]
    if not parts:
        raise UnknownRelationError("empty relation sequence; give e.g. Before,Causes,Before")
    return [_canon_name(p) for p in parts]


def induce(relations: Sequence[str]) -> str | None:
    """The relation Table 1 induces for a relation sequence, or ``None``.

    >>> induce(["Before", "Causes", "Before"])
    'Before'
    >>> induce(["Causes"])
    'Causes'
    >>> induce(["Causes", "IsResult"]) is None
    True
    """
    if not relations:
        return None
    codes = []
    for r in relations:
        if r not in CODE:
            r = _canon_name(r)
        codes.append(CODE[r])
    state = AUTOMATON.run(codes)
    if state == DEAD:
        return None
    out = AUTOMATON.output[state]
    return None if out == DEAD else EVENT_RELATIONS[out]


# --- paths between two events -------------------------------------------------------------


@dataclass(frozen=True)
class InducedPath:
    """A simple path ``nodes[0] -relations[0]-> nodes[1] ...`` and what it induces."""

    nodes: tuple[str, ...]
    relations: tuple[str, ...]
    induced: str | None

    def __len__(self) -> int:
        return len(self.relations)

    def triples(self) -> list[tuple[str, str, str]]:
        return [(self.nodes[i], r, self.nodes[i + 1]) for i, r in enumerate(self.relations)]


def paths(source, a: str | int, b: str | int, max_len: int = 4, *, inducing_only: bool = False) -> list[InducedPath]:
    """Every simple path from ``a`` to ``b`` of at most ``max_len`` edges, with its induction.

    ``source`` is a store, a networkx graph or an :class:`~eventkg.queries.event_graph.EventIndex`;
    ``a``/``b`` are positions, ids or event names. Edges are usable both ways: walking a stored
    edge backwards reads its inverse relation. Paths are listed shortest first; node ids in
    the result are store ids.
    """
    from eventkg.queries.event_graph import as_index

    idx = as_index(source)
    pa = a if isinstance(a, int) else idx.lookup(a)
    pb = b if isinstance(b, int) else idx.lookup(b)
    if pa == pb or max_len < 1:
        return []
    # distance to b (undirected, bounded) prunes the depth-first search
    dist = {pb: 0}
    frontier = [pb]
    for d in range(1, max_len):
        nxt = []
        for node in frontier:
            for e in idx.adj[node]:
                nb = e >> 3
                if nb not in dist:
                    dist[nb] = d
                    nxt.append(nb)
        frontier = nxt
    found: list[InducedPath] = []
    stack_nodes = [pa]
    stack_codes: list[int] = []
    on_path = {pa}

    def dfs(node: int, state: int) -> None:
        left = max_len - len(stack_codes)
        for e in idx.adj[node]:
            nb, code = e >> 3, e & 7
            if nb in on_path or dist.get(nb, max_len + 1) > left - 1:
                continue
            ns = AUTOMATON.trans[state][code] if state != DEAD else DEAD
            if inducing_only and ns == DEAD:
                continue
            stack_nodes.append(nb)
            stack_codes.append(code)
            if nb == pb:
                out = AUTOMATON.output[ns] if ns != DEAD else DEAD
                if not inducing_only or out != DEAD:
                    found.append(
                        InducedPath(
                            tuple(idx.ids[n] for n in stack_nodes),
                            tuple(EVENT_RELATIONS[c] for c in stack_codes),
                            None if out == DEAD else EVENT_RELATIONS[out],
                        )
                    )
            else:
                on_path.add(nb)
                dfs(nb, ns)
                on_path.discard(nb)
            stack_nodes.pop()
            stack_codes.pop()

    dfs(pa, AUTOMATON.start)
    found.sort(key=lambda p: (len(p), p.relations, p.nodes))
    return found
