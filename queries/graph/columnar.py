"""Columnar reads of a store for whole-graph query work: Arrow batches, not one dict per row.

Building a vector index over a million events or an adjacency over millions of edges must
not stream one Python tuple per row (``GraphStore.iter_nodes`` / ``iter_edges``). This
module reads the columns it needs as ``pyarrow`` tables:

* LadybugDB: one read-only Cypher query whose result is taken with ``get_as_arrow``
  (the engine hands over whole column chunks, as the store itself does for its keyed
  lookups in ``graphstore/ladybug/store.py``), or, for a whole-graph read into a folder, the
  query's rows written by the engine to a CSV file (``COPY ... TO``, :class:`Export`) and read
  back with ``pyarrow.csv``, or, where every row has one width (the nodes' keys and ids,
  :func:`fixed_rows`), straight into numpy arrays;
* Neo4j: keyset pages ordered by ``id`` (nodes) or one streamed result pulled
  ``page_size`` records at a time (edges), each page turned into one Arrow batch;
* any other :class:`~eventkg.graphstore.base.GraphStore`: its ``iter_nodes`` / ``iter_edges``,
  batched.

Only the graph store's public query surface is used, except on LadybugDB, where the
store's connection is asked for Arrow directly inside a read-only transaction (the
store's ``query`` returns Python rows).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.model import REL_TYPES

#: rows per page of a keyed (``after``) read through the store's Cypher
PAGE_ROWS = 200_000
#: node offsets per paged read, at least (offset_pages; node_page): the engine builds each
#: page's result in its buffer pool, so a page must fit a bounded pool (a page of 1M texts did
#: not fit 256 MB)
OFFSET_PAGE = 250_000
EDGE_PAGE = 1_000_000  # source node offsets per paged edge read (16 bytes a row: a page of ~2M edges fits)
#: buffer-pool bytes allowed per node row of a whole-table read (node_page): the engine scans the
#: whole column for every page (its offset filter is not pushed into the scan), so a page is as
#: big as the pool allows: 2M rows at the default 1 GB pool, 8 times fewer scans than OFFSET_PAGE
NODE_ROW_BYTES = 512

#: bytes of an exported file read back at a time (exported): the batch held while it is used
EXPORT_BLOCK = 16 << 20
#: added to a node offset in an exported file (export_nodes): every offset below 2**31 then has
#: ``KEY_DIGITS`` digits, so that rows of ids of one width have one width (fixed_rows)
KEY_BASE = 10**9
KEY_DIGITS = 10

#: numeric edge property that ranks a neighbour (how often ASER saw the pair), per type
WEIGHT_PROPERTY = {name: ("weight" if "weight" in rel.properties else "count" if "count" in rel.properties else None)
                   for name, rel in REL_TYPES.items()}


def _ladybug_conn(store: GraphStore) -> Any | None:
    """The LadybugDB connection of an embedded store, else None."""
    from eventkg.graphstore.ladybug.store import LadybugStore

    return store.connection if isinstance(store, LadybugStore) else None


def _ladybug_arrow(conn: Any, cypher: str, params: dict[str, Any] | None = None, chunk: int = PAGE_ROWS) -> pa.Table:
    conn.execute("BEGIN TRANSACTION READ ONLY")
    try:
        return conn.execute(cypher, dict(params or {})).get_as_arrow(chunk)
    except RuntimeError as exc:
        raise StoreError(f"columnar read failed: {str(exc).strip().splitlines()[0]}") from exc
    finally:
        try:
            conn.execute("ROLLBACK")
        except RuntimeError:
            pass  # a failed statement ended the transaction already


def _is_neo4j(store: GraphStore) -> bool:
    from eventkg.graphstore.open import NEO4J_SCHEMES

    return str(getattr(store, "url", "")).startswith(NEO4J_SCHEMES)


def event_texts(store: GraphStore, level: str | None = None, page_size: int = PAGE_ROWS) -> pa.Table:
    """``(id, text)`` of the Event nodes of ``level`` (None: all) with a non-empty text.

    Row order is the store's; callers that need a stable order sort by ``id``.
    """
    where = "e.text IS NOT NULL AND e.text <> ''" + (" AND e.level = $level" if level else "")
    params = {"level": level} if level else {}
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    conn = _ladybug_conn(store)
    if conn is not None:
        t = _ladybug_arrow(conn, f"MATCH (e:Event) WHERE {where} RETURN e.id AS id, e.text AS text", params)
        return t.rename_columns(["id", "text"]).cast(schema)
    if _is_neo4j(store):
        batches, after = [], None
        while True:
            page = store.query(
                f"MATCH (e:Event) WHERE {where} AND ($after IS NULL OR e.id > $after) "
                "RETURN e.id AS id, e.text AS text ORDER BY e.id LIMIT $n",
                {**params, "after": after, "n": page_size},
            )
            if page:
                batches.append(pa.RecordBatch.from_pylist(page, schema=schema))
            if len(page) < page_size:
                return pa.Table.from_batches(batches, schema=schema)
            after = page[-1]["id"]
    ids: list[str] = []
    texts: list[str] = []
    for row in store.iter_nodes("Event", page_size):
        if row.get("text") and (level is None or row.get("level") == level):
            ids.append(row["id"])
            texts.append(row["text"])
    return pa.table({"id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string())})


def event_nodes(store: GraphStore, page_size: int = PAGE_ROWS, *, with_text: bool = True) -> pa.Table:
    """``(id, text, level)`` of every Event node (text and level null where unset), store order;
    ``with_text=False``: ``(id, level)``."""
    cols = ("id", "text", "level") if with_text else ("id", "level")
    schema = pa.schema([(c, pa.string()) for c in cols])
    ret = ", ".join(f"e.{c} AS {c}" for c in cols)
    conn = _ladybug_conn(store)
    if conn is not None:
        return _ladybug_arrow(conn, f"MATCH (e:Event) RETURN {ret}").rename_columns(list(cols)).cast(schema)
    if _is_neo4j(store):
        batches, after = [], None
        while True:
            page = store.query(
                f"MATCH (e:Event) WHERE $after IS NULL OR e.id > $after RETURN {ret} ORDER BY e.id LIMIT $n",
                {"after": after, "n": page_size},
            )
            if page:
                batches.append(pa.RecordBatch.from_pylist(page, schema=schema))
            if len(page) < page_size:
                return pa.Table.from_batches(batches, schema=schema)
            after = page[-1]["id"]
    batches = _row_batches(store.iter_nodes("Event", page_size), cols, schema, page_size)
    return pa.Table.from_batches(list(batches), schema=schema)


def node_page() -> int:
    """Node offsets per paged whole-table read of an embedded store: ``OFFSET_PAGE`` or more, as the
    engine's buffer pool allows (``NODE_ROW_BYTES`` a row)."""
    from eventkg.graphstore.ladybug.engine import buffer_pool_bytes

    return max(OFFSET_PAGE, buffer_pool_bytes() // NODE_ROW_BYTES)


@dataclass
class GraphColumns:
    """The Event nodes and their edges as numpy arrays, in the store's own order.

    ``keys`` name the nodes within this one read (any distinct non-negative ints), ``ids`` are their ids
    (a fixed-width byte-string array, :func:`eventkg.queries.graph.event_ids.as_bytes`), ``instance``
    whether each is an instance event; ``edges[type]`` holds ``(src keys, dst keys)``, or ``pending``
    gives them when they are first needed (read meanwhile in another thread). ``rank`` (set by
    :meth:`~eventkg.queries.graph.csr.EventCSR.from_columns`): the position of each key, -1 for none.
    """

    keys: np.ndarray
    ids: np.ndarray
    instance: np.ndarray
    edges: dict[str, tuple[np.ndarray, np.ndarray]]
    rank: np.ndarray | None = None
    pending: Callable[[], dict[str, tuple[np.ndarray, np.ndarray]]] | None = None

    def take_edges(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``edges``, with the pending ones (waited for) added."""
        if self.pending is not None:
            self.edges.update(self.pending())
            self.pending = None
        return self.edges


def event_graph_arrays(store: GraphStore, rel_types: Sequence[str], page: int | None = None,
                       counts: dict[str, int] | None = None) -> GraphColumns:
    """The Event nodes (key, id, level) and, per type, edges as node keys; no texts.

    On LadybugDB a key is the engine's node offset (``offset(ID(n))``: no id strings leave the
    engine for the edges) and nodes are read ``page`` (default :func:`node_page`) node offsets at
    a time, edges ``EDGE_PAGE``, so neither the engine's result nor its Arrow copy ever holds a whole table (the 10M-event
    table at once held ~1 GB of results beside the arrays): :func:`event_node_columns` then
    :func:`event_edge_columns` (``counts``: edges per type where known). Elsewhere a key is the
    node's row in the node read, the edges' id strings looked up with ``pyarrow.compute.index_in``.
    Edges whose ends are not Event nodes are dropped.
    """
    if _ladybug_conn(store) is None:
        return _graph_arrays_by_id(store, rel_types)
    top = max_event_offset(store)
    out = event_node_columns(store, top, page)
    out.edges = event_edge_columns(store, rel_types, top, counts)
    return out


def max_event_offset(store: GraphStore) -> int | None:
    """The highest Event node offset of an embedded store (None: no Event)."""
    conn = _ladybug_conn(store)
    return _ladybug_arrow(conn, "MATCH (e:Event) RETURN max(offset(ID(e))) AS m").column(0)[0].as_py()


def offset_kind(top: int | None) -> Any:
    """The dtype of node offsets up to ``top``: as narrow as they fit."""
    return np.int32 if top is None or top < 2**31 - 1 else np.int64


NODE_RETURNS = "RETURN offset(ID(e)) AS k, e.id AS id, e.level = 'instance' AS inst"


def event_node_columns(store: GraphStore, top: int | None, page: int | None = None) -> GraphColumns:
    """An embedded store's Event nodes (key, id, level), ``page`` node offsets at a time, no edges."""
    conn = _ladybug_conn(store)
    page = page or node_page()
    cypher = f"MATCH (e:Event) WHERE offset(ID(e)) >= $lo AND offset(ID(e)) < $hi {NODE_RETURNS}"
    pages = (_ladybug_arrow(conn, cypher, {"lo": lo, "hi": lo + page}, page)
             for lo in range(0, (top + 1) if top is not None else 0, page))
    return node_columns_of(pages, top)


