"""What every exporter reads: a store or a networkx graph as typed node and edge rows.

The exporters (:mod:`eventkg.queries.export.rdf`, :mod:`eventkg.queries.export.graphml`) take
either a :class:`~eventkg.graphstore.base.GraphStore` (the whole store, streamed label by
label and type by type) or an ``nx.MultiDiGraph`` in the store's networkx shape (node
attribute ``label``, edge key = stored type), e.g. :func:`eventkg.queries.export.select.select_subgraph`.
Rows come out as ``(label, row)`` / ``(TYPE, row)`` with ``row`` holding ``id`` (nodes) or
``src``/``dst`` (edges), ``sources`` as a list, and each declared property cast to its
declared type (:data:`eventkg.graphstore.model.NODE_TYPES`, ``REL_TYPES``); absent (None)
properties are left out. The schema decides the types, so a file's columns do not depend on
which backend (Neo4j may hand back an int for a DOUBLE) or which row came first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import IO, Any, TypeVar

import networkx as nx

from eventkg.graphstore.atomic import atomic_file, check_output_file, ensure_free
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import DOUBLE, INT64, NODE_TYPES, REL_TYPES, STRING_LIST
from eventkg.queries.errors import ExportError

Source = GraphStore | nx.MultiDiGraph
Row = dict[str, Any]
T = TypeVar("T")

_CASTS = {DOUBLE: float, INT64: int, STRING_LIST: lambda v: [str(x) for x in v]}


def check_suffix(path: Path, allowed: Mapping[str, str], command: str) -> str:
    """The format name for ``path``'s suffix, or an ExportError listing the suffixes allowed; a path
    that cannot be written (a folder, a missing folder) is refused here too, before the work."""
    fmt = allowed.get(path.suffix.lower())
    if fmt is None:
        listed = ", ".join(f"{s} ({name})" for s, name in allowed.items())
        raise ExportError(f"{command}: {path.name!r} has suffix {path.suffix or '(none)'!r}; expected {listed}")
    check_output_file(path, command)
    return fmt


def empty_counts() -> dict[str, dict[str, int]]:
    """``{"nodes": {label: 0}, "edges": {TYPE: 0}}`` in the shape of ``GraphStore.counts()``."""
    return {"nodes": dict.fromkeys(NODE_TYPES, 0), "edges": dict.fromkeys(REL_TYPES, 0)}


def typed(row: Mapping[str, Any], declared: Mapping[str, str], where: str) -> Row:
    """``row`` with None dropped, ``sources`` a list of str and each property cast to its declared type."""
    out: Row = {}
    for key, value in row.items():
        if value is None:
            continue
        if key in ("id", "src", "dst"):
            out[key] = str(value)
        elif key == "sources":
            out[key] = sorted({str(s) for s in value})
        elif key in declared:
            out[key] = _CASTS.get(declared[key], str)(value)
        else:
            raise ExportError(f"{where}: property {key!r} is not declared for it in eventkg's model")
    return out


def node_rows(source: Source) -> Iterator[tuple[str, Row]]:
    """Every node as ``(label, typed row)``: a store label by label, a graph in node order."""
    if isinstance(source, GraphStore):
        for label, kind in NODE_TYPES.items():
            for row in source.iter_nodes(label):
                yield label, typed(row, kind.properties, f"{label} {row.get('id')}")
        return
    for nid, attrs in source.nodes(data=True):
        label = attrs.get("label")
        if label not in NODE_TYPES:
            raise ExportError(f"node {nid!r} has label {label!r}, not one of eventkg's ({', '.join(NODE_TYPES)})")
        props = {k: v for k, v in attrs.items() if k != "label"}
        yield label, typed({**props, "id": nid}, NODE_TYPES[label].properties, f"{label} {nid}")


def edge_rows(source: Source) -> Iterator[tuple[str, Row]]:
    """Every edge as ``(TYPE, typed row)``: a store type by type, a graph in edge order."""
    if isinstance(source, GraphStore):
        for rtype, kind in REL_TYPES.items():
            for row in source.iter_edges(rtype):
                yield rtype, typed(row, kind.properties, f"{rtype} {row.get('src')}->{row.get('dst')}")
        return
    for src, dst, key, attrs in source.edges(keys=True, data=True):
        rtype = attrs.get("type", key)
        if rtype not in REL_TYPES:
            raise ExportError(f"edge {src!r}->{dst!r} has type {rtype!r}, not one of eventkg's relationship types")
        props = {k: v for k, v in attrs.items() if k != "type"}
        yield rtype, typed({**props, "src": src, "dst": dst}, REL_TYPES[rtype].properties, f"{rtype} {src}->{dst}")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of at most ``size`` items (itertools.batched arrives in Python 3.12)."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def row_count(source: Source) -> int:
    """The nodes and edges ``source`` holds (a store's counts, a graph's size)."""
    if isinstance(source, GraphStore):
        counts = source.counts()
        return sum(counts["nodes"].values()) + sum(counts["edges"].values())
    return source.number_of_nodes() + source.number_of_edges()


def check_export_room(source: Source, path: Path, bytes_per_row: int, command: str) -> None:
    """Refuse, before any row is read, an export whose disk cannot hold ``bytes_per_row`` for each of
    the rows of ``source``: a floor of the file's size (the least a row measured), so a disk that
    passes may still fill, which the atomic write then reports.

    Raises:
        DiskFullError: One line: the floor, and what the output's file system has free.
    """
    rows = row_count(source)
    ensure_free(path, rows * bytes_per_row, f"{command} {path}",
                detail=f"at least {bytes_per_row} bytes for each of its {rows:,} nodes and edges")


@contextmanager
def atomic_output(path: Path) -> Iterator[IO[bytes]]:
    """A binary file that appears at ``path`` only when the block ends without error.

    Written beside ``path`` under a temporary name, fsynced and renamed
    (:func:`eventkg.graphstore.atomic.atomic_file`), so an interrupted export or a full disk never
    leaves a truncated file that parses as a smaller graph; a full disk is one line saying so.
    """
    with atomic_file(path, "wb", what=f"cannot write {path}") as out:
        yield out
