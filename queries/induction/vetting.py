"""Which relations Table 1 induces from one event to a few others, by meeting in the middle.

Question generation asks, for an event ``e0`` and a handful of candidates ``z``: does some walk
of at most ``max_len`` (4) edges, read both ways, lead from ``e0`` to ``z`` with a relation
sequence that Table 1 induces into a given set of relations (a family for a CEC negative,
any relation for a Vague pair, one relation for CRR)? A 4-step search from ``e0`` answers it,
but near a hub four steps cover much of the graph. Here the walk is split:

* **forward** ``ceil(max_len/2)`` steps from ``e0`` carrying the Table 1 automaton state
  (pruned to states from which a wanted relation can still be induced), kept as one bitmask
  of states per reached event (a dense array, reset after each question); when ``e0``'s
  two-step neighbourhood is a hub's (more than ``HUB_COST`` entries), one step only, and the
  candidates, a few events each, are read back the rest of the way;
* **backward** the remaining ``floor(max_len/2)`` (or more) steps from each candidate, carrying
  the relation codes read towards ``z`` (at most 6³ suffixes for max_len 4), precomputed into the set of
  automaton states from which that suffix ends in a wanted relation;

and a walk exists exactly when some event reached both ways has a forward state in that set.
At the last backward step an event whose row is long (a hub next to a candidate: hubs grow with
the graph) is not read: each forward event is looked up in its row, sorted by neighbour, so the
step costs a binary search per forward event instead of the hub's whole row.
Every step is a numpy gather over CSR rows, so a hub costs one vector operation, not one Python
iteration per neighbour (figures: ``docs/performance.md``). Walks (not only simple paths) count, as in
:meth:`eventkg.queries.graph.event_graph.EventIndex.reach`: the answer is the same set of relations,
so a vetted negative is exactly one the previous 4-step reach would have accepted.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from eventkg.graphstore.model import EVENT_RELATIONS
from eventkg.queries.graph.csr import INV_CODE, EventCSR, gather_ranges, gather_rows
from eventkg.queries.induction.table1 import AUTOMATON, DEAD, live_states

N_STATES = len(AUTOMATON.trans)
assert N_STATES <= 32, "state sets are uint32 bitmasks"
_SINK = N_STATES  # a state index standing for DEAD in the numpy tables
#: two forward steps from an event would gather more entries than this (a hub's neighbourhood):
#: one step forward and the rest backward from the candidates, a few events each
HUB_COST = 4096
#: at the last backward step, a row at least this long and longer than the forward set is not
#: read: the forward events are looked up in it instead (a hub met next to a candidate)
PROBE_MIN = 1024
#: a load or a one-candidate check reading at most this many entries runs as a Python loop over
#: the rows (through memoryviews): below it numpy's fixed cost per operation is the larger part of
#: the work; past it, or near a hub, the vector walk. The answers are the same either way
SCALAR_ENTRIES = 256
_INV = INV_CODE.tolist()
_TRANS = np.array([[s if s != DEAD else _SINK for s in row] for row in AUTOMATON.trans]
                  + [[_SINK] * len(EVENT_RELATIONS)], dtype=np.int64)


@lru_cache(maxsize=64)
def _live(mask: int) -> np.ndarray:
    """bool per state (the sink last, False): some relation in ``mask`` is still inducible from it."""
    return np.array([*live_states(mask), False])


@lru_cache(maxsize=64)
def _live_list(mask: int) -> list[bool]:
    return _live(mask).tolist()


@lru_cache(maxsize=256)
def _accepting_list(mask: int, k: int) -> list[int]:
    return _accepting(mask, k).tolist()


@lru_cache(maxsize=256)
def _accepting(mask: int, k: int) -> np.ndarray:
    """uint32 per suffix of ``k`` codes (base 6, earliest code most significant): the states
    from which reading that suffix ends in a state whose output is in ``mask``."""
    out = np.zeros(len(EVENT_RELATIONS) ** k, dtype=np.uint32)
    for i, seq in enumerate(itertools.product(range(len(EVENT_RELATIONS)), repeat=k)):
        bits = 0
        for s in range(N_STATES):
            st = _run_from(s, seq)
            if st != DEAD and AUTOMATON.output[st] >= 0 and mask >> AUTOMATON.output[st] & 1:
                bits |= 1 << s
        out[i] = bits
    return out


def _run_from(state: int, codes: tuple[int, ...]) -> int:
    for c in codes:
        state = AUTOMATON.trans[state][c]
        if state == DEAD:
            return DEAD
    return state


class MeetInTheMiddle:
    """Vets candidates against one loaded event at a time (:meth:`load`, :meth:`induced`, :meth:`unload`)."""

    def __init__(self, csr: EventCSR, max_len: int = 4, hub_cost: int = HUB_COST, probe_min: int = PROBE_MIN,
                 probe_factor: int = 1, scalar_entries: int = SCALAR_ENTRIES) -> None:
        self.csr, self.max_len, self.hub_cost = csr, max_len, hub_cost
        self.scalar_entries = scalar_entries
        self.probe_min, self.probe_factor = probe_min, probe_factor
        self.ahead, self.behind = (max_len + 1) // 2, max_len // 2
        self._states = np.zeros(len(csr), dtype=np.uint32)  # forward state set per event
        self._sv = memoryview(self._states)  # the same, read and written one event at a time
        self._touched: list[np.ndarray] = []
        self._forward: np.ndarray | None = None  # the touched events, sorted, once asked for
        self.loaded: tuple[int, int] | None = None

    def load(self, e0: int, live_mask: int) -> None:
        """Forward ``ceil(max_len/2)`` steps from ``e0`` (one step when two would gather more than
        ``hub_cost`` entries: the rest is read backward from the candidates), keeping states that
        can still induce a relation of ``live_mask`` (later :meth:`induced` masks must lie inside it)."""
        if self.loaded == (e0, live_mask):
            return
        self.unload()
        csr, states, live = self.csr, self._states, _live(live_mask)
        self.ahead = (self.max_len + 1) // 2
        cost = self._two_step_cost(e0) if self.ahead > 1 else self.csr.degree(e0)
        if self.ahead > 1 and cost > self.hub_cost:
            self.ahead, cost = 1, self.csr.degree(e0)
        self.behind = self.max_len - self.ahead
        self.loaded = (e0, live_mask)
        if self.ahead <= 2 and cost <= self.scalar_entries:
            self._load_scalar(e0, _live_list(live_mask))
            return
        nodes = np.array([e0], dtype=np.int64)
        cur = np.array([AUTOMATON.start], dtype=np.int64)
        states[e0] = np.uint32(1 << AUTOMATON.start)
        self._touched.append(nodes)
        for step in range(self.ahead):
            pos, owner = gather_rows(csr.indptr, nodes)
            if not len(pos):
                break
            ns = _TRANS[cur[owner], csr.code[pos]]
            keep = live[ns]
            nb, ns = csr.nbr[pos[keep]], ns[keep]
            bit = np.left_shift(np.uint32(1), ns.astype(np.uint32))
            fresh = (states[nb] & bit) == 0
            nb, ns, bit = nb[fresh], ns[fresh], bit[fresh]
            if step + 1 < self.ahead:  # the next step starts from each (event, state) once
                key = np.unique(nb.astype(np.int64) * 32 + ns)
                nb, ns = key >> 5, key & 31
                bit = np.left_shift(np.uint32(1), ns.astype(np.uint32))
            np.bitwise_or.at(states, nb, bit)  # repeats on the last step only set a bit twice
            self._touched.append(nb)
            nodes, cur = nb, ns

    def _load_scalar(self, e0: int, live: list[bool]) -> None:
        """:meth:`load`'s walk over a small neighbourhood, one entry at a time (each (event, state) pair
        expanded once, at the first step it is reached, as the vector walk does)."""
        ptr, nbr, code, sv, trans = self.csr._ptr, self.csr._nbr, self.csr._code, self._sv, AUTOMATON.trans
        sv[e0] = 1 << AUTOMATON.start
        touched, frontier = [e0], [(e0, AUTOMATON.start)]
        for _ in range(self.ahead):
            reached = []
            for node, state in frontier:
                step = trans[state]
                for i in range(ptr[node], ptr[node + 1]):
                    ns = step[code[i]]
                    if ns == DEAD or not live[ns]:
                        continue
                    nb, bit = nbr[i], 1 << ns
                    old = sv[nb]
                    if not old & bit:
                        sv[nb] = old | bit
                        touched.append(nb)
                        reached.append((nb, ns))
            frontier = reached
        self._touched.append(np.array(touched, dtype=np.int64))

    def _two_step_cost(self, e0: int) -> int:
        """Entries two forward steps from ``e0`` would gather (at least), capped past ``hub_cost``."""
        ptr = self.csr._ptr
        lo, hi = ptr[e0], ptr[e0 + 1]
        if hi - lo > self.hub_cost:
            return hi - lo
        if hi - lo <= 64:  # a short row: summed in Python, cheaper than a gather
            nbr = self.csr._nbr
            return sum(ptr[nbr[i] + 1] - ptr[nbr[i]] for i in range(lo, hi))
        nb = self.csr.nbr[lo:hi]
        return int((self.csr.indptr[nb + 1] - self.csr.indptr[nb]).sum())

    def unload(self) -> None:
        for nodes in self._touched:
            self._states[nodes] = 0
        self._touched = []
        self._forward = None
        self.loaded = None

    def linked(self, candidates: np.ndarray, mask: int) -> np.ndarray:
        """bool per candidate: a walk of <= max_len from the loaded event induces a relation in ``mask``."""
        csr, states = self.csr, self._states
        z = np.asarray(candidates, dtype=np.int64)
        if len(z) == 1:
            one = self._linked_scalar(int(z[0]), mask)
            if one is not None:
                return np.array([one])
        hit = (states[z] & _accepting(mask, 0)[0]) != 0
        nodes, owner, suffix = z, np.arange(len(z)), np.zeros(len(z), dtype=np.int32)
        for k in range(1, self.behind + 1):
            if k > 1:  # a candidate found linked needs no more steps
                go = ~hit[owner]
                nodes, owner, suffix = nodes[go], owner[go], suffix[go]
            if k == self.behind:  # the last step: long rows are probed, not read
                nodes, owner, suffix = self._probe_long_rows(nodes, owner, suffix, mask, k, hit)
            pos, o = gather_rows(csr.indptr, nodes)
            if not len(pos):
                break
            nodes, owner = csr.nbr[pos], owner[o]
            # the edge read from the new node towards the old one is the inverse of the stored reading
            suffix = INV_CODE[csr.code[pos]].astype(np.int32) * len(EVENT_RELATIONS) ** (k - 1) + suffix[o]
            want = _accepting(mask, k)[suffix]
            hit[owner[(states[nodes] & want) != 0]] = True
            if k < self.behind:
                go = want != 0  # suffixes no state can complete are not extended
                nodes, owner, suffix = nodes[go], owner[go], suffix[go]
        return hit

    def _linked_scalar(self, z: int, mask: int) -> bool | None:
        """:meth:`linked` for one candidate, one entry at a time; None when the walk would read more than
        ``scalar_entries`` entries (the vector walk, which probes long rows, answers then)."""
        ptr, nbr, code, sv = self.csr._ptr, self.csr._nbr, self.csr._code, self._sv
        if sv[z] & _accepting_list(mask, 0)[0]:
            return True
        budget, frontier = self.scalar_entries, [(z, 0)]
        for k in range(1, self.behind + 1):
            accept, scale, last, reached = _accepting_list(mask, k), len(EVENT_RELATIONS) ** (k - 1), k == self.behind, []
            for node, suffix in frontier:
                lo, hi = ptr[node], ptr[node + 1]
                budget -= hi - lo
                if budget < 0:
                    return None
                for i in range(lo, hi):
                    s = _INV[code[i]] * scale + suffix
                    want = accept[s]
                    if sv[nbr[i]] & want:
                        return True
                    if want and not last:  # suffixes no state can complete are not extended
                        reached.append((nbr[i], s))
            frontier = reached
        return False

    def _probe_long_rows(self, nodes: np.ndarray, owner: np.ndarray, suffix: np.ndarray, mask: int, k: int,
                         hit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The last backward step for events whose rows are long (at least ``probe_min`` entries and
        more than ``probe_factor`` times the forward events): each forward event is looked up in
        the row (sorted by neighbour), so a hub next to a candidate costs a binary search per
        forward event instead of a read of its whole row. Sets ``hit``; gives back the other entries."""
        ptr = self.csr.indptr
        deg = ptr[nodes + 1] - ptr[nodes]
        long = deg >= self.probe_min
        if not long.any():  # most calls: the forward events are not even gathered
            return nodes, owner, suffix
        if self._forward is None:
            touched = np.concatenate(self._touched) if self._touched else np.zeros(0, np.int64)
            self._forward = np.unique(touched).astype(self.csr.nbr.dtype)  # the rows' type: no cast of a row
        forward = self._forward
        long &= deg > self.probe_factor * len(forward)
        if not long.any():
            return nodes, owner, suffix
        accept, scale = _accepting(mask, k), len(EVENT_RELATIONS) ** (k - 1)
        for y in np.unique(nodes[long]).tolist():
            lo, hi = int(ptr[y]), int(ptr[y + 1])
            row = self.csr.nbr[lo:hi]
            first = np.searchsorted(row, forward, side="left")
            count = np.searchsorted(row, forward, side="right") - first
            met = np.flatnonzero(count)
            if not len(met):
                continue
            # every entry of the row that leads to a forward event, and that event's states
            at, which = gather_ranges(first[met], count[met])
            back = INV_CODE[self.csr.code[lo + at]].astype(np.int32) * scale  # read from the forward event to y
            state = self._states[forward[met]][which]
            here = np.flatnonzero(long & (nodes == y))
            linked = ((accept[back[None, :] + suffix[here][:, None]] & state[None, :]) != 0).any(axis=1)
            hit[owner[here[linked]]] = True
        keep = ~long
        return nodes[keep], owner[keep], suffix[keep]

    def induced(self, z: int, relations: tuple[int, ...]) -> int:
        """Bitmask of the relation codes in ``relations`` induced from the loaded event to ``z``."""
        out = 0
        for r in relations:
            if self.linked(np.array([z]), 1 << r)[0]:
                out |= 1 << r
        return out
