"""A batch's rows typed for Neo4j: one :class:`Part` per label/type, the unit every write step handles.

Owns: conforming and deduplicating a batch's rows and Arrow tables exactly as the embedded store
does (:mod:`eventkg.graphstore.tables`: the same values, the same refusals), the key fingerprints
of each row (:mod:`eventkg.graphstore.keyset`) and each row's estimated transaction cost
(:func:`row_bytes`: its values plus :data:`ROW_BYTES` and :data:`VALUE_BYTES` per property), which
the cut into bounded transactions (:mod:`eventkg.graphstore.neo4j.transactions`) sums.

Invariant: a part holds one row per key, in the declared column order, and knows whether its rows
are known to be absent (``new``). Rows travel to CREATE as positional lists (:meth:`Part.tuples`),
not maps: a map repeats its keys in every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import conform_table, decoded_rows, dedupe, rows_table

ROW_BYTES = 96  # estimated transaction state per row besides its values
VALUE_BYTES = 24  # ... and per stored property


def keys_of(name: str) -> tuple[str, ...]:
    return ("id",) if name in NODE_TYPES else ("src", "dst")


def properties_of(name: str) -> dict[str, str]:
    return (NODE_TYPES.get(name) or REL_TYPES[name]).properties


@dataclass
class Part:
    """Rows of one label/type in one transaction: ``new`` rows are known to be absent."""

    name: str
    table: pa.Table  # conformed (graphstore.tables), one row per key
    h1: np.ndarray  # key fingerprints, row for row (graphstore.keyset)
    h2: np.ndarray
    row_bytes: np.ndarray
    new: bool
    _tuples: list[tuple] | None = field(default=None, repr=False)

    @property
    def is_edge(self) -> bool:
        return self.name in REL_TYPES

    def __len__(self) -> int:
        return self.table.num_rows

    def slice(self, start: int, stop: int) -> Part:
        return Part(self.name, self.table.slice(start, stop - start), self.h1[start:stop], self.h2[start:stop],
                    self.row_bytes[start:stop], self.new)

    def tuples(self) -> list[tuple]:
        """The rows as CREATE takes them: keys, sources (a list), properties in declared order."""
        if self._tuples is None:
            cols = []
            for name in self.table.column_names:
                values = self.table.column(name).to_pylist()
                cols.append(sources_lists(values) if name == "sources" else values)
            self._tuples = list(zip(*cols, strict=True))
        return self._tuples

    def dicts(self) -> list[dict[str, Any]]:
        """The rows as the upsert path takes them (``sources`` a list, nulls dropped)."""
        return [{k: v for k, v in r.items() if v is not None} for r in decoded_rows(self.table)]

    def key_of(self, i: int) -> str:
        """Row ``i``'s key as an error message names it."""
        if self.is_edge:
            return f"({self.table.column('src')[i].as_py()!r} -> {self.table.column('dst')[i].as_py()!r})"
        return repr(self.table.column("id")[i].as_py())


def sources_lists(values: list[str | None]) -> list[list[str]]:
    """Stored ``sources`` strings (comma-joined) as lists, one list object per distinct value."""
    cache: dict[str | None, list[str]] = {}
    out = []
    for v in values:
        got = cache.get(v)
        if got is None:
            got = cache[v] = v.split(",") if v else []
        out.append(got)
    return out


#: a label/type's rows typed: the conformed table, one row per key, and its key fingerprints (h1, h2)
Typed = tuple[pa.Table, tuple[np.ndarray, np.ndarray]]


def typed_batch(batch: Batch) -> dict[str, Typed]:
    """The batch's non-empty labels, then its non-empty types, each typed (rows and tables merged)."""
    names = [*dict.fromkeys([*batch.nodes, *batch.node_tables]), *dict.fromkeys([*batch.edges, *batch.edge_tables])]
    sources = {**batch.nodes, **batch.edges}
    tables = {**batch.node_tables, **batch.edge_tables}
    typed = {}
    for name in names:
        rows, table = sources.get(name), tables.get(name)
        if rows or (table is not None and table.num_rows):
            typed[name] = typed_table(name, rows, table)
    return typed


def typed_table(name: str, rows: list[dict[str, Any]] | None, table: pa.Table | None) -> Typed:
    """A name's rows and table as one conformed table, one row per key, with key fingerprints."""
    keys, props = keys_of(name), properties_of(name)
    parts = []
    if rows:
        parts.append(rows_table(name, rows, keys, props))
    if table is not None and table.num_rows:
        parts.append(conform_table(name, table, keys, props))
    merged = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    return dedupe(merged, keys, props)


def row_bytes(table: pa.Table) -> np.ndarray:
    """Estimated bytes each row costs a transaction: its values plus a fixed overhead."""
    out = np.full(table.num_rows, ROW_BYTES + VALUE_BYTES * table.num_columns, np.int64)
    for col in table.columns:
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            out += pc.fill_null(pc.binary_length(col), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        elif pa.types.is_list(col.type):
            flat = pc.list_flatten(col)
            if len(flat):
                lengths = pc.fill_null(pc.binary_length(flat), 0).to_numpy(zero_copy_only=False) + VALUE_BYTES
                parents = pc.list_parent_indices(col).to_numpy()
                out += np.bincount(parents, weights=lengths, minlength=len(col)).astype(np.int64)
        else:
            out += 8
    return out