def export_nodes(store: GraphStore, folder: Path) -> tuple[Export, Export]:
    """An embedded store's Event nodes written to files in ``folder`` (:class:`Export`): the key
    (plus ``KEY_BASE``) and id of every node, and the key of every instance event (few or none:
    a level column beside the ids would widen every row), read by :func:`exported_node_columns`."""
    return (Export(store, f"MATCH (e:Event) RETURN offset(ID(e)) + {KEY_BASE} AS k, e.id AS id",
                   folder / "nodes.csv", {"k": pa.int64(), "id": pa.string()}),
            Export(store, "MATCH (e:Event) WHERE e.level = 'instance' RETURN offset(ID(e)) AS k",
                   folder / "instances.csv", {"k": pa.int64()}))


def exported_node_columns(exports: tuple[Export, Export], top: int | None) -> GraphColumns:
    """The Event nodes of :func:`export_nodes`, no edges: rows of one width (the store's ids)
    read as a numpy array (:func:`fixed_rows`), any others parsed as CSV."""
    from eventkg.queries.graph.event_ids import as_bytes

    nodes, instances = exports
    fixed = fixed_rows(nodes.path)
    if fixed is not None:
        nodes.path.unlink(missing_ok=True)
        keys, ids = [fixed[0]], [fixed[1]]
    else:
        keys, ids = [], []
        for b in nodes.batches():
            keys.append(_np(b.column(0)) - KEY_BASE)
            ids.append(as_bytes(b.column(1)))
    out = _node_columns(keys, ids, [], top)
    flag = np.zeros((top + 1) if top is not None else 0, dtype=bool)
    for b in instances.batches():
        flag[_np(b.column(0))] = True
    out.instance = flag[out.keys]
    return out


