"""Upserting typed Arrow tables into LadybugDB without MERGE: find what is stored, COPY the rest.

Why it looks the way it does (measured on ladybug 0.22, see bench/store_bench.py):

* ``UNWIND ... MERGE`` is not planned through the primary-key index and grows
  quadratically, so upserts never use MERGE. New rows go in with ``COPY ... FROM <arrow
  table>`` (millions of rows/s); existing rows are found first and updated one keyed
  statement at a time, and only when something changed.
* ``UNWIND $ids AS i MATCH (n:Label {id: i})`` uses the primary-key index (``docs/performance.md``),
  while ``WHERE n.id IN $ids`` scans. Edge lookups by (src, dst) pairs are planned as
  scans too, so existing edges are found from their source nodes' adjacency lists, or,
  when the batch is large next to the table, by scanning the table's keys once.
* Rows and Arrow tables go through one path: both become typed Arrow tables
  (``eventkg.graphstore.tables``), deduplicated by key, compared with what is stored column by
  column, and the new rows are COPYed straight from Arrow.
* Edge endpoints are checked before anything is written: a COPY that fails inside a
  transaction leaves ladybug 0.22 unable to checkpoint afterwards, so COPY must never fail.

A :class:`~eventkg.graphstore.keyset.KeySet` of the table, when the store keeps one, says
which keys cannot be stored, so only the others are looked up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.errors import MissingEndpointError
from eventkg.graphstore.keyset import KeySet, fingerprints
from eventkg.graphstore.ladybug.engine import copy_arrow, count_rows
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import changed_rows, conform_table, dedupe, row_schema, rows_table
from eventkg.graphstore.tables import key_column as _edge_key

NODE_GROUP_ROWS = 131_072  # ladybug 0.22 keeps a node table in groups of 2^17 rows, by node offset
UPDATE_NODE_GROUPS = 2  # node groups one deferred update transaction touches unless told (update_by_node_groups)
LOAD_UPDATE_ROWS = 64  # changed nodes from which one LOAD FROM beats a statement per row
FEW_SOURCES = 150  # edge lookups by up to this many sources go one keyed query each, whatever the table
# ... and by more when the table holds at least this many edges per source asked: a keyed query per
# source costs about what scanning this many edges does (0.5 ms against ~1 us per edge at 10M/30M),
# while an UNWIND over many ids is planned as a scan of the table per chunk (docs/performance.md)
EDGES_PER_SOURCE_QUERY = 500
SCAN_RATIO = 8  # scan a rel table's keys when it holds fewer than SCAN_RATIO x batch rows
# node labels bigger than this are never read whole to find stored rows (keyed lookups
# instead, ~3 µs per id): the scan's result grows with the label (ASER 1M events: ~95 MB)
SCAN_MAX_NODES = 400_000

Fingerprints = tuple[np.ndarray, np.ndarray]


def per_source_queries(sources: int, stored_edges: int) -> bool:
    """True when the stored edges from ``sources`` source nodes of a rel table holding
    ``stored_edges`` are found faster by one keyed query per source than by reading the table."""
    return sources <= max(FEW_SOURCES, stored_edges // EDGES_PER_SOURCE_QUERY)


def typed_tables(
    kinds: Mapping[str, Any],
    keys: tuple[str, ...],
    rows: Mapping[str, list],
    tables: Mapping[str, pa.Table],
    fps: dict[str, Fingerprints],
) -> dict[str, pa.Table]:
    """Rows and tables of each label/type as one typed, key-deduplicated Arrow table
    (their key fingerprints go into ``fps``)."""
    out = {}
    for name in [*rows, *(t for t in tables if t not in rows)]:
        props = kinds[name].properties
        parts = []
        if rows.get(name):
            parts.append(rows_table(name, rows[name], keys, props))
        if name in tables and tables[name].num_rows:
            parts.append(conform_table(name, tables[name], keys, props))
        if parts:
            out[name], fps[name] = dedupe(pa.concat_tables(parts) if len(parts) > 1 else parts[0], keys, props)
    return out


def upsert(
    conn: Any, name: str, table: pa.Table, fps: Fingerprints, known: KeySet | None, *, chunk: int,
    update: Callable[[Any, str, list[dict[str, Any]]], None] | None = None, stored: pa.Table | None = None,
) -> tuple[int, int, Fingerprints]:
    """COPY the rows not stored yet; update the stored ones the batch changes.

    ``known`` is the table's key set (None: every key may be stored). ``update(conn, name,
    rows)`` rewrites the changed rows (default :func:`update_rows`, in the caller's
    transaction; a bulk session defers node updates, see :func:`update_by_node_groups`).
    ``stored``: the stored rows of the table's keys, conformed, when the caller has looked them
    up already (then nothing is asked again, and the rows of the other keys are new).
    Returns (created, updated, fingerprints of the created keys).
    """
    is_node = name in NODE_TYPES
    keys = ("id",) if is_node else ("src", "dst")
    h1, h2 = fps
    if stored is None:
        stored = _stored_rows(conn, name, table, fps, known, chunk=chunk)
    is_new = np.ones(table.num_rows, bool)
    updated = 0
    if stored.num_rows:
        key = table.column("id") if is_node else _edge_key(table)
        skey = stored.column("id") if is_node else _edge_key(stored)
        is_new = ~pc.is_in(key, value_set=skey).to_numpy(zero_copy_only=False)
        changed = changed_rows(table.filter(pa.array(~is_new)), stored, keys)
        (update or update_rows)(conn, name, changed)
        updated = len(changed)
    new = table if is_new.all() else table.filter(pa.array(is_new))
    if new.num_rows:
        copy_arrow(conn, name, new)
    return new.num_rows, updated, (h1[is_new], h2[is_new])


def _stored_rows(conn: Any, name: str, table: pa.Table, fps: Fingerprints, known: KeySet | None, *,
                 chunk: int) -> pa.Table:
    """The stored rows (conformed) of the keys of ``table`` that its key set ``known`` does not rule out."""
    if known is not None:
        present, unsure = known.lookup(*fps)
        maybe = present | unsure
        if not maybe.any():
            return table.schema.empty_table()
        table = table.filter(pa.array(maybe))
    if name in NODE_TYPES:
        stored = existing_nodes(conn, name, table.column("id"), list(table.column_names), chunk=chunk)
        return conform_table(name, stored, ("id",), NODE_TYPES[name].properties)
    return existing_edges(conn, name, table, chunk=chunk)


def update_rows(conn: Any, name: str, rows: list[dict[str, Any]]) -> None:
    """Rewrite the changed stored rows, one keyed statement each (re-ingests rarely change any)."""
    if not rows:
        return
    if name in NODE_TYPES and len(rows) >= LOAD_UPDATE_ROWS:
        # many rows: one keyed LOAD FROM a typed Arrow table (40K nodes in ~0.5 s, where a
        # statement per row takes ~100 µs each); rel tables plan the same as a scan, so not them
        props = NODE_TYPES[name].properties
        eventkg_update_rows = pa.Table.from_pylist(rows, schema=row_schema(("id",), props))  # noqa: F841
        sets = ", ".join(f"n.`{c}` = `{c}`" for c in ["sources", *props])
        conn.execute(f"LOAD FROM eventkg_update_rows MATCH (n:{name} {{id: id}}) SET {sets}")
        return
    if name in NODE_TYPES:
        props = list(NODE_TYPES[name].properties)
        sets = ", ".join(f"n.`{c}` = $r_{c}" for c in ["sources", *props])
        stmt = f"MATCH (n:{name} {{id: $r_id}}) SET {sets}"
        keys = ["id"]
    else:
        rel = REL_TYPES[name]
        props = list(rel.properties)
        sets = ", ".join(f"e.`{c}` = $r_{c}" for c in ["sources", *props])
        stmt = f"MATCH (a:{rel.source} {{id: $r_src}})-[e:{name}]->(b:{rel.target} {{id: $r_dst}}) SET {sets}"
        keys = ["src", "dst"]
    for row in rows:
        conn.execute(stmt, {f"r_{c}": row.get(c) for c in [*keys, "sources", *props]})


def node_offsets(conn: Any, label: str, ids: list[str], *, chunk: int = 100_000) -> dict[str, int]:
    """Each stored node's offset in its table (keyed lookups): its node group is offset // ``NODE_GROUP_ROWS``."""
    found: dict[str, int] = {}
    for i in range(0, len(ids), chunk):
        part = conn.execute(f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN n.id, offset(id(n))",
                            {"ids": ids[i : i + chunk]}).get_as_arrow(0)
        found.update(zip(part.column(0).to_pylist(), part.column(1).to_pylist(), strict=True))
    return found


