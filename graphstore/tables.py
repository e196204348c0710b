"""Node/edge rows as typed Arrow tables: the embedded store's bulk-write currency.

Every table leaving here has the columns of its LadybugDB table in declaration order
(``id`` or ``src, dst``; ``sources``; the declared properties), the declared Arrow types,
``sources`` encoded as the stored sorted comma-joined string, and one row per key, so it
can go straight into ``COPY ... FROM <arrow table>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.base import merge_props
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.keyset import edge_fingerprints, fingerprints
from eventkg.graphstore.model import DOUBLE, INT64, STRING, STRING_LIST

# rows of repeated keys merged as Python dicts at a time: a dict per row, so merging every repeat of
# a big table at once took memory in proportion to its repeats (docs/performance.md)
MERGE_ROWS = 50_000
ARROW_TYPES = {STRING: pa.string(), DOUBLE: pa.float64(), INT64: pa.int64(), STRING_LIST: pa.list_(pa.string())}


def encode_sources(sources) -> str:
    """``sources`` are stored as one sorted, comma-joined STRING.

    LadybugDB checkpoints rel tables with a STRING[] column two orders of magnitude slower
    than with a STRING one (``docs/performance.md``), so the list is
    flattened in storage and split again on every read of the Python API. In raw Cypher on
    this backend, test membership with ``e.sources CONTAINS 'ev2'``.
    """
    return ",".join(sorted({s for s in sources or () if s}))


def row_schema(keys: Sequence[str], props: Mapping[str, str]) -> pa.Schema:
    """The stored table's Arrow schema: keys, encoded ``sources``, then the declared properties."""
    return pa.schema([(k, pa.string()) for k in keys] + [("sources", pa.string())]
                     + [(p, ARROW_TYPES[t]) for p, t in props.items()])


def _column(rows: list[dict[str, Any]], name: str) -> list[Any]:
    """One column of a list of row dicts (itemgetter speed when every row has it)."""
    try:
        return list(map(itemgetter(name), rows))
    except KeyError:
        return [r.get(name) for r in rows]


