"""How a batch travels to Neo4j: typed Arrow per label/type, cut into bounded transactions.

Why: Neo4j keeps a transaction's whole state on its heap, and refuses a transaction past
``dbms.memory.transaction.total.max`` (70% of a 512 MB default heap), so a 200,000-row
loader batch cannot be one transaction. Every batch is typed and deduplicated as the
embedded store does it (``eventkg.graphstore.tables``: the same values, the same refusals), each
row's size is estimated from its Arrow buffers, and the rows are cut into transactions of
at most ``TX_ROWS`` rows and ``TX_BYTES`` estimated bytes (nodes before edges). A row
bigger than ``TX_BYTES`` is a transaction of its own.

Rows are sent as positional lists (``[id, sources, prop1, ...]``), not maps: a map repeats
its keys in every row, so lists pack and travel in about half the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import neo4j
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.tables import conform_table, decoded_rows, dedupe, rows_table

TX_ROWS = 20_000  # most rows per transaction
TX_BYTES = 16 << 20  # most estimated bytes per transaction (Neo4j's state is a few times this)
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


def typed_table(name: str, rows: list[dict[str, Any]] | None, table: pa.Table | None) -> tuple[pa.Table, tuple]:
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


def plan(parts: Sequence[Part], tx_rows: int = TX_ROWS, tx_bytes: int = TX_BYTES) -> list[list[Part]]:
    """Cut the parts (in order) into transactions of <= ``tx_rows`` rows and <= ``tx_bytes`` bytes."""
    txs: list[list[Part]] = []
    current: list[Part] = []
    rows = size = 0
    for part in parts:
        start = 0
        cum = np.cumsum(part.row_bytes)
        while start < len(part):
            room_rows = tx_rows - rows
            base = cum[start - 1] if start else 0
            fits = int(np.searchsorted(cum, base + (tx_bytes - size), side="right")) - start
            take = min(room_rows, fits, len(part) - start)
            if take <= 0:
                if current:  # this transaction is full: start the next one
                    txs.append(current)
                    current, rows, size = [], 0, 0
                    continue
                take = 1  # one row bigger than a whole transaction goes alone
            current.append(part.slice(start, start + take) if take < len(part) else part)
            rows += take
            size += int(cum[start + take - 1] - base)
            start += take
    if current:
        txs.append(current)
    return txs


def halves(parts: Sequence[Part]) -> Iterator[list[Part]]:
    """A transaction's parts split into two of about half the rows each (for a retry in smaller pieces)."""
    total = sum(map(len, parts))
    half = total // 2
    first: list[Part] = []
    second: list[Part] = []
    seen = 0
    for part in parts:
        if seen >= half:
            second.append(part)
        elif seen + len(part) <= half:
            first.append(part)
        else:
            cut = half - seen
            first.append(part.slice(0, cut))
            second.append(part.slice(cut, len(part)))
        seen += len(part)
    yield first
    yield second


def count_rows(parts: Sequence[Part]) -> int:
    return sum(map(len, parts))


def missing_message(rtype: str, row: Mapping[str, Any], src_missing: bool) -> str:
    """The one line naming the end of an edge row (``src``/``dst``) that is not in the store."""
    rel = REL_TYPES[rtype]
    label, nid = (rel.source, row["src"]) if src_missing else (rel.target, row["dst"])
    return f"{rtype} edge refers to a node that is not in the store: {label} {nid!r}"


T = TypeVar("T")


def run_chunks(tx: neo4j.Transaction, query: str, rows: list, chunk_size: int,
               read: Callable[[neo4j.Result, list], T]) -> list[T]:
    """``query`` over ``rows`` in statements of ``chunk_size`` rows (``$rows``), each sent before the
    previous one's result is read, so the server runs one while the next is packed; ``read``
    turns each statement's result (and the rows it was given) into a value, in order."""
    out: list[T] = []
    pending: tuple[neo4j.Result, list] | None = None
    for i in range(0, len(rows), chunk_size):
        chunk = rows[i : i + chunk_size]
        if pending is not None:
            out.append(read(*pending))
        pending = (tx.run(query, rows=chunk), chunk)
    if pending is not None:
        out.append(read(*pending))
    return out
