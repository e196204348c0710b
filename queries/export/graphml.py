"""The graph as GraphML (``.graphml``), written by networkx for Gephi, yEd, Cytoscape or igraph.

The file holds one directed multigraph, close to the store's networkx shape: node id = eventkg id,
node attribute ``label`` = the node label (``Event``, ``Question``...); edge attribute ``type``
= the relationship type (``CAUSES``...) and GraphML edge ``id`` = ``TYPE:SRC:DST``, unique in
the file as GraphML tools expect (Gephi, for one, reads edge ids as identities); every stored property
is an attribute of the node or edge, typed from eventkg's model (STRING -> ``string``,
DOUBLE -> ``double``, INT64 -> ``long``), absent properties left out.

GraphML has no list type, so lists are joined into one string: ``sources`` with commas
(``"aser,ev2"``; a source name never holds a comma, the store keeps them the same way), and
a Question's ``choices`` (free text that may hold commas) as a JSON array
(``'["a", "b"]'``), which keeps both the order and any comma. ``nx.read_graphml`` reads
the file back as a ``MultiDiGraph`` with these attributes (edge key = the GraphML id).

Memory: ``nx.write_graphml`` needs the whole graph as a networkx graph, so a whole-store
export holds every node and edge in memory as networkx objects; for a big store, export a
subgraph here or the whole store as RDF, which streams.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx

from eventkg.queries.errors import ExportError
from eventkg.queries.export.rows import (
    Row,
    Source,
    atomic_output,
    check_export_room,
    check_suffix,
    edge_rows,
    empty_counts,
    node_rows,
)

SUFFIXES = {".graphml": "GraphML"}
#: the least bytes a node or edge took over the stores measured (docs/bad-day.md): the floor of the
#: file's size the pre-export check asks the disk to have free
BYTES_PER_ROW = 200


def flat(row: Row) -> dict[str, Any]:
    """Row values GraphML can hold: ``sources`` comma-joined, other lists as JSON arrays."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key == "sources":
            out[key] = ",".join(value)
        elif isinstance(value, list):
            out[key] = json.dumps(value, ensure_ascii=False)
        else:
            out[key] = value
    return out


def export_graphml(source: Source, path: str | Path) -> dict[str, dict[str, int]]:
    """Write ``source`` (a store, or a graph in the store's networkx shape) as GraphML.

    Returns ``{"nodes": {label: n}, "edges": {TYPE: n}}``: what was written, in the shape
    of ``store.counts()``. A path not ending in ``.graphml`` is an ExportError; a disk with less
    free than the file's floor (:data:`BYTES_PER_ROW` a row) is refused before any row is read.
    """
    path = Path(path)
    check_suffix(path, SUFFIXES, "export graphml")
    check_export_room(source, path, BYTES_PER_ROW, "export graphml")
    counts = empty_counts()
    graph = nx.MultiDiGraph()
    for label, row in node_rows(source):
        graph.add_node(row.pop("id"), label=label, **flat(row))
        counts["nodes"][label] += 1
    for rtype, row in edge_rows(source):
        src, dst = row.pop("src"), row.pop("dst")
        graph.add_edge(src, dst, key=f"{rtype}:{src}:{dst}", type=rtype, **flat(row))
        counts["edges"][rtype] += 1
    with atomic_output(path) as out:
        try:
            nx.write_graphml(graph, out)
        except ValueError as exc:  # lxml refuses text XML cannot hold (e.g. control characters)
            raise ExportError(f"export graphml: {exc}") from exc
    return counts
