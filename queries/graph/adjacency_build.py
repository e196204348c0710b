"""Building the ranked adjacency of :mod:`eventkg.queries.graph.adjacency` in bounded memory.

Invariant: memory does not hold every Event->Event entry at once (the previous build did, with its
id strings, and grew faster than the graph; figures: ``docs/performance.md``). Here:

* node ids and frequencies are read a page of node offsets at a time (no id strings for the
  edges: the engine's node offsets are mapped to positions by one ``rank`` array);
* each page of edges is turned into positions and appended to spill files (13 bytes an
  edge: ``src``, ``dst`` int32, the type int8, the weight float32) beside the result;
* the entries are ranked a range of nodes at a time (``RANGE_ENTRIES`` entries a pass: each
  pass reads the spill files in chunks and keeps the entries of its nodes), sorted by the
  same keys as before (best weight, then the more frequent neighbour, then the neighbour,
  then the stored direction and type) and written to the result files at their row.

Memory is the per-node arrays (ids 12 bytes, frequency 4, ``indptr`` 8) plus one pass;
the result files are written through the page cache, never mapped while written.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import REL_TYPES
from eventkg.queries.graph import columnar
from eventkg.queries.graph.event_ids import as_bytes, id_order

RANGE_ENTRIES = 4_000_000  # entries ranked per pass
READ_CHUNK = 1 << 21  # spilled edges read per step
_SPILL = (("src", np.int32), ("dst", np.int32), ("typ", np.int8), ("w", np.float32))
RESULT = {"indptr": np.int64, "nbr": np.int32, "etype": np.int8, "out": np.bool_, "weight": np.float32}


def _nodes(store: GraphStore) -> tuple[np.ndarray, np.ndarray, Any]:
    """``(sorted ids, frequency per position, key -> position)`` (the last: an array by
    LadybugDB node offset, else an Arrow array of ids for ``index_in``)."""
    conn = columnar._ladybug_conn(store)
    if conn is None:
        table = columnar.event_frequencies(store)
        table = table.take(pc.sort_indices(table, [("id", "ascending")]))
        ids = table.column("id").combine_chunks()
        return as_bytes(ids), table.column("frequency").fill_null(0.0).to_numpy().astype(np.float32), ids
    keys, raw, freq = [], [], []
    for page in columnar.offset_pages(store, "MATCH (e:Event) {where} RETURN offset(ID(e)), e.id, e.frequency", "e"):
        keys.append(columnar._np(page.column(0)))
        raw.append(as_bytes(page.column(1)))
        freq.append(page.column(2).fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float32))
    width = max((a.dtype.itemsize for a in raw), default=1)
    ids = np.concatenate([a.astype(f"S{width}") for a in raw]) if raw else np.zeros(0, "S20")
    key = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    order = id_order(ids)
    rank = np.full(int(key.max()) + 1 if len(key) else 0, -1, dtype=np.int32)
    rank[key[order]] = np.arange(len(order), dtype=np.int32)
    return ids[order], (np.concatenate(freq)[order] if freq else np.zeros(0, np.float32)), rank


def _edge_pages(store: GraphStore, rel_type: str, where: Any) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(src positions, dst positions, weights)`` of a type's edges, a page at a time."""
    prop = columnar.WEIGHT_PROPERTY[rel_type]
    weight = f"e.{prop}" if prop else "CAST(NULL AS DOUBLE)"
    if isinstance(where, np.ndarray):  # LadybugDB node offsets -> positions
        rel = REL_TYPES[rel_type]
        cypher = (f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) {{where}} "
                  f"RETURN offset(ID(a)), offset(ID(b)), {weight}")
        for page in columnar.offset_pages(store, cypher, "a", page=columnar.EDGE_PAGE):
            w = page.column(2).to_numpy(zero_copy_only=False).astype(np.float32)
            yield where[columnar._np(page.column(0))], where[columnar._np(page.column(1))], w
        return
    e = columnar.edges(store, rel_type)
    src = pc.index_in(e.column("src"), value_set=where).to_numpy(zero_copy_only=False)
    dst = pc.index_in(e.column("dst"), value_set=where).to_numpy(zero_copy_only=False)
    yield src, dst, e.column("weight").to_numpy(zero_copy_only=False).astype(np.float32)


