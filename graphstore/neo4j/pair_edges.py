"""New edges written a node pair at a time: every type between two nodes in one statement row.

Owns :class:`PairPart` (the new edges of all types joining the same two labels with the same
properties, sorted so a pair's edges lie side by side), its statement and :func:`create_pairs`.
A statement row is ``[id(a), id(b), sources, props... per type]`` (null where that type is
absent); the statement finds both ends once, by internal node id
(:mod:`eventkg.graphstore.neo4j.node_ids`), then CREATEs each present type (``FOREACH ... CASE``).
Why: an ASER Relations row gives 1-3 typed edges between the same two events, and each edge
written on its own finds both its ends again (figures: ``docs/performance.md``, "Figures moved
from docstrings (Neo4j)"). Not used: a statement per set of types a pair has (hundreds of small
statements per transaction, slower), and a relationship type given as data
(``CREATE (a)-[:$(t[0])]->(b)``): under ``UNWIND`` Neo4j 5.26.0 evaluates it once and gives every
row the first row's type. Invariant: every row of a pair part is known new; an end not found is a
:class:`MissingEndpointError` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import neo4j
import numpy as np
import pyarrow as pa

from eventkg.graphstore.base import WriteResult
from eventkg.graphstore.errors import MissingEndpointError
from eventkg.graphstore.model import REL_TYPES
from eventkg.graphstore.neo4j.node_ids import MISSING, TxIds
from eventkg.graphstore.neo4j.typed_parts import Part, sources_lists
from eventkg.graphstore.neo4j.upsert import missing_message, run_chunks


@dataclass
class PairPart:
    """New edges of types with the same (source, target) labels and properties, a pair's rows adjacent."""

    types: tuple[str, ...]
    type_idx: np.ndarray  # row -> index into ``types``
    table: pa.Table  # src, dst, sources, then the properties (all the types declare the same ones)
    h1: np.ndarray  # edge-key fingerprints (the same for every type of a pair)
    h2: np.ndarray
    row_bytes: np.ndarray
    new: bool = True
    _cols: dict[str, list] | None = field(default=None, repr=False)

    is_edge = True

    @property
    def name(self) -> str:
        """The type of the first row (what an error about a one-row part names)."""
        return self.types[int(self.type_idx[0])] if len(self) else self.types[0]

    @property
    def source(self) -> str:
        return REL_TYPES[self.types[0]].source

    @property
    def target(self) -> str:
        return REL_TYPES[self.types[0]].target

    def __len__(self) -> int:
        return self.table.num_rows

    def slice(self, start: int, stop: int) -> PairPart:
        return PairPart(self.types, self.type_idx[start:stop], self.table.slice(start, stop - start),
                        self.h1[start:stop], self.h2[start:stop], self.row_bytes[start:stop], self.new)

    def key_of(self, i: int) -> str:
        return self.by_type_row(i).key_of(0)

    def by_type_row(self, i: int) -> Part:
        return self._typed(int(self.type_idx[i]), np.array([i]))

    def by_type(self) -> list[Part]:
        """The rows as one plain part per type (for the exact upsert path and the key sets)."""
        out = []
        for k in range(len(self.types)):
            rows = np.flatnonzero(self.type_idx == k)
            if len(rows):
                out.append(self._typed(k, rows))
        return out

    def keys_by_type(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(type, h1, h2) of each type's rows: what the session's key sets learn (no table built)."""
        out = []
        for k, name in enumerate(self.types):
            rows = self.type_idx == k
            if rows.any():
                out.append((name, self.h1[rows], self.h2[rows]))
        return out

    def _typed(self, k: int, rows: np.ndarray) -> Part:
        table = self.table.take(pa.array(rows))
        return Part(self.types[k], table, self.h1[rows], self.h2[rows], self.row_bytes[rows], self.new)

    def columns(self) -> dict[str, list]:
        """Python values of the statement's columns (``sources`` as lists), built once."""
        if self._cols is None:
            self._cols = {}
            for name in self.table.column_names[2:]:
                values = self.table.column(name).to_pylist()
                self._cols[name] = sources_lists(values) if name == "sources" else values
        return self._cols


#: a part as a transaction takes it: one label/type's rows, or a pair part's new edges
TxPart = Part | PairPart


def pair_parts(parts: Sequence[Part]) -> list[TxPart]:
    """The parts, with the new edge parts of each (source, target, properties) merged into one PairPart."""
    groups: dict[tuple, list[Part]] = {}
    out: list[TxPart] = []
    for part in parts:
        if part.is_edge and part.new:
            rel = REL_TYPES[part.name]
            groups.setdefault((rel.source, rel.target, tuple(rel.properties)), []).append(part)
        else:
            out.append(part)
    for group in groups.values():
        out.append(_merge(group))
    return out


def _merge(group: list[Part]) -> PairPart:
    types = tuple(p.name for p in group)
    table = pa.concat_tables([p.table for p in group])  # one schema: same keys, same properties
    type_idx = np.concatenate([np.full(len(p), k, np.int16) for k, p in enumerate(group)])
    h1 = np.concatenate([p.h1 for p in group])
    h2 = np.concatenate([p.h2 for p in group])
    sizes = np.concatenate([p.row_bytes for p in group])
    order = np.argsort(h1, kind="stable")  # a pair's edges side by side (the same key fingerprint)
    idx = pa.array(order)
    return PairPart(types, type_idx[order], table.take(idx), h1[order], h2[order], sizes[order])


def props_of(part: PairPart) -> list[str]:
    """The stored columns of a pair part's edges: ``sources``, then the declared properties."""
    return ["sources", *REL_TYPES[part.types[0]].properties]


ENDS = "UNWIND $rows AS r MATCH (a) WHERE id(a) = r[0] MATCH (b) WHERE id(b) = r[1] "


def foreach_cypher(types: Sequence[str], props: Sequence[str]) -> str:
    """Rows ``[id(a), id(b), then per type: sources, props...]`` (sources null: no edge of that type)."""
    body, k = [], 2
    for t in types:
        values = ", ".join(f"`{c}`: r[{k + i}]" for i, c in enumerate(props))
        body.append(f"FOREACH (_ IN CASE WHEN r[{k}] IS NULL THEN [] ELSE [1] END | CREATE (a)-[:{t} {{{values}}}]->(b))")
        k += len(props)
    return ENDS + " ".join(body)


def pair_starts(a: np.ndarray, b: np.ndarray) -> list[bool]:
    """Whether each row starts a new run of rows with the same ends."""
    starts = np.ones(len(a), bool)
    starts[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return starts.tolist()


def foreach_rows(part: PairPart, a: np.ndarray, b: np.ndarray) -> list[list]:
    """One statement row per pair: its ends' ids, then each type's slots (null where absent)."""
    cols = part.columns()
    values = [cols[c] for c in props_of(part)]
    width = 2 + len(part.types) * len(values)
    rows: list[list] = []
    row: list = []
    al, bl, tl = a.tolist(), b.tolist(), part.type_idx.tolist()
    for i, start in enumerate(pair_starts(a, b)):
        if start:
            row = [al[i], bl[i], *([None] * (width - 2))]
            rows.append(row)
        off = 2 + tl[i] * len(values)
        for j, col in enumerate(values):
            row[off + j] = col[i]
    return rows


def create_pairs(tx: neo4j.Transaction, part: PairPart, chunk_size: int, ids: TxIds) -> WriteResult:
    """CREATE a pair part's edges (all new); an end that is not stored raises MissingEndpointError."""
    a = ids.resolve(tx, part.source, part.table.column("src").combine_chunks())
    b = ids.resolve(tx, part.target, part.table.column("dst").combine_chunks())
    for ends, src_missing in ((a, True), (b, False)):
        if (ends == MISSING).any():
            row = part.by_type_row(int(np.flatnonzero(ends == MISSING)[0]))
            key = {"src": row.table.column("src")[0].as_py(), "dst": row.table.column("dst")[0].as_py()}
            raise MissingEndpointError(missing_message(row.name, key, src_missing))
    q, rows = foreach_cypher(part.types, props_of(part)), foreach_rows(part, a, b)
    made = sum(run_chunks(tx, q, rows, chunk_size, _created))
    if made != len(part):  # a node found by id vanished: only another writer deleting nodes does that
        raise MissingEndpointError(f"{part.name} edges: {len(part) - made:,} of {len(part):,} found an end "
                                   "deleted while this batch was written (another writer?)")
    counts = np.bincount(part.type_idx, minlength=len(part.types))
    created = {t: int(c) for t, c in zip(part.types, counts, strict=True) if c}
    return WriteResult(created, dict.fromkeys(created, 0))


def _created(res: neo4j.Result, _rows: list) -> int:
    """Edges one statement created (fewer than its rows hold when an end was not found by id)."""
    return res.consume().counters.relationships_created
