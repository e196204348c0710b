"""The event-relation graph as compact integer arrays (CSR), loaded from a store in columns.

The store keeps one canonical direction per fact (``a CAUSES b``); every query algorithm reads
each edge both ways, the backward reading giving the inverse relation (``b IsResult a``,
:data:`eventkg.graphstore.model.INVERSE`). :class:`EventCSR` holds exactly that reading:

* events numbered ``0..n-1`` in id order (so two backends holding the same graph number them
  alike), with their text (an Arrow array, read per event when a question shows it) and level;
* per event, its neighbours ``nbr[indptr[p]:indptr[p+1]]`` with the relation code read from
  ``p`` (``code``, an index into ``EVENT_RELATIONS``), sorted by (neighbour, code), duplicates
  and self-loops dropped;
* ``HAS_TYPE`` links: ``type_of[instance]`` and, per type, its instances that have a text
  (``instances(t)``; an instance stored with an empty text, as EV²'s, is never shown).

:meth:`EventCSR.from_store` reads the columns with :mod:`eventkg.queries.columnar` (Arrow from
LadybugDB, batched reads from Neo4j) and builds every array with Arrow/numpy kernels: no
Python object per row. On the 1M-event / 3M-relation ASER-shaped store the load takes 1.6-4.7 s
and ~0.8 GB peak added RSS (the engine's scan buffers included), where streaming rows through
``iter_nodes``/``iter_edges`` took 15-28 s in the same runs (``bench/query_bench_questions.py``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.model import EVENT_LEVELS, EVENT_RELATIONS, INVERSE, STORED_TO_FORWARD
from eventkg.queries.table1 import CODE

EVENT_REL_TYPES = ("CAUSES", "BEFORE", "HAS_SUBEVENT")
#: stored type -> code of the relation it reads forward (CAUSES -> Causes)
TYPE_FORWARD_CODE = {t: CODE[r] for t, r in STORED_TO_FORWARD.items()}
FORWARD_CODES = frozenset(TYPE_FORWARD_CODE.values())
#: code -> code of the inverse relation
INV_CODE = np.array([CODE[INVERSE[r]] for r in EVENT_RELATIONS], dtype=np.int8)
LEVEL_NAMES = EVENT_LEVELS  # index 0 schema, 1 instance (the level array)


def event_name(text: str) -> str:
    """EV²'s spelling of an event-type name: words joined by ``_``."""
    return text.replace(" ", "_")


