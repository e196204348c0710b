"""The storage interface every backend implements, and the errors it raises.

Loaders hand typed rows to :meth:`GraphStore.write_batch`; algorithms pull small networkx
graphs with :meth:`GraphStore.neighbourhood`. Neither writes backend-specific Cypher.

Row shapes
----------
:class:`~eventkg.graphstore.rows.NodeRow` and :class:`~eventkg.graphstore.rows.EdgeRow`
(:mod:`eventkg.graphstore.rows`): plain dicts of ``id`` (nodes) or ``src`` and ``dst`` (edges),
``sources`` and the label's or type's declared properties.

Bulk tables: a :class:`Batch` may also carry pyarrow Tables (``node_tables[label]``,
``edge_tables[TYPE]``) with the same columns as the rows (``sources`` as ``list<string>``,
or a ``string`` of comma-joined names), for loaders that read millions of rows: the
embedded backend writes them without one Python object per row. Rows and tables of one
batch are one write; rows count as coming before the table's rows.

Upsert semantics (both backends): a node or edge is identified by (label, id) or
(type, src, dst); a second write merges properties (non-null new values win) and unions
``sources``; writing the same rows twice changes nothing.

networkx shape
--------------
``nx.MultiDiGraph``; node key = id, attributes ``label`` + properties; edge key = stored
type (``CAUSES``...), attributes ``type`` + properties.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import networkx as nx

from eventkg.graphstore.errors import (  # noqa: F401 - the interface's errors, importable from here as before
    IncompleteStoreError,
    MissingEndpointError,
    StoreError,
    WriteRefused,
)
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES, first_scheme_id
from eventkg.graphstore.rows import EdgeRow, NodeRow

if TYPE_CHECKING:  # pyarrow is imported lazily: plain CLI commands never need it
    import pyarrow as pa


#: rows per page of a streamed read (``iter_nodes``, ``iter_edges``) and ids per page of lookups
PAGE_ROWS = 50_000


@dataclass
class Batch:
    """Rows to write as one upsert: all of it lands, or none of it does.

    On Neo4j this holds for batches of up to ``neo4j.transactions.TX_ROWS`` rows and
    ``TX_BYTES`` estimated bytes; a bigger batch is written in several transactions
    (nodes first), and if one fails the earlier ones stay: writing the batch again
    completes it (see ``eventkg.graphstore.neo4j.store``)."""

    nodes: dict[str, list[NodeRow]] = field(default_factory=dict)
    edges: dict[str, list[EdgeRow]] = field(default_factory=dict)
    node_tables: dict[str, pa.Table] = field(default_factory=dict)
    edge_tables: dict[str, pa.Table] = field(default_factory=dict)
    #: every edge's endpoints are nodes the same ingest wrote before (the loader resolved them from
    #: its own node rows, as ASER's relations are): a store need not look them up
    ends_known: bool = False

    def add_node(self, label: str, row: NodeRow) -> None:
        self.nodes.setdefault(label, []).append(row)

    def add_edge(self, rel_type: str, row: EdgeRow) -> None:
        self.edges.setdefault(rel_type, []).append(row)

    def add_node_table(self, label: str, table: pa.Table) -> None:
        """Append an Arrow table of node rows (concatenated with any earlier one)."""
        _append_table(self.node_tables, label, table)

    def add_edge_table(self, rel_type: str, table: pa.Table) -> None:
        _append_table(self.edge_tables, rel_type, table)

    def __len__(self) -> int:
        tables = sum(t.num_rows for t in self.node_tables.values()) + sum(t.num_rows for t in self.edge_tables.values())
        return sum(map(len, self.nodes.values())) + sum(map(len, self.edges.values())) + tables


def _append_table(tables: dict[str, pa.Table], name: str, table: pa.Table) -> None:
    import pyarrow as pa

    old = tables.get(name)
    tables[name] = table if old is None else pa.concat_tables([old, table], promote_options="permissive")


@dataclass
class WriteResult:
    """What a write did: created and updated counts, per label / type."""

    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)

    def add(self, other: WriteResult) -> None:
        for mine, theirs in ((self.created, other.created), (self.updated, other.updated)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v


def validate_batch(batch: Batch) -> None:
    """Reject unknown labels/types/properties and rows without keys, before any write.

    Checks each distinct row shape once (rows of one batch nearly always share a shape),
    so validating a million rows costs a fraction of a second.
    """
    checks = [(label, rows, NODE_TYPES, ("id",)) for label, rows in batch.nodes.items()]
    checks += [(rtype, rows, REL_TYPES, ("src", "dst")) for rtype, rows in batch.edges.items()]
    for name, rows, table, keys in checks:
        if name not in table:
            kind = "node label" if table is NODE_TYPES else "relationship type"
            raise StoreError(f"unknown {kind} {name!r}")
        allowed = table[name].properties.keys() | {"sources", *keys}
        for shape in set(map(tuple, rows)):
            extra = set(shape) - allowed
            if extra:
                raise StoreError(f"{name} row has undeclared properties {sorted(extra)}")
            if not set(keys) <= set(shape):
                raise StoreError(f"{name} row without {'/'.join(keys)}: columns {list(shape)}")
        for key in keys:
            values = set(map(itemgetter(key), rows))
            if None in values or "" in values:
                raise StoreError(f"{name} row with an empty {key}")
    tables = [(label, t, NODE_TYPES, ("id",)) for label, t in batch.node_tables.items()]
    tables += [(rtype, t, REL_TYPES, ("src", "dst")) for rtype, t in batch.edge_tables.items()]
    for name, table, kinds, keys in tables:
        validate_table(name, table, kinds, keys)


def validate_table(name: str, table: pa.Table, kinds: Mapping[str, Any], keys: Sequence[str]) -> None:
    """The table-path twin of the row checks: known name and columns, keys present and non-empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if name not in kinds:
        kind = "node label" if kinds is NODE_TYPES else "relationship type"
        raise StoreError(f"unknown {kind} {name!r}")
    if not isinstance(table, pa.Table):
        raise StoreError(f"{name} table is a {type(table).__name__}, not a pyarrow Table")
    cols = table.column_names
    extra = set(cols) - (kinds[name].properties.keys() | {"sources", *keys})
    if extra:
        raise StoreError(f"{name} table has undeclared properties {sorted(extra)}")
    if len(set(cols)) != len(cols):
        raise StoreError(f"{name} table has repeated columns {cols}")
    for key in keys:
        if key not in cols:
            raise StoreError(f"{name} table without {'/'.join(keys)}: columns {cols}")
        col = table.column(key)
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            raise StoreError(f"{name} table column {key} is {col.type}, not string")
        if col.null_count or (table.num_rows and pc.any(pc.equal(col, "")).as_py()):
            raise StoreError(f"{name} row with an empty {key}")
    if "sources" in cols:
        stype = table.column("sources").type
        if not (pa.types.is_string(stype) or pa.types.is_large_string(stype)
                or (pa.types.is_list(stype) and pa.types.is_string(stype.value_type))):
            raise StoreError(f"{name} table column sources is {stype}, not list<string> or string")


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """A node/edge table as row dicts (``sources`` a list, null properties dropped)."""
    import pyarrow as pa

    rows = table.to_pylist()
    if "sources" in table.column_names and not pa.types.is_list(table.column("sources").type):
        for r in rows:
            s = r["sources"]
            r["sources"] = s.split(",") if s else []
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