def _spill(store: GraphStore, types: dict[str, int], where: Any, tmp: Path, n: int) -> tuple[np.ndarray, dict[str, int]]:
    """Append every edge to the spill files (``types``: type -> edges the store counts, the type's
    code its place); the entries per node (both readings) and the edges read per type."""
    degree = np.zeros(n, dtype=np.int64)
    counts: dict[str, int] = {}
    files = {name: open(tmp / name, "wb") for name, _ in _SPILL}  # noqa: SIM115 - closed below
    try:
        for code, (t, stored) in enumerate(types.items()):
            counts[t] = 0
            for src, dst, w in _edge_pages(store, t, where) if stored else ():
                ok = (src >= 0) & (dst >= 0)  # both ends Event nodes (index_in gives null -> NaN/neg)
                src, dst, w = src[ok].astype(np.int32), dst[ok].astype(np.int32), w[ok]
                counts[t] += len(src)
                for ends in (src, dst):
                    b = np.bincount(ends)
                    degree[:len(b)] += b
                for name, arr in (("src", src), ("dst", dst), ("typ", np.full(len(src), code, np.int8)), ("w", w)):
                    files[name].write(arr.tobytes())
    finally:
        for f in files.values():
            f.close()
    return degree, counts


def _read_spill(tmp: Path, chunk: int) -> Iterator[dict[str, np.ndarray]]:
    total = (tmp / "src").stat().st_size // 4
    for a in range(0, total, chunk):
        m = min(chunk, total - a)
        yield {name: np.fromfile(tmp / name, dtype=dt, count=m, offset=a * np.dtype(dt).itemsize) for name, dt in _SPILL}


def _rank_range(tmp: Path, lo: int, hi: int, freq: np.ndarray, chunk: int) -> dict[str, np.ndarray]:
    """The entries of nodes ``lo..hi-1``, ranked (module docstring)."""
    parts: list[tuple[np.ndarray, ...]] = []
    for c in _read_spill(tmp, chunk):
        for node, nbr, out in ((c["src"], c["dst"], True), (c["dst"], c["src"], False)):
            sel = (node >= lo) & (node < hi)
            parts.append((node[sel], nbr[sel], c["typ"][sel], np.full(int(sel.sum()), out), c["w"][sel]))
    if not parts:  # a store without event-relation edges
        empty = np.zeros(0, dtype=np.int32)
        parts = [(empty, empty, np.zeros(0, dtype=np.int8), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.float32))]
    node, nbr, typ, out, w = (np.concatenate([p[i] for p in parts]) for i in range(5))
    rank_w = np.where(np.isnan(w), 0.0, w)
    order = np.lexsort((typ, ~out, nbr, -freq[nbr], -rank_w, node))
    return {"nbr": nbr[order], "etype": typ[order], "out": out[order], "weight": w[order]}


def build_into(folder: Path, store: GraphStore, types: dict[str, int], *, range_entries: int = RANGE_ENTRIES,
               read_chunk: int = READ_CHUNK) -> dict[str, int]:
    """Write ``ids``, ``indptr``, ``nbr``, ``etype``, ``out``, ``weight`` (.npy) into ``folder``
    (``types``: every Event->Event type in code order -> its stored edges, 0 skipped); the edges
    read per type."""
    ids, freq, where = _nodes(store)
    n = len(ids)
    np.save(folder / "ids.npy", ids, allow_pickle=False)
    with tempfile.TemporaryDirectory(prefix=".spill-", dir=folder) as name:
        tmp = Path(name)
        degree, counts = _spill(store, types, where, tmp, n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degree, out=indptr[1:])
        np.save(folder / "indptr.npy", indptr, allow_pickle=False)
        total = int(indptr[-1])
        heads = {}
        for a, dt in RESULT.items():
            if a != "indptr":
                mm = np.lib.format.open_memmap(folder / f"{a}.npy", mode="w+", dtype=dt, shape=(total,))
                heads[a] = mm.offset
                del mm
        lo = 0
        while lo < n:
            hi = int(np.searchsorted(indptr, indptr[lo] + range_entries, side="right")) - 1
            hi = min(max(hi, lo + 1), n)
            ranked = _rank_range(tmp, lo, hi, freq, read_chunk)
            for a, arr in ranked.items():
                with open(folder / f"{a}.npy", "r+b") as fh:
                    fh.seek(heads[a] + int(indptr[lo]) * arr.dtype.itemsize)
                    fh.write(arr.astype(RESULT[a], copy=False).tobytes())
            lo = hi
    return counts