def rows_table(name: str, rows: list[dict[str, Any]], keys: Sequence[str], props: Mapping[str, str]) -> pa.Table:
    """Row dicts (``sources`` a list) -> a typed table."""
    schema = row_schema(keys, props)
    encoded: dict[tuple, str] = {}  # most rows share their sources list
    sources = [encoded.get(t) or encoded.setdefault(t, encode_sources(t))
               for t in map(tuple, (r.get("sources") or () for r in rows))]
    cols = {}
    for f in schema:
        values = sources if f.name == "sources" else _column(rows, f.name)
        try:
            cols[f.name] = pa.array(values, type=f.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as exc:
            raise StoreError(f"{name} property {f.name}: {' '.join(str(exc).split())[:200]}") from None
    return pa.table(cols, schema=schema)


def sources_column(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A ``list<string>`` or ``string`` sources column -> the stored (canonical) strings."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        col = pc.binary_join(col, ",")
    col = pc.fill_null(col.cast(pa.string()), "")
    uniq = pc.unique(col)
    raw = uniq.to_pylist()
    canon = [encode_sources(u.split(",")) for u in raw]
    if canon == raw:
        return col
    return pa.array(canon, pa.string()).take(pc.index_in(col, value_set=uniq))


def conform_table(name: str, table: pa.Table, keys: Sequence[str], props: Mapping[str, str]) -> pa.Table:
    """Any table of a label/type's columns -> the typed, ordered, encoded table (missing columns null)."""
    schema = row_schema(keys, props)
    n = table.num_rows
    cols = []
    for f in schema:
        if f.name not in table.column_names:
            cols.append(pa.nulls(n, f.type) if f.name != "sources" else pa.array([""] * n, pa.string()))
            continue
        col = table.column(f.name)
        if f.name == "sources":
            cols.append(sources_column(col))
            continue
        try:
            cols.append(col.cast(f.type) if col.type != f.type else col)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise StoreError(f"{name} column {f.name}: {' '.join(str(exc).split())[:200]}") from None
    return pa.table(cols, schema=schema)


def key_column(table: pa.Table) -> pa.ChunkedArray | pa.Array:
    """One string per row naming its key: ``id``, or ``src`` + US + ``dst``."""
    if "id" in table.column_names:
        return table.column("id")
    return pc.binary_join_element_wise(table.column("src"), table.column("dst"), "\x1f")


def decoded(row: dict[str, Any]) -> dict[str, Any]:
    """A row read from storage with ``sources`` turned back into a list."""
    if "sources" in row:
        row["sources"] = row["sources"].split(",") if row["sources"] else []
    return row


def decoded_rows(table: pa.Table) -> list[dict[str, Any]]:
    """An Arrow table of stored rows as dicts, ``sources`` as lists."""
    return [decoded(r) for r in table.to_pylist()]


def key_fingerprints(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The two 64-bit fingerprints of each row's key (``id``, or ``src`` + ``dst``)."""
    if "id" in table.column_names:
        return fingerprints(table.column("id"))
    return edge_fingerprints(table.column("src"), table.column("dst"))


def dedupe(
    table: pa.Table, keys: Sequence[str], props: Mapping[str, str]
) -> tuple[pa.Table, tuple[np.ndarray, np.ndarray]]:
    """One row per key, and the keys' fingerprints (reused by the caller's existence check).

    Repeated keys merge as rows do (later non-null values win, sources unioned), ``MERGE_ROWS``
    rows of them at a time (split by key), each part's merged rows after the rows of keys held
    once. Distinct first fingerprints prove distinct keys; hashing with numpy and sorting is
    cheaper than Arrow's count_distinct over joined src/dst strings.
    """
    h1, h2 = key_fingerprints(table)
    ordered = np.sort(h1)
    if not bool((ordered[1:] == ordered[:-1]).any()):
        return table, (h1, h2)
    key = key_column(table)
    counts = pc.value_counts(key)
    repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    if not len(repeated):  # a fingerprint clash, not a repeated key
        return table, (h1, h2)
    mask = pc.is_in(key, value_set=repeated)
    held = table.filter(mask)
    parts = -(-held.num_rows // MERGE_ROWS)
    # a key's rows all in one part (by its first fingerprint), so the parts merge apart
    part_of = h1[mask.to_numpy(zero_copy_only=False)] % np.uint64(parts) if parts > 1 else None
    getkey = itemgetter(*keys)
    fixed = []
    for part in range(parts):
        merged: dict[Any, dict[str, Any]] = {}
        for row in decoded_rows(held if part_of is None else held.filter(pa.array(part_of == part))):
            k = getkey(row)
            merged[k] = row if k not in merged else merge_props(merged[k], row)
        fixed.append(rows_table("", list(merged.values()), keys, props).cast(table.schema))
        merged = None
    out = pa.concat_tables([table.filter(pc.invert(mask)), *fixed])
    return out, key_fingerprints(out)


def changed_rows(batch: pa.Table, stored: pa.Table, keys: Sequence[str]) -> list[dict[str, Any]]:
    """Stored rows (as dicts, ``sources`` encoded) that merging the batch's rows changes.

    ``batch`` holds only keys present in ``stored``; both are conformed tables. Compared
    column by column in Arrow; only changed rows become Python dicts.
    """
    if not batch.num_rows:
        return []
    old = stored.take(pc.index_in(key_column(batch), value_set=key_column(stored)))
    changed = pc.not_equal(merged_sources(old.column("sources"), batch.column("sources")), old.column("sources"))
    merged_cols = {}
    for name in batch.column_names:
        if name in keys:
            continue
        new, was = batch.column(name), old.column(name)
        if name == "sources":
            merged_cols[name] = merged_sources(was, new)
            continue
        if pa.types.is_list(new.type):
            n_py, o_py = new.to_pylist(), was.to_pylist()
            diff = pa.array([n is not None and n != o for n, o in zip(n_py, o_py, strict=True)])
            merged_cols[name] = pa.array([o if n is None else n for n, o in zip(n_py, o_py, strict=True)], new.type)
        else:
            diff = pc.and_(pc.is_valid(new), pc.fill_null(pc.not_equal(new, was), True))
            merged_cols[name] = pc.coalesce(new, was)
        changed = pc.or_(changed, diff)
    if not pc.any(changed).as_py():
        return []
    out = pa.table({**{k: batch.column(k) for k in keys}, **merged_cols}).filter(changed)
    return out.to_pylist()


def merged_sources(old: pa.ChunkedArray | pa.Array, new: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Element-wise union of two encoded sources columns (computed once per distinct pair)."""
    pair = pc.binary_join_element_wise(old, new, "\x1e")
    uniq = pc.unique(pair)
    canon = [encode_sources(p.replace("\x1e", ",").split(",")) for p in uniq.to_pylist()]
    return pa.array(canon, pa.string()).take(pc.index_in(pair, value_set=uniq))