def merge_rows(rows: Iterable[dict[str, Any]], key: Sequence[str]) -> dict[Any, dict[str, Any]]:
    """Collapse rows with the same key inside one batch (later non-null values win).

    The dict is keyed by ``row[key[0]]`` for a one-column key, else by the tuple of values.
    Rows are not copied unless two of them collide.
    """
    keyf = itemgetter(*key)
    rows = rows if isinstance(rows, list) else list(rows)
    merged: dict[Any, dict[str, Any]] = dict(zip(map(keyf, rows), rows, strict=True))
    if len(merged) == len(rows):  # the common case: no key repeats, nothing to merge
        return merged
    merged = {}
    for row in rows:
        k = keyf(row)
        old = merged.get(k)
        merged[k] = row if old is None else merge_props(old, row)
    return merged


def merge_props(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Properties of ``new`` override ``old`` where not None; ``sources`` are unioned."""
    out = dict(old)
    for k, v in new.items():
        if k == "sources":
            out["sources"] = sorted(set(old.get("sources") or []) | set(v or []))
        elif v is not None:
            out[k] = v
    return out


def neighbourhood_types(rel_types: Sequence[str] | None, direction: str) -> list[str]:
    """Check ``neighbourhood``'s arguments; the stored types to follow (default: all)."""
    if direction not in ("out", "in", "both"):
        raise ValueError("direction must be out, in or both")
    types = list(rel_types or REL_TYPES)
    for t in types:
        if t not in REL_TYPES:
            raise StoreError(f"unknown relationship type {t!r}")
    return types


class GraphStore(ABC):
    """One typed graph, whatever engine holds it: the interface both backends implement.

    Open one with :func:`~eventkg.graphstore.open.open_store`; a store is a context manager that
    closes itself. Every write goes in :class:`Batch` es (all or nothing), every read sees what was
    written before it.

    Attributes:
        url: Where the store is: a LadybugDB path or a ``neo4j://`` URL.
        on_bulk_write: Called with a short message while a bulk session writes what it held.
    """

    url: str
    #: Called with a short message while a bulk session writes what it held (for progress bars);
    #: a message starting ``note: `` is one to keep (e.g. a table written in several COPYs).
    on_bulk_write: Callable[[str], None] | None = None

    # -- unfinished ingests ----------------------------------------------------------------
    def begin_ingest(self, what: str) -> None:
        """Record, before its first write, that the ingest ``what`` (source and files) is writing:
        a crash keeps the mark, and readers are told the graph may be partial.

        Args:
            what: The ingest's name (source and files), as :meth:`unfinished_ingests` lists it.

        Raises:
            StoreError: The store's events carry ids of eventkg's first scheme (the same sources
                would make new nodes beside the old ones), or its record of ingest folders
                (:meth:`ingest_origins`) is damaged.
        """
        held = self.query("MATCH (e:Event) RETURN e.id AS id LIMIT 1")
        if held and first_scheme_id(str(held[0]["id"])):
            raise StoreError(
                f"{self.url}: its events have ids of an older eventkg (20 hex digits, now 12 characters), "
                "so this ingest would write its events twice: ingest into a new store")
        self.ingest_origins()  # a damaged record of folders is named now, before the graph is written
        marks = self.unfinished_ingests()
        if what not in marks:
            self._keep_marks([*marks, what])
        self._wrote = False

    def end_ingest(self, what: str, *, completed: bool) -> None:
        """Clear ``what``'s mark when it completed, or when it failed without changing the store.

        Args:
            what: The name given to :meth:`begin_ingest`.
            completed: The ingest wrote everything it meant to.
        """
        if completed or not self.changed_since_begin():
            marks = self.unfinished_ingests()
            if what in marks:
                self._keep_marks([m for m in marks if m != what])

    def ingest_running(self) -> str | None:
        """Which process is ingesting into this store now, if one is (``pid N``), else None: what tells
        a running ingest's mark from an unfinished one's. A backend that cannot tell says None."""
        return None

    def changed_since_begin(self) -> bool:
        """True when the store was written since the last :meth:`begin_ingest` (and not undone)."""
        return self._wrote

    @abstractmethod
    def unfinished_ingests(self) -> list[str]:
        """The ingests that began writing this store and did not complete (oldest first)."""

    @abstractmethod
    def _keep_marks(self, marks: list[str]) -> None:
        """Store the list of unfinished ingests durably (before the caller writes anything)."""

    _wrote = False  # the store changed since the last begin_ingest (each backend sets it)

    # -- where each source was ingested from -------------------------------------------------
    # Kept outside the data model, as the marks are: the graph's content never depends on the
    # folder it was read from (the same files from two folders give the same store).
    def ingest_origin(self, source: str) -> str | None:
        """The folder ``source`` was last ingested from.

        Args:
            source: A loader's name (``ev2``, ``clomo``...).

        Returns:
            The absolute folder as the completed ingest recorded it (symbolic links kept as
            given), or None when no completed ingest of ``source`` recorded one.
        """
        return self.ingest_origins().get(source)

    def record_ingest_origin(self, source: str, folder: str) -> None:
        """Record, when an ingest of ``source`` completes, the folder it read (replacing the last one).

        Args:
            source: A loader's name.
            folder: The absolute folder its files were read from.
        """
        origins = self.ingest_origins()
        if origins.get(source) != folder:
            self._keep_origins({**origins, source: folder})

    @abstractmethod
    def ingest_origins(self) -> dict[str, str]:
        """Each source's folder, as :meth:`record_ingest_origin` last recorded it (empty when none)."""

    @abstractmethod
    def _keep_origins(self, origins: dict[str, str]) -> None:
        """Store the source -> folder record durably, replacing the previous one."""

    # -- writing ---------------------------------------------------------------------------
    @abstractmethod
    def write_batch(self, batch: Batch) -> WriteResult:
        """Upsert the batch's nodes, then its edges, in one transaction (Neo4j: see :class:`Batch`).

        Args:
            batch: The rows; a node or edge whose key is stored already is merged into it.

        Returns:
            The rows created and updated, per label and type.

        Raises:
            WriteRefused: The store was opened read-only.
            MissingEndpointError: An edge names a node neither the batch nor the store holds.
            StoreError: A row is not of the schema, or the engine failed (nothing of the batch is written).
        """

    @contextmanager
    def bulk_load(self) -> Iterator[GraphStore]:
        """A bulk-load session: the store may hold the new rows of the batches written inside
        it and write them when it ends, table by table (an embedded-store speed-up; see
        ``eventkg.graphstore.ladybug.spool``). Batches are still validated and checked when handed over.
        Rows are written at the end even when the block raises, unless the store itself
        failed. The default writes every batch at once."""
        yield self

    @contextmanager
    def read_only_phase(self) -> Iterator[GraphStore]:
        """The store read-only for the block, writable again after it: for a long read in a process
        that writes after it (``make_questions`` with ``QuestionSpec(save=True)``). An embedded store reopens its file
        read-only, so its whole-graph reads go through openings that hand their pages back when done,
        as a store opened read-only does; a write inside is refused. The default changes nothing."""
        yield self

    def upsert_nodes(self, label: str, rows: Iterable[NodeRow]) -> WriteResult:
        return self.write_batch(Batch(nodes={label: list(rows)}))

    def upsert_edges(self, rel_type: str, rows: Iterable[EdgeRow]) -> WriteResult:
        return self.write_batch(Batch(edges={rel_type: list(rows)}))

    @abstractmethod
    def clear(self) -> None:
        """Delete every node and edge (the schema stays)."""

    # -- reading ---------------------------------------------------------------------------
    @abstractmethod
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        """Run Cypher (in a read-only transaction unless ``write``).

        Args:
            cypher: The query.
            params: Its ``$name`` parameters.
            write: Allow the query to change the graph.

        Returns:
            One dict per row keyed by the RETURN names; values are plain Python (numbers, strings,
            lists, dicts; a node or relationship becomes its properties).

        Raises:
            WriteRefused: The query writes and ``write`` is False (or the store is read-only).
            StoreError: The engine refused the query (one line: its message).
        """

    @abstractmethod
    def counts(self) -> dict[str, dict[str, int]]:
        """Rows per node label and relationship type.

        Returns:
            ``{"nodes": {label: n}, "edges": {TYPE: n}}`` with every declared label and type.
        """

    @abstractmethod
    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, NodeRow]:
        """The stored nodes among ``ids``.

        Args:
            label: The node label.
            ids: Node ids; those not stored are left out.

        Returns:
            Their properties (with ``id`` and ``sources``), by id.
        """

    @abstractmethod
    def iter_nodes(self, label: str, page_size: int = PAGE_ROWS) -> Iterator[NodeRow]:
        """Every node of a label, read ``page_size`` at a time.

        Args:
            label: The node label.
            page_size: Rows read per query.

        Yields:
            Each node's properties (with ``id`` and ``sources``).
        """

    @abstractmethod
    def iter_edges(self, rel_type: str, page_size: int = PAGE_ROWS) -> Iterator[EdgeRow]:
        """Every edge of a type, read ``page_size`` at a time.

        Args:
            rel_type: The relationship type.
            page_size: Rows read per query.

        Yields:
            ``{"src", "dst", "sources", props...}`` per edge.
        """

    @abstractmethod
    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        """The k-hop neighbourhood of the seed ids.

        Args:
            seeds: Node ids to start from.
            hops: Steps to take from a seed.
            rel_types: Relationship types to follow (default: all).
            direction: ``out``, ``in`` or ``both``.
            limit: At most this many nodes fetched per hop (None: all).
            induced: Include every edge of those types between the nodes reached; when False,
                only the edges a walk of at most ``hops`` steps from a seed can traverse (at least
                one endpoint nearer than ``hops``), which spares a pass over the outermost ring
                (retrieval uses this).

        Returns:
            The nodes (with their properties and ``label``) and edges (keyed by type) reached.
        """

    def fetch_graph(self, rel_types: Sequence[str]) -> nx.MultiDiGraph:
        """Every edge of the given types with its endpoints, for whole-graph work.

        Args:
            rel_types: The relationship types to read.

        Returns:
            A networkx multigraph: nodes with their properties and ``label``, edges keyed by type.
        """
        g = nx.MultiDiGraph()
        for rtype in rel_types:
            for e in self.iter_edges(rtype):
                g.add_edge(e.pop("src"), e.pop("dst"), key=rtype, type=rtype, **e)
        labels = {REL_TYPES[t].source for t in rel_types} | {REL_TYPES[t].target for t in rel_types}
        ids = list(g.nodes)
        for label in labels:
            for i in range(0, len(ids), PAGE_ROWS):
                for nid, props in self.get_nodes(label, ids[i : i + PAGE_ROWS]).items():
                    g.nodes[nid].update(props, label=label)
        return g

    # -- lifecycle -------------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None:
        """Write what a bulk session holds, then let go of the database (a second call does nothing)."""

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