def fixed_rows(path: Path, chunk: int = 1 << 20) -> tuple[np.ndarray, np.ndarray] | None:
    """``(key, id)`` of an :func:`export_nodes` file whose rows all have one width and no quote
    (``KEY_DIGITS`` digits, a comma, an id, a line break: the store's ids are of one width),
    read straight into numpy arrays, a chunk of rows at a time; None for any other file."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        width = fh.read(1 << 16).find(b"\n") + 1
        if width < KEY_DIGITS + 3 or size % width:
            return None
        n = size // width
        fh.seek(0)
        keys, ids = np.empty(n, np.int64), np.empty(n, f"S{width - KEY_DIGITS - 2}")
        id_bytes = ids.view(np.uint8).reshape(n, -1)
        buf = np.empty(min(n, chunk) * width, np.uint8)
        for a in range(0, n, chunk):
            rows = buf[:min(chunk, n - a) * width]
            if fh.readinto(rows) != len(rows):
                return None
            rows = rows.reshape(-1, width)
            digits = rows[:, :KEY_DIGITS] - np.uint8(ord("0"))  # any other byte wraps past 9
            body = rows[:, KEY_DIGITS + 1:-1]
            if (digits.max() > 9 or (rows[:, KEY_DIGITS] != ord(",")).any() or (rows[:, -1] != ord("\n")).any()
                    or (body == ord('"')).any() or (body == ord("\r")).any()):
                return None
            keys[a:a + len(rows)] = _decimal(digits)
            id_bytes[a:a + len(rows)] = body
    keys -= KEY_BASE
    return keys, ids


def _decimal(digits: np.ndarray) -> np.ndarray:
    """The int64 value of each row of decimal digits (Horner's rule a column at a time: numpy's
    integer matrix product has no BLAS and took most of the parse)."""
    out = digits[:, 0].astype(np.int64)
    for j in range(1, digits.shape[1]):
        out *= 10
        out += digits[:, j]
    return out


def node_columns_of(tables: Iterable[Any], top: int | None) -> GraphColumns:
    """The Event nodes from tables (or batches) of ``(key, id, instance)``, no edges."""
    from eventkg.queries.graph.event_ids import as_bytes

    keys, ids, inst = [], [], []
    for t in tables:
        keys.append(_np(t.column(0)))
        ids.append(as_bytes(t.column(1)))
        inst.append(t.column(2).fill_null(False).to_numpy(zero_copy_only=False).astype(bool))
    return _node_columns(keys, ids, inst, top)


def _node_columns(keys: list[np.ndarray], ids: list[np.ndarray], inst: list[np.ndarray],
                  top: int | None) -> GraphColumns:
    width = max((a.dtype.itemsize for a in ids), default=1)
    kind = offset_kind(top)
    return GraphColumns(_cat(keys, kind), np.concatenate([a.astype(f"S{width}", copy=False) for a in ids]) if ids
                        else np.zeros(0, "S1"), _cat(inst, bool), {})


def _edge_match(t: str) -> str:
    rel = REL_TYPES[t]
    return f"MATCH (a:{rel.source})-[e:{t}]->(b:{rel.target}) "


def _edge_count(store: GraphStore, t: str, counts: dict[str, int] | None) -> int:
    return counts[t] if counts is not None and t in counts else edge_counts(store, [t])[t]


def event_edge_columns(store: GraphStore, rel_types: Sequence[str], top: int | None,
                       counts: dict[str, int] | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """An embedded store's edges of ``rel_types`` as node offsets ``(src, dst)`` per type, ``EDGE_PAGE``
    source offsets at a time; a type counted empty (``counts``, else one ``count(*)``) is not scanned."""
    conn = _ladybug_conn(store)
    kind = offset_kind(top)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for t in rel_types:
        src, dst = [], []
        if not _edge_count(store, t, counts):  # an empty table's pages would each cost a scan
            out[t] = (np.zeros(0, kind), np.zeros(0, kind))
            continue
        edge_ranges = [(lo, lo + EDGE_PAGE) for lo in range(0, (top + 1) if top is not None else 0, EDGE_PAGE)]
        for lo, hi in edge_ranges if REL_TYPES[t].source == "Event" else [(0, None)]:
            where = "WHERE offset(ID(a)) >= $lo AND offset(ID(a)) < $hi " if hi is not None else ""
            params = {"lo": lo, "hi": hi} if hi else {}
            e = _ladybug_arrow(conn, f"{_edge_match(t)}{where}RETURN offset(ID(a)) AS src, offset(ID(b)) AS dst",
                               params, 2 * EDGE_PAGE)
            src.append(_np(e.column(0)).astype(kind))
            dst.append(_np(e.column(1)).astype(kind))
        out[t] = (_cat(src, kind), _cat(dst, kind))
    return out


def export_edges(store: GraphStore, rel_types: Sequence[str], top: int | None, folder: Path,
                 counts: dict[str, int] | None = None) -> dict[str, Export | None]:
    """An embedded store's edges of ``rel_types``, a file per type in ``folder`` (:class:`Export`):
    both ends in one int64 (``src * 2**bits + dst``, ``bits`` those of ``top``: as few digits as
    the offsets allow, to write and to parse); None for a type counted empty."""
    if offset_kind(top) is not np.int32:
        raise StoreError("export_edges: node offsets beyond 2**31")
    bits = edge_key_bits(top)
    return {t: Export(store, f"{_edge_match(t)}RETURN offset(ID(a)) * {1 << bits} + offset(ID(b)) AS k",
                      folder / f"{t}.csv", {"k": pa.int64()}) if _edge_count(store, t, counts) else None
            for t in rel_types}


def edge_key_bits(top: int | None) -> int:
    """Bits of a node offset up to ``top`` (an exported edge's key: :func:`export_edges`)."""
    return max(1, int(top or 0).bit_length())


def edge_columns_of(exports: dict[str, Export | None], top: int | None,
                    use_threads: bool = True) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The edges of :func:`export_edges` as node offsets ``(src, dst)`` per type (``use_threads``:
    :meth:`Export.batches`)."""
    kind, bits = offset_kind(top), edge_key_bits(top)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for t, x in exports.items():
        src, dst = [], []
        for b in x.batches(use_threads) if x is not None else ():
            k = _np(b.column(0))
            src.append((k >> bits).astype(kind))
            dst.append((k & ((1 << bits) - 1)).astype(kind))
        out[t] = (_cat(src, kind), _cat(dst, kind))
    return out


def _graph_arrays_by_id(store: GraphStore, rel_types: Sequence[str]) -> GraphColumns:
    """:func:`event_graph_arrays` through the store's id strings (Neo4j, other stores)."""
    from eventkg.queries.graph.event_ids import as_bytes

    table = event_nodes(store, with_text=False)
    ids = table.column("id").combine_chunks()
    inst = pc.equal(table.column("level"), "instance").fill_null(False).combine_chunks()
    out = GraphColumns(np.arange(len(ids), dtype=np.int64), as_bytes(ids),
                       inst.to_numpy(zero_copy_only=False).astype(bool), {})
    for t in rel_types:
        e = edges(store, t)
        src = pc.index_in(e.column("src"), value_set=ids)
        dst = pc.index_in(e.column("dst"), value_set=ids)
        both = pa.table({"src": src, "dst": dst}).filter(pc.and_(pc.is_valid(src), pc.is_valid(dst)))
        out.edges[t] = (_np(both.column("src")), _np(both.column("dst")))
    return out


def _np(col: Any) -> np.ndarray:
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return col.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


class Export:
    """The rows of an embedded store's ``cypher``, written by the engine to the CSV file ``path``
    at once (``COPY ... TO``: one scan on the engine's threads, outside the GIL, its result never
    held; the opening may be closed before they are read) and read back by :meth:`batches`.
    Quoting, empty strings and nulls come back as they were stored."""

    def __init__(self, store: GraphStore, cypher: str, path: Path, columns: dict[str, pa.DataType],
                 threads: int | None = None) -> None:
        conn = _ladybug_conn(store)
        if conn is None:
            raise StoreError("Export reads an embedded (LadybugDB) store")
        from eventkg.graphstore.ladybug.engine import path_literal

        self.path, self.columns = path, columns
        try:
            if threads:  # the connection's engine threads from now on (an opening of its own)
                conn.execute(f"CALL threads={int(threads)}")
            conn.execute(f"COPY ({cypher}) TO {path_literal(path)} (header=false)")
        except RuntimeError as exc:
            path.unlink(missing_ok=True)
            raise StoreError(f"export failed: {str(exc).strip().splitlines()[0]}") from exc

    def batches(self, use_threads: bool = True) -> Iterator[pa.RecordBatch]:
        """The rows, ``EXPORT_BLOCK`` bytes of the file at a time (the file is removed once read);
        ``use_threads=False``: parsed in this thread only."""
        try:
            if not self.path.stat().st_size:  # no rows (the reader wants at least one)
                return
            yield from pa_csv.open_csv(
                self.path, read_options=pa_csv.ReadOptions(column_names=list(self.columns), block_size=EXPORT_BLOCK,
                                                           use_threads=use_threads),
                parse_options=pa_csv.ParseOptions(newlines_in_values=self._quoted()),
                convert_options=pa_csv.ConvertOptions(column_types=self.columns, strings_can_be_null=True,
                                                      quoted_strings_can_be_null=False, null_values=[""]),
                memory_pool=pa.system_memory_pool())  # freed blocks go back to the system, not to a cache
        finally:
            self.path.unlink(missing_ok=True)
            pa.default_memory_pool().release_unused()  # what the batches' conversions cached


    def _quoted(self) -> bool:
        """Whether a value may hold a line break: only a quoted one can, and a file without a
        quote has none (parsing with line breaks in values costs more)."""
        if not any(t == pa.string() for t in self.columns.values()) or not self.path.stat().st_size:
            return False
        with open(self.path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(b'"') >= 0


def export_texts(store: GraphStore, folder: Path, threads: int | None = None) -> Export:
    """``(node offset, text)`` of every Event node of an embedded store, written to a file in ``folder``
    (``threads``: :class:`Export`)."""
    return Export(store, "MATCH (e:Event) RETURN offset(ID(e)) AS k, e.text AS text", folder / "texts.csv",
                  {"k": pa.int64(), "text": pa.string()}, threads)


def text_pages_of(export: Export, use_threads: bool = True) -> Iterator[tuple[np.ndarray, pa.Array]]:
    """The ``(node offsets, texts)`` of :func:`export_texts`, a batch at a time."""
    for b in export.batches(use_threads):
        yield _np(b.column(0)), b.column(1)


def offset_pages(store: GraphStore, cypher: str, var: str, page: int = OFFSET_PAGE) -> Iterator[pa.Table]:
    """An embedded store's ``cypher`` (with ``{where}`` where the offset filter goes, on the Event
    node bound to ``var``) run ``page`` Event offsets at a time, each page one Arrow table."""
    conn = _ladybug_conn(store)
    if conn is None:
        raise StoreError("offset_pages reads an embedded (LadybugDB) store")
    top = _ladybug_arrow(conn, "MATCH (e:Event) RETURN max(offset(ID(e))) AS m").column(0)[0].as_py()
    where = f"WHERE offset(ID({var})) >= $lo AND offset(ID({var})) < $hi"
    for lo in range(0, (top + 1) if top is not None else 0, page):
        yield _ladybug_arrow(conn, cypher.format(where=where), {"lo": lo, "hi": lo + page})


def texts_by_id(store: GraphStore, ids: Sequence[str]) -> dict[str, str | None]:
    """``id -> text`` of the Event nodes among ``ids`` (keyed lookups; absent ids left out)."""
    if not ids:
        return {}
    conn = _ladybug_conn(store)
    if conn is not None:
        t = _ladybug_arrow(conn, "UNWIND $ids AS i MATCH (e:Event {id: i}) RETURN e.id AS id, e.text AS text",
                           {"ids": list(ids)})
        return dict(zip(t.column(0).to_pylist(), t.column(1).to_pylist(), strict=True))
    return {i: n.get("text") for i, n in store.get_nodes("Event", list(ids)).items()}


def event_texts_all(store: GraphStore) -> dict[str, str | None]:
    """``id -> text`` of every Event node (one read of the whole column: small graphs and tools)."""
    table = event_nodes(store)
    return dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))


