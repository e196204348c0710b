"""A compact, ranked adjacency of the Event-to-Event edges, for bounded neighbourhoods fast.

Retrieval pulls a 2-hop neighbourhood around a few seeds on every call. On an ASER-sized
store an event can have ~12K neighbours; asking the store for them returns 12K rows per
hub per hop. Instead the Event->Event edges (every type, both directions) are read once
in columns (:mod:`eventkg.queries.graph.columnar`) into CSR arrays, each node's neighbours **ranked**:
highest edge count/weight first (ASER's ``count``, EV²'s ``weight``), then the more
frequent neighbour, then by id. A bounded expansion then takes the top ``per_node`` of a
node's neighbours as a slice and says how many it left out.

The arrays are saved beside the vector index (``<index folder>/adjacency/``, ~25 bytes
per edge) and memory-mapped on later opens. They are rebuilt when the store's Event
count, its edge count of any Event->Event type, or (embedded store) the database file's
modification time differ from what they were built from; inside one process only the
Event count and the counts of the types asked for are checked on each call. ``clear``
(called by ``vector_index.clear_index``) drops them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import REL_TYPES
from eventkg.queries.graph import adjacency_build, columnar

FORMAT = 1
#: every stored type joining two Event nodes (the ones an adjacency holds)
EVENT_TYPES = tuple(t for t, r in REL_TYPES.items() if r.source == "Event" and r.target == "Event")
_CODE = {t: i for i, t in enumerate(EVENT_TYPES)}
_ARRAYS = ("ids", "indptr", "nbr", "etype", "out", "weight")


@dataclass
class Adjacency:
    """CSR arrays: the neighbours of node ``i`` are ``nbr[indptr[i]:indptr[i+1]]``, best first."""

    ids: np.ndarray  # sorted Event ids (bytes)
    indptr: np.ndarray
    nbr: np.ndarray  # int32 node positions
    etype: np.ndarray  # int8 code into EVENT_TYPES
    out: np.ndarray  # bool: the stored edge goes from the node to the neighbour
    weight: np.ndarray  # float32 count/weight (NaN when the type has none)
    counts: dict[str, int]  # edges per type when built

    def positions(self, event_ids: list[str]) -> list[int]:
        """Positions of the ids that are nodes here, in order (others dropped)."""
        keys = np.array([i.encode() for i in event_ids], dtype=self.ids.dtype) if event_ids else np.zeros(0, self.ids.dtype)
        pos = np.searchsorted(self.ids, keys)
        return [int(p) for p, k in zip(pos, keys, strict=True) if p < len(self.ids) and self.ids[p] == k]

    def id_of(self, pos: int) -> str:
        return self.ids[pos].decode()


def _folder(index_folder: Path) -> Path:
    return index_folder / "adjacency"


def _file_stamp(store: GraphStore) -> int | None:
    url = str(store.url)
    if "://" in url and not url.startswith("ladybug://"):
        return None
    try:
        return Path(url.removeprefix("ladybug://")).stat().st_mtime_ns
    except OSError:
        return None


_LOADED: dict[str, tuple[Adjacency, int]] = {}


def clear(index_folder: Path) -> None:
    """Drop the saved adjacency of an index folder and any in-process copy."""
    _LOADED.pop(str(index_folder), None)
    shutil.rmtree(_folder(index_folder), ignore_errors=True)


def open_adjacency(store: GraphStore, index_folder: Path, event_count: int | None, types: list[str]) -> Adjacency:
    """The store's adjacency: in memory, else from disk when current, else built now.

    ``event_count`` None trusts an adjacency already in memory without checking it (for
    callers that vouch the store did not change, as ``retrieve(index=...)`` does).
    """
    key = str(index_folder)
    held = _LOADED.get(key)
    if held is not None and event_count is None:
        return held[0]
    if event_count is None:
        from eventkg.queries.vectors.index import event_count as count_events

        event_count = count_events(store)
    if held is not None and held[1] == event_count and all(
        held[0].counts.get(t) == n for t, n in columnar.edge_counts(store, types).items()
    ):
        return held[0]
    counts = columnar.edge_counts(store, list(EVENT_TYPES))
    stamp = {"format": FORMAT, "events": event_count, "counts": counts, "file": _file_stamp(store)}
    folder = _folder(index_folder)
    adj = _load(folder, stamp)
    if adj is None:
        adj = _build_and_keep(folder, store, counts, stamp)
    _LOADED[key] = (adj, event_count)
    return adj


def _load(folder: Path, stamp: dict[str, Any] | None) -> Adjacency | None:
    """The arrays in ``folder``, memory-mapped, when built from ``stamp`` (None: whatever they are)."""
    try:
        if stamp is not None and json.loads((folder / "stamp.json").read_text()) != stamp:
            return None
        # memory-mapped, seen as plain arrays (indexing a np.memmap object is ~10x slower)
        arrays = {a: np.asarray(np.load(folder / f"{a}.npy", mmap_mode="r", allow_pickle=False)) for a in _ARRAYS}
    except (OSError, ValueError):
        return None
    return Adjacency(**arrays, counts=stamp["counts"] if stamp else {})


def _build_and_keep(folder: Path, store: GraphStore, counts: dict[str, int], stamp: dict[str, Any]) -> Adjacency:
    """Build into a new folder moved into place (the stamp last), memory-mapped; where the index
    folder cannot be written, into a temporary one (mapped, then removed: the mapping stays)."""
    t0 = time.perf_counter()
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".adjacency-", dir=folder.parent))
        keep = True
    except OSError:
        tmp, keep = Path(tempfile.mkdtemp(prefix="eventkg-adjacency-")), False
    try:
        adjacency_build.build_into(tmp, store, {t: counts.get(t, 1) for t in EVENT_TYPES})
        (tmp / "stamp.json").write_text(json.dumps(stamp))
        if keep:
            shutil.rmtree(folder, ignore_errors=True)
            tmp.rename(folder)
            tmp = folder
        adj = _load(tmp, stamp)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if adj is None:
        raise OSError(f"the adjacency just written to {tmp} cannot be read back")
    adj.build_seconds = round(time.perf_counter() - t0, 2)  # type: ignore[attr-defined]
    return adj


def build(store: GraphStore, counts: dict[str, int] | None = None) -> Adjacency:
    """Read every Event->Event edge and rank each node's neighbours (in a temporary folder, mapped)."""
    counts = dict(counts or {})
    with tempfile.TemporaryDirectory(prefix="eventkg-adjacency-") as name:
        got = adjacency_build.build_into(Path(name), store, {t: counts.get(t, 1) for t in EVENT_TYPES})
        adj = _load(Path(name), None)
    if adj is None:
        raise OSError("the adjacency just built cannot be read back")
    adj.counts = {**counts, **got}
    return adj


