"""How many questions a graph can give under the generator's rules: :func:`question_capacity`.

The generator (:mod:`eventkg.queries.questions.generate`) asks each ``(e0, relation, e1)`` once, so
a graph holds at most as many questions as it has distinct such keys that the rules accept. This
module counts them over the in-memory graph the generator reads, without walking components, so
that ``eventkg questions`` can say before any work that it expects fewer than asked, and a bench
can set a file's yield beside its maximum. The count is an upper bound: the rules that depend on
the file being made (in-file degree and named-count keys, similarity bands, a CRR pair's context
side) are left out. What it counts is stated in ``docs/benchmarks.md`` ("Maximum from the keys").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import EVENT_RELATIONS, FAMILIES, family_of
from eventkg.queries.graph.csr import FORWARD_CODES, EventCSR
from eventkg.queries.graph.event_graph import EventGraph, as_csr
from eventkg.queries.induction.table1 import ALL_RELATIONS, AUTOMATON, CODE, DEAD
from eventkg.queries.induction.vetting import MeetInTheMiddle
from eventkg.queries.negatives.unlinked import FAMILY_MASK
from eventkg.queries.questions.balance import degree_band, group_by_key, linked_population
from eventkg.queries.questions.crr import one_member_holds, quota_room
from eventkg.queries.questions.generate import question_pool

Key = tuple[int, int, int]  # (e0, relation code, e1)
#: candidates vetted at once when looking for a key's negatives or Vague partner
VET_BATCH = 256
#: keys counted before the first check of the limit (then at a quarter more each time: CRR's quotas are
#: recomputed then)
LIMIT_STEP = 512


@dataclass
class Capacity:
    """The most questions of one task and level a graph can give (:func:`question_capacity`).

    ``keys``: distinct provable ``(e0, relation, e1)`` keys with a context; ``questions``: the most
    questions they give (CEC: the keys with enough negatives; CRR: related and Vague questions within
    the label quotas); ``complete``: False when counting stopped at ``limit`` (``questions`` is then
    only known to be at least that); ``dropped``: keys left out, by reason; ``by_length``: the keys
    kept, by the length in edges of the shortest path that proves them; ``vetted``: whether each key's
    negatives (CEC) or family and Vague partner (CRR) were vetted over the graph.
    """

    task: str
    level: str
    keys: int = 0
    questions: int = 0
    complete: bool = True
    dropped: dict[str, int] = field(default_factory=dict)
    by_length: dict[int, int] = field(default_factory=dict)
    vetted: bool = True

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1


def path_keys(graph: EventCSR, pool: np.ndarray, longest: int, shortest: int = 1) -> Iterator[tuple[Key, list[int], bool]]:
    """Every ``(e0, relation, e1)`` a directed path of ``shortest``..``longest`` edges between pool
    events of ``graph`` (restricted to the pool) induces (Table 1), with the path's nodes and whether it
    reads the stored edges (a forward component) or their inverses (its backward copy), never mixing
    the two. Keys may repeat."""
    for h in map(int, pool):  # lazily: a limit is often met within the first events
        for forward in (True, False):  # both for each e0: a limit is met with both labels of a CRR family
            stack = [(h, AUTOMATON.start, [h])]
            while stack:
                node, state, path = stack.pop()
                for nxt, code in graph.entries(node):
                    if (code in FORWARD_CODES) != forward or nxt in path:
                        continue
                    s = AUTOMATON.trans[state][code]
                    if s == DEAD:
                        continue
                    walked = path + [nxt]
                    out = AUTOMATON.output[s]
                    if out != DEAD and len(walked) - 1 >= shortest:
                        yield (h, out, nxt), walked, forward
                    if len(walked) - 1 < longest:
                        stack.append((nxt, s, walked))


def has_context(graph: EventCSR, key: Key, path: list[int], forward: bool, task: str) -> bool:
    """Whether a component holding ``path`` can give the question a context. CEC: ``e0`` has a
    predecessor off the path (its ancestors are the context). CRR: the context is ``e0``'s ancestors
    or its descendants other than ``e1``; some edge besides the answer's must join two of them: an
    inner node of the path, another neighbour of ``e0``, or two steps on from ``e1``."""
    h, _, t = key
    if task == "CEC":
        return any((c in FORWARD_CODES) != forward and x not in path for x, c in graph.entries(h))
    if len(path) > 2 or any(x != t for x, _ in graph.entries(h)):
        return True
    return any((c in FORWARD_CODES) == forward and y != h
               and any((c2 in FORWARD_CODES) == forward and w not in (h, t) for w, c2 in graph.entries(y))
               for y, c in graph.entries(t))


def count_unlinked(vet: MeetInTheMiddle, candidates: np.ndarray, mask: int, need: int, skip: set[int]) -> int:
    """How many of ``candidates`` (up to ``need``) no walk from the loaded event links by ``mask``."""
    found, start, step = 0, 0, 8  # most candidates are unlinked: a few first, more while too few pass
    while start < len(candidates) and found < need:
        batch = np.array([z for z in candidates[start:start + step].tolist() if z not in skip], dtype=np.int64)
        if len(batch):
            found += int((~vet.linked(batch, mask)).sum())
        start, step = start + step, min(2 * step, VET_BATCH)
    return min(found, need)


def quota_max(supply: tuple[int, int], vague_prob: float) -> int:
    """The most CRR questions of one family within the label quotas (:func:`~eventkg.queries.questions.crr.quota_room`):
    ``supply`` related pairs of each member, each able to give its related question and a Vague one;
    a label is added while it has pairs left and room, the least-made first."""
    left = [supply[0], supply[1], supply[0] + supply[1]]
    counts = [0, 0, 0]
    while True:
        room = [lab for lab in range(3) if left[lab] and quota_room(counts, lab, vague_prob)]
        if not room:
            return sum(counts)
        lab = min(room, key=lambda x: (counts[x], x))
        counts[lab] += 1
        left[lab] -= 1


def question_capacity(source: GraphStore | EventGraph, task: str, level: str = "schema", *, size: int = 3, max_len: int = 4,
                      vague_prob: float = 0.5, require_context: bool = True, limit: int | None = None,
                      vetted: bool = True) -> Capacity:
    """The most questions of ``task`` and ``level`` the generator's rules can make from ``source``'s graph.

    Args:
        source: An :class:`~eventkg.queries.graph.event_graph.EventIndex`, its
            :class:`~eventkg.queries.graph.csr.EventCSR`, or a networkx graph in the store's shape.
        task: ``CEC`` or ``CRR`` (either case).
        level: ``schema`` or ``instance`` (event types that have instances).
        size: The component size N (walks keep N..N+2 nodes): bounds the path and its context.
        max_len: The longest path, in edges, that may prove an answer.
        vague_prob: CRR's Vague share, relative to related questions (the quotas).
        require_context: A question needs a non-empty context.
        limit: Stop once the count reaches this (``complete`` False): enough to tell that a request fits.
        vetted: Vet each key's negatives (CEC) or its family and Vague partner (CRR) over the whole graph;
            False counts the keys with a context only, a looser bound that costs no graph search.

    Returns:
        A :class:`Capacity`.
    """
    csr, task = as_csr(source), task.upper()
    pool = question_pool(csr, level)
    band = degree_band(np.diff(csr.indptr)) if vetted else np.zeros(0, dtype=np.int8)
    linked = linked_population(pool, band) if vetted else pool[:0]
    by_band = group_by_key(linked, band)
    allowed = np.zeros(len(csr), dtype=bool)
    allowed[pool] = True
    graph, vet = csr.restricted(allowed), MeetInTheMiddle(csr, max_len)
    cap, seen, no_context, check = Capacity(task, level, vetted=vetted), set(), set(), LIMIT_STEP
    supply = {fam: [0, 0] for fam in FAMILIES}
    longest = min(max_len, size if task == "CEC" and require_context else size + 1)
    try:
        for length in range(1, longest + 1):  # shortest first: a limit is met without longer walks
            for key, path, forward in path_keys(graph, pool, length, length):
                if key in seen:
                    continue
                if require_context and not has_context(graph, key, path, forward, task):
                    no_context.add(key)  # another path may give it one
                    continue
                seen.add(key)
                if _accept(cap, vet if vetted else None, key, by_band, band, supply):
                    cap.keys += 1
                    cap.by_length[len(path) - 1] = cap.by_length.get(len(path) - 1, 0) + 1
                if limit is not None and cap.keys >= check:
                    check += check // 4
                    if _total(cap, supply, vague_prob) >= limit:
                        cap.questions, cap.complete = limit, False
                        return cap
    finally:
        vet.unload()
    if no_context - seen:
        cap.dropped["no context"] = len(no_context - seen)
    cap.questions = _total(cap, supply, vague_prob)
    if limit is not None and cap.questions >= limit:
        cap.questions, cap.complete = limit, False
    return cap


def _accept(cap: Capacity, vet: MeetInTheMiddle | None, key: Key, by_band: dict[int, np.ndarray], band: np.ndarray,
            supply: dict[str, list[int]]) -> bool:
    """Whether ``key`` gives a question: CEC, three unlinked negatives of ``e1``'s degree band; CRR, one
    member of the family holds (walks of at most ``max_len``) and a Vague partner of that band exists.
    ``vet`` None: every key does (the unvetted bound)."""
    h, code, t = key
    rel = EVENT_RELATIONS[code]
    fam = family_of(rel)
    if vet is None:
        cap.questions += cap.task == "CEC"
        supply[fam][FAMILIES[fam].index(rel)] += cap.task == "CRR"
        return True
    same = by_band.get(int(band[t]), np.zeros(0, dtype=np.int64))
    if cap.task == "CEC":
        vet.load(h, FAMILY_MASK[fam])
        if count_unlinked(vet, same, FAMILY_MASK[fam], 3, {h, t}) < 3:
            cap.drop("fewer than 3 negatives of the answer's degree band")
            return False
        cap.questions += 1
        return True
    if not any(family_of(EVENT_RELATIONS[c]) == fam for c in vet.csr.code[vet.csr.indptr[h]:vet.csr.indptr[h + 1]]):
        cap.drop("no edge of the family to state a Vague question by")
        return False
    vet.load(h, ALL_RELATIONS)  # the Vague partner's walks, and (masked) the family's
    if not one_member_holds(vet.induced(t, tuple(CODE[r] for r in FAMILIES[fam])), rel):
        cap.drop("both members of the family hold")
        return False
    if count_unlinked(vet, same, ALL_RELATIONS, 1, {h, t}) < 1:
        cap.drop("no Vague partner of the related partner's degree band")
        return False
    supply[fam][FAMILIES[fam].index(rel)] += 1
    return True


def _total(cap: Capacity, supply: dict[str, list[int]], vague_prob: float) -> int:
    if cap.task == "CEC":
        return cap.questions
    return sum(quota_max((a, b), vague_prob) for a, b in supply.values())


def direct_bound(source: GraphStore | EventGraph, task: str, level: str = "schema", vague_prob: float = 0.5) -> int:
    """A bound on the questions the direct edges alone allow, counted in arrays (no walk, no search):
    CEC, the edges (read both ways) whose e0 has a predecessor in that reading; CRR, three questions per
    pair of edges of the two members of a family (what the quotas allow at least from that many keys).
    When it reaches the asked number, the graph is not known to hold fewer, and nothing finer is counted.
    """
    csr, task = as_csr(source), task.upper()
    pool = question_pool(csr, level)
    allowed = np.zeros(len(csr), dtype=bool)
    allowed[pool] = True
    graph = csr.restricted(allowed)
    src = np.repeat(np.arange(len(graph), dtype=np.int64), np.diff(graph.indptr))
    keep = allowed[src]
    src, code = src[keep], graph.code[keep].astype(np.int64)
    forward = np.isin(code, list(FORWARD_CODES))
    if task == "CEC":  # a predecessor of e0 in a reading is an entry of e0 in the other one
        has_in = [np.bincount(src[forward != d], minlength=len(graph)) > 0 for d in (False, True)]
        return int(np.where(forward, has_in[1][src], has_in[0][src]).sum())
    per_code = np.bincount(code, minlength=len(EVENT_RELATIONS))
    return sum(3 * int(min(per_code[CODE[a]], per_code[CODE[b]])) for a, b in FAMILIES.values())


def expected_notice(cap: Capacity, asked: int) -> str | None:
    """The line ``eventkg questions`` prints before the work when the graph holds fewer than asked."""
    if cap.questions >= asked or not cap.complete:
        return None
    why = ", ".join(f"{v:,} {k}" for k, v in sorted(cap.dropped.items())) or "none"
    vetted = (f" and {'negatives' if cap.task == 'CEC' else 'a Vague partner'}" if cap.vetted
              else f" ({'negatives' if cap.task == 'CEC' else 'Vague partners'} not vetted)")
    return (f"expects at most {cap.questions:,} {cap.level} {cap.task} questions from this store ({asked:,} asked): "
            f"{cap.keys:,} distinct provable (e0, relation, e1) keys with a context{vetted}; left out: {why}")