def gather_rows(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(entry positions, owner index)`` of every CSR entry of ``rows`` (vectorised slices)."""
    lo = indptr[rows]
    counts = indptr[rows + 1] - lo
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(rows)), counts)
    starts = np.cumsum(counts) - counts
    return np.arange(total) - np.repeat(starts - lo, counts), owner


class EventCSR:
    """Events and their relations, both directions, as numpy arrays (module docstring)."""

    def __init__(self, ids: list[str], texts: pa.Array, level: np.ndarray, indptr: np.ndarray, nbr: np.ndarray,
                 code: np.ndarray, type_of: np.ndarray, inst_indptr: np.ndarray, inst: np.ndarray) -> None:
        self.ids, self.texts, self.level = ids, texts, level
        self.indptr, self.nbr, self.code = indptr, nbr, code
        self.type_of, self.inst_indptr, self.inst = type_of, inst_indptr, inst
        # scalar reads from Python go through memoryviews (a Python int each, ~3x faster than numpy)
        self._ptr = memoryview(indptr)
        self._nbr = memoryview(nbr)
        self._code = memoryview(code)

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

    def row(self, p: int) -> tuple[int, int]:
        """``(lo, hi)``: the entries of ``p`` are ``nbr[lo:hi]`` / ``code[lo:hi]``."""
        return self._ptr[p], self._ptr[p + 1]

    def degree(self, p: int) -> int:
        return self._ptr[p + 1] - self._ptr[p]

    def entry(self, i: int) -> tuple[int, int]:
        """``(neighbour, code)`` of entry ``i``."""
        return self._nbr[i], self._code[i]

    def entries(self, p: int) -> list[tuple[int, int]]:
        """``(neighbour, code)`` of every entry of ``p``, in order."""
        lo, hi = self._ptr[p], self._ptr[p + 1]
        return list(zip(self._nbr[lo:hi].tolist(), self._code[lo:hi].tolist(), strict=True))

    def positions_to(self, p: int, targets: Iterable[int]) -> list[int]:
        """Entry positions of ``p`` whose neighbour is in ``targets``, ascending (binary search:
        a hub's 12K-entry row costs a few steps per target)."""
        lo, hi = self._ptr[p], self._ptr[p + 1]
        out = []
        for t in sorted(set(targets)):
            i = int(np.searchsorted(self.nbr[lo:hi], t)) + lo if hi - lo > 32 else lo
            while i < hi and self._nbr[i] <= t:
                if self._nbr[i] == t:
                    out.append(i)
                i += 1
        return out

    def entries_to(self, p: int, targets: Iterable[int]) -> list[tuple[int, int]]:
        """``(neighbour, code)`` entries of ``p`` whose neighbour is in ``targets``, in row order."""
        return [(self._nbr[i], self._code[i]) for i in self.positions_to(p, targets)]

    def text(self, p: int) -> str:
        """The event's text (its id where it has none)."""
        return self.texts[p].as_py() or self.ids[p]

    def name(self, p: int) -> str:
        """The event as EV² spells it (``remember_information``)."""
        return event_name(self.text(p))

    def level_name(self, p: int) -> str:
        return LEVEL_NAMES[self.level[p]]

    def instances(self, t: int) -> list[int]:
        """Instances of type ``t`` that have a text, in position order."""
        return self.inst[self.inst_indptr[t]:self.inst_indptr[t + 1]].tolist()

    def position(self, event_id: str) -> int | None:
        """Position of a store id, or None."""
        i = bisect.bisect_left(self.ids, event_id)
        return i if i < len(self.ids) and self.ids[i] == event_id else None

    def restricted(self, keep: np.ndarray) -> EventCSR:
        """The same events with only the edges between two kept events (``keep``: bool per event)."""
        owner = np.repeat(np.arange(len(self)), np.diff(self.indptr))
        sel = keep[owner] & keep[self.nbr]
        indptr = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner[sel], minlength=len(self)), out=indptr[1:])
        return EventCSR(self.ids, self.texts, self.level, indptr, self.nbr[sel], self.code[sel], self.type_of,
                        self.inst_indptr, self.inst)

    def nbytes(self) -> int:
        arrays = (self.level, self.indptr, self.nbr, self.code, self.type_of, self.inst_indptr, self.inst)
        return sum(a.nbytes for a in arrays) + self.texts.nbytes

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_store(cls, store: Any, *, with_types: bool = True) -> EventCSR:
        """Read the Event nodes, the three event relations and HAS_TYPE in columns."""
        from eventkg.queries import columnar

        types = [*EVENT_REL_TYPES, "HAS_TYPE"] if with_types else list(EVENT_REL_TYPES)
        nodes, edges = columnar.event_graph_columns(store, types)
        rel = [(_np(edges[t].column("src")), _np(edges[t].column("dst")), TYPE_FORWARD_CODE[t]) for t in EVENT_REL_TYPES]
        has_type = (_np(edges["HAS_TYPE"].column("src")), _np(edges["HAS_TYPE"].column("dst"))) if with_types else None
        return cls.from_columns(nodes, rel, has_type)

    @classmethod
    def from_rows(cls, edges: Iterable[tuple[str, str, str]], types: Iterable[tuple[str, str]] = (),
                  props: Iterable[tuple[str, str | None, str | None]] = ()) -> EventCSR:
        """From stored edges ``(src, TYPE, dst)``, ``HAS_TYPE`` pairs and ``(id, text, level)`` rows
        (events named only by an edge get no text and the schema level)."""
        info = {nid: (text, level) for nid, text, level in props}
        key: dict[str, int] = {nid: i for i, nid in enumerate(info)}
        by_type: dict[str, tuple[list[int], list[int]]] = {t: ([], []) for t in EVENT_REL_TYPES}
        for s, t, d in edges:
            by_type[t][0].append(key.setdefault(s, len(key)))
            by_type[t][1].append(key.setdefault(d, len(key)))
        pairs = [(key.setdefault(i, len(key)), key.setdefault(t, len(key))) for i, t in types]
        ids = list(key)
        nodes = pa.table({"key": pa.array(range(len(ids)), pa.int64()), "id": pa.array(ids, pa.string()),
                          "text": pa.array([info.get(i, (None, None))[0] for i in ids], pa.string()),
                          "level": pa.array([info.get(i, (None, None))[1] for i in ids], pa.string())})
        rel = [(np.array(a, np.int64), np.array(b, np.int64), TYPE_FORWARD_CODE[t]) for t, (a, b) in by_type.items()]
        inst = (np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64))
        return cls.from_columns(nodes, rel, inst)

    @classmethod
    def from_columns(cls, nodes: pa.Table, edges: Sequence[tuple[np.ndarray, np.ndarray, int]],
                     types: tuple[np.ndarray, np.ndarray] | None) -> EventCSR:
        """The arrays from a node table ``(key, id, text, level)`` (keys: any distinct int64),
        edges ``(src key, dst key, code)`` per stored type and ``HAS_TYPE`` ``(instance, type)`` keys."""
        order = pc.sort_indices(nodes, [("id", "ascending")])
        nodes = nodes.take(order)
        n = nodes.num_rows
        keys = _np(nodes.column("key"))
        rank = np.full(int(keys.max()) + 1 if n else 0, -1, dtype=np.int64)
        rank[keys] = np.arange(n)
        texts = nodes.column("text").combine_chunks()
        level = pc.equal(nodes.column("level"), "instance").fill_null(False)
        level = level.combine_chunks().to_numpy(zero_copy_only=False).astype(np.int8)
        indptr, nbr, code = _adjacency(n, [(rank[s], rank[d], c) for s, d, c in edges])
        type_of, inst_indptr, inst = _types(n, (rank[types[0]], rank[types[1]]) if types else None, texts)
        return cls(nodes.column("id").to_pylist(), texts, level, indptr, nbr, code, type_of, inst_indptr, inst)