def update_by_node_groups(connection: Callable[[], Any], name: str, rows: list[dict[str, Any]],
                          transaction: Callable[[Callable[[], None]], None], groups: int = UPDATE_NODE_GROUPS) -> None:
    """Rewrite changed stored nodes ``groups`` node groups at a time, in order of offset, each part
    by ``transaction(work)`` (runs ``work`` in a transaction of its own, then checkpoints, which may
    reopen the database: ``connection()`` is the open one). A bulk session passes what its memory
    budget holds (:func:`~eventkg.graphstore.ladybug.engine.update_node_groups`).

    Why: an update keeps engine memory for every node group it touches until the next
    checkpoint, so changed rows spread over a big table cost memory in proportion to the table
    (ladybug 0.22, ``bench/second_source_bench.py``'s engine-update; with the paged rel key scans,
    ``StoredKeys.scan``, it lowered a second source's peak: ``docs/performance.md``).
    """
    offsets = node_offsets(connection(), name, [r["id"] for r in rows])
    span = NODE_GROUP_ROWS * groups
    parts: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        parts.setdefault(offsets.get(row["id"], 0) // span, []).append(row)
    for key in sorted(parts):
        transaction(lambda part=parts[key]: update_rows(connection(), name, part))


def check_endpoints(
    conn: Any,
    nodes: Mapping[str, pa.Table],
    edges: Mapping[str, pa.Table],
    keyset_of: Callable[[str], KeySet | None],
    *,
    chunk: int,
) -> None:
    """Refuse a batch whose edges name nodes that are neither in it nor in the store.

    Checked before anything is written: a COPY that fails on a missing key inside a
    transaction leaves ladybug 0.22 unable to checkpoint afterwards. ``keyset_of(label)``
    gives the label's key set (None: ask the engine about every id).
    """
    wanted: dict[str, list[pa.ChunkedArray]] = {}
    for rtype, table in edges.items():
        rel = REL_TYPES[rtype]
        wanted.setdefault(rel.source, []).append(table.column("src"))
        wanted.setdefault(rel.target, []).append(table.column("dst"))
    for label, cols in wanted.items():
        chunks = [c for col in cols for c in col.chunks]
        keys = keyset_of(label)
        if keys is not None and len(keys):
            # hash every endpoint and look it up before any unique(): at ASER 1M/3M with
            # --map-events, unique() over each batch's endpoints first took 1.9 of the 28 CPU-s
            chunks = [c.filter(pa.array(~present)) for c in chunks
                      if not (present := keys.lookup(*fingerprints(c))[0]).all()]
        if not chunks:
            continue
        ids = pc.unique(pa.chunked_array(chunks, pa.string()))
        if label in nodes:
            ids = ids.filter(pc.invert(pc.is_in(ids, value_set=nodes[label].column("id"))))
        if not len(ids):
            continue
        wanted_ids = ids.to_pylist()
        stored = existing_ids(conn, label, wanted_ids, ["id"], chunk=chunk).column(0).to_pylist()
        missing = sorted(set(wanted_ids) - set(stored))
        if missing:
            raise MissingEndpointError(
                f"{len(missing)} edge endpoint(s) are not in the store, e.g. {label} {missing[0]!r}"
            )


def existing_ids(conn: Any, label: str, ids: list[str], cols: Sequence[str], *, chunk: int) -> pa.Table:
    """Stored ``cols`` of the nodes among ``ids`` (keyed lookups, read as Arrow)."""
    ret = ", ".join(f"n.`{c}` AS `{c}`" for c in cols)
    parts = [
        conn.execute(
            f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN {ret}", {"ids": ids[i : i + chunk * 5]}
        ).get_as_arrow(0)
        for i in range(0, len(ids), chunk * 5)
    ]
    return pa.concat_tables(parts) if parts else pa.table({c: pa.array([], pa.string()) for c in cols})


def existing_nodes(
    conn: Any, label: str, ids: pa.ChunkedArray | pa.Array, cols: Sequence[str], *, chunk: int
) -> pa.Table:
    """Stored ``cols`` of the nodes among ``ids``: keyed lookups, or one scan of the label
    when ``ids`` are many next to it (a re-run after a crash asks for every stored node) and
    the label is at most ``SCAN_MAX_NODES`` big."""
    if (stored := count_rows(conn, label)) < SCAN_RATIO * len(ids) and stored <= SCAN_MAX_NODES:
        ret = ", ".join(f"n.`{c}` AS `{c}`" for c in cols)
        found = conn.execute(f"MATCH (n:{label}) RETURN {ret}").get_as_arrow(0)
        return found.filter(pc.is_in(found.column("id"), value_set=pc.unique(ids)))
    return existing_ids(conn, label, ids.to_pylist(), cols, chunk=chunk)


def existing_edges(conn: Any, rtype: str, cand: pa.Table, *, chunk: int) -> pa.Table:
    """Stored edges among the (src, dst) keys of ``cand``, with their properties."""
    rel = REL_TYPES[rtype]
    cols = ["src", "dst", "sources", *rel.properties]
    ret = ", ".join(f"{e} AS `{c}`" for e, c in zip(["a.id", "b.id", *(f"e.`{c}`" for c in cols[2:])], cols, strict=True))
    total = count_rows(conn, rtype)
    if total < SCAN_RATIO * cand.num_rows:  # one scan of the whole table beats many adjacency lookups
        parts = [conn.execute(f"MATCH (a:{rel.source})-[e:{rtype}]->(b:{rel.target}) RETURN {ret}").get_as_arrow(0)]
    elif per_source_queries(len(srcs := pc.unique(cand.column("src")).to_pylist()), total):
        # an UNWIND over ids is planned as a scan of the rel table (~0.4 s at 180K edges even
        # for one id); a keyed query per source takes ~0.5-2 ms
        query = f"MATCH (a:{rel.source} {{id: $id}})-[e:{rtype}]->(b:{rel.target}) RETURN {ret}"
        parts = [conn.execute(query, {"id": src}).get_as_arrow(0) for src in srcs]
    else:
        parts = [
            conn.execute(
                f"UNWIND $ids AS i MATCH (a:{rel.source} {{id: i}})-[e:{rtype}]->(b:{rel.target}) RETURN {ret}",
                {"ids": srcs[i : i + chunk]},
            ).get_as_arrow(0)
            for i in range(0, len(srcs), chunk)
        ]
    found = pa.concat_tables(parts) if parts else None
    if found is None or not found.num_rows:
        return cand.schema.empty_table()
    found = found.filter(pc.is_in(_edge_key(found), value_set=_edge_key(cand)))
    return conform_table(rtype, found, ("src", "dst"), rel.properties)