@dataclass
class Expansion:
    """A bounded neighbourhood: hop of each node, the kept edges, the nodes cut short."""

    hops: dict[int, int]
    edges: list[tuple[int, int, str, float]]  # (src pos, dst pos, stored type, weight)
    truncated: list[tuple[int, int, int]]  # (node pos, neighbours kept, neighbours it has)


def expand(adj: Adjacency, seeds: list[int], hops: int, types: list[str], per_node: int | None,
           per_hop: int | None) -> Expansion:
    """Breadth-first from ``seeds`` over ``types``, following each node's ``per_node`` best
    neighbours and adding at most ``per_hop`` new nodes per hop (best-ranked first)."""
    mask = np.zeros(len(EVENT_TYPES), dtype=bool)
    for t in types:
        mask[_CODE[t]] = True
    seen: dict[int, int] = {}
    for s in seeds:
        seen.setdefault(s, 0)
    frontier = list(dict.fromkeys(seeds))
    edges: list[tuple[int, int, str, float]] = []
    truncated: list[tuple[int, int, int]] = []
    pending: list[tuple[int, int, int, bool, float]] = []
    for h in range(1, hops + 1):
        new: list[int] = []
        fresh: set[int] = set()
        for node in frontier:
            lo, hi = int(adj.indptr[node]), int(adj.indptr[node + 1])
            if lo == hi:
                continue
            sel = np.flatnonzero(mask[adj.etype[lo:hi]]) + lo
            if per_node is not None and len(sel) > per_node:
                truncated.append((node, per_node, len(sel)))
                sel = sel[:per_node]
            for other, code, is_out, w in zip(adj.nbr[sel].tolist(), adj.etype[sel].tolist(), adj.out[sel].tolist(),
                                              adj.weight[sel].tolist(), strict=True):
                pending.append((node, other, code, is_out, w))
                if other not in seen and other not in fresh:
                    fresh.add(other)
                    new.append(other)
        if per_hop is not None:
            new = new[:per_hop]
        for m in new:
            seen[m] = h
        frontier = new
    for node, other, code, is_out, w in pending:
        if other in seen:
            src, dst = (node, other) if is_out else (other, node)
            edges.append((src, dst, EVENT_TYPES[code], w))
    return Expansion(seen, list(dict.fromkeys(edges)), truncated)


def file_size(index_folder: Path) -> int:
    """Bytes the saved adjacency takes."""
    folder = _folder(index_folder)
    return sum(f.stat().st_size for f in folder.glob("*")) if folder.is_dir() else 0