def _np(col: Any) -> np.ndarray:
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return col.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _sorted_unique(key: np.ndarray) -> np.ndarray:
    """``np.unique`` by sort (numpy 2's hash-based unique takes 6 s on 3M int64, a sort 0.3 s)."""
    key = np.sort(key)
    keep = np.ones(len(key), dtype=bool)
    keep[1:] = key[1:] != key[:-1]
    return key[keep]


def _adjacency(n: int, edges: list[tuple[np.ndarray, np.ndarray, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both readings of every edge, sorted by (node, neighbour, code), deduplicated."""
    keys = []
    for src, dst, c in edges:
        keep = src != dst
        src, dst = src[keep], dst[keep]
        keys.append((src * n + dst) * 8 + c)
        keys.append((dst * n + src) * 8 + int(INV_CODE[c]))
    key = _sorted_unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    node = key // (8 * n) if n else key
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(node, minlength=n), out=indptr[1:])
    return indptr, ((key // 8) % max(n, 1)).astype(np.int32), (key % 8).astype(np.int8)


def _types(n: int, types: tuple[np.ndarray, np.ndarray] | None,
           texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    type_of = np.full(n, -1, dtype=np.int32)
    if types is None or len(types[0]) == 0:
        return type_of, np.zeros(n + 1, np.int64), np.zeros(0, np.int32)
    inst, typ = types
    order = np.lexsort((typ, inst))
    type_of[inst[order]] = typ[order]  # an instance with several types: the last in id order
    shown = ~pc.equal(pc.take(texts, pa.array(inst)), "").fill_null(False).to_numpy(zero_copy_only=False)
    pair = _sorted_unique(typ[shown] * n + inst[shown])
    t, i = pair // n, pair % n
    inst_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(t, minlength=n), out=inst_indptr[1:])
    return type_of, inst_indptr, i.astype(np.int32)