def event_frequencies(store: GraphStore) -> pa.Table:
    """``(id, frequency)`` of every Event node (frequency null where unknown)."""
    conn = _ladybug_conn(store)
    if conn is not None:
        t = _ladybug_arrow(conn, "MATCH (e:Event) RETURN e.id AS id, e.frequency AS frequency")
        return t.rename_columns(["id", "frequency"]).cast(pa.schema([("id", pa.string()), ("frequency", pa.float64())]))
    rows = store.query("MATCH (e:Event) RETURN e.id AS id, e.frequency AS frequency") if _is_neo4j(store) else [
        {"id": r["id"], "frequency": r.get("frequency")} for r in store.iter_nodes("Event")
    ]
    return pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.string()), ("frequency", pa.float64())]))


def edges(store: GraphStore, rel_type: str, page_size: int = PAGE_ROWS) -> pa.Table:
    """``(src, dst, weight)`` of every edge of ``rel_type`` (weight = its count/weight, or null)."""
    rel = REL_TYPES[rel_type]
    prop = WEIGHT_PROPERTY[rel_type]
    weight = f"e.{prop}" if prop else "CAST(NULL AS DOUBLE)"
    schema = pa.schema([("src", pa.string()), ("dst", pa.string()), ("weight", pa.float64())])
    cypher = f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) RETURN a.id AS src, b.id AS dst, {weight} AS weight"
    conn = _ladybug_conn(store)
    if conn is not None:
        return _ladybug_arrow(conn, cypher).rename_columns(["src", "dst", "weight"]).cast(schema)
    batches = _row_batches(store.iter_edges(rel_type, page_size), ("src", "dst", prop), schema, page_size)
    return pa.Table.from_batches(list(batches), schema=schema)


def _row_batches(rows: Iterator[dict[str, Any]], cols: Sequence[str | None], schema: pa.Schema,
                 size: int) -> Iterator[pa.RecordBatch]:
    cur: list[list[Any]] = [[] for _ in cols]
    for row in rows:
        for i, c in enumerate(cols):
            cur[i].append(row.get(c) if c else None)
        if len(cur[0]) >= size:
            yield pa.RecordBatch.from_arrays([pa.array(v, f.type) for v, f in zip(cur, schema, strict=True)], schema=schema)
            cur = [[] for _ in cols]
    if cur[0]:
        yield pa.RecordBatch.from_arrays([pa.array(v, f.type) for v, f in zip(cur, schema, strict=True)], schema=schema)


def edge_counts(store: GraphStore, rel_types: Sequence[str]) -> dict[str, int]:
    """Edges per type (one ``count(*)`` each)."""
    out = {}
    for t in rel_types:
        rel = REL_TYPES[t]
        out[t] = int(store.query(f"MATCH (:{rel.source})-[e:{t}]->(:{rel.target}) RETURN count(*) AS n")[0]["n"])
    return out
