"""Table 1 of the EV² paper (Tao et al., arXiv:2404.17513) compiled into a deterministic automaton, shared by every graph search.

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

The rule list is compiled once into a small deterministic automaton (:data:`AUTOMATON`) so
that graph searches (:mod:`eventkg.queries.graph.event_graph`, :mod:`eventkg.queries.induction.vetting`) can
carry the induction state along a walk and prune as soon as no rule can match any more.
This module imports nothing from the query layer, so every query module can use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from eventkg.graphstore.model import EVENT_RELATIONS

#: relation name -> small int code used by the automaton and the adjacency index
CODE: dict[str, int] = {r: i for i, r in enumerate(EVENT_RELATIONS)}
DEAD = -1
#: bitmask of every relation code
ALL_RELATIONS = (1 << len(EVENT_RELATIONS)) - 1


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


@lru_cache(maxsize=64)
def live_states(mask: int) -> tuple[bool, ...]:
    """Per automaton state: whether some relation in ``mask`` (bitmask of codes) can still be
    induced from it; searches drop a walk as soon as its state is not live."""
    trans, output = AUTOMATON.trans, AUTOMATON.output
    live = [output[s] >= 0 and bool(mask >> output[s] & 1) for s in range(len(trans))]
    changed = True
    while changed:
        changed = False
        for s, row in enumerate(trans):
            if not live[s] and any(ns >= 0 and live[ns] for ns in row):
                live[s] = changed = True
    return tuple(live)
