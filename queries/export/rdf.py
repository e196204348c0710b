"""The graph as RDF: Turtle (``.ttl``) or N-Triples (``.nt``), streamed, written with rdflib.

Namespace (one vocabulary for everything eventkg names)
-------------------------------------------------------
``ekg:`` = ``https://eventkg.org/ns#`` holds the classes, relationship predicates and property
predicates, spelled as in the store: node labels (``ekg:Event``, ``ekg:Question``...),
relationship types (``ekg:CAUSES``, ``ekg:HAS_TYPE``...) and property names (``ekg:text``,
``ekg:level``, ``ekg:weight``, ``ekg:sources``...). Labels are capitalised, types upper snake
case and properties lower case, so the three never collide.
``ekgid:`` = ``https://eventkg.org/id/`` holds the nodes: node ``ID`` is ``ekgid:ID``
(percent-encoded; ids are unique across labels by construction).

Nodes: ``ekgid:ID a ekg:Label``, then one triple per property with a typed literal (STRING ->
plain string, DOUBLE -> ``xsd:double``, INT64 -> ``xsd:integer``); ``sources`` is one
``ekg:sources`` triple per source name; an ordered list property (a Question's ``choices``) is
an RDF collection ``( "a" "b" )``, so its order survives. Absent properties have no triple;
an empty string is kept (``""``).

Edges: each relationship is exactly one triple ``ekgid:SRC ekg:TYPE ekgid:DST``, so the number
of ``ekg:TYPE`` triples equals the store's edge count of ``TYPE`` (``eventkg stats``). An
edge's properties (``sources``, ``weight``, ``count``...) hang on its standard RDF reification,
a statement whose IRI ``ekgid:edge-HASH`` is a stable hash of (TYPE, SRC, DST)
(:func:`statement_iri`; the same edge gets the same IRI in every export)::

    ekgid:a ekg:CAUSES ekgid:b .
    ekgid:edge-5c2e0f31d4a7b9e86a11 a rdf:Statement ;
        rdf:subject ekgid:a ; rdf:predicate ekg:CAUSES ; rdf:object ekgid:b ;
        ekg:sources "ev2" ; ekg:weight 2.0 .

SPARQL reads an edge's weight as ``?st rdf:subject ?s ; rdf:predicate ekg:CAUSES ;
rdf:object ?o ; ekg:weight ?w``. Edges without any property get no statement.

Streaming: the rows are cut into batches of ``page_size`` nodes or edges; each batch becomes a
small rdflib ``Graph`` that is serialised and appended to the file, then dropped, so memory
stays bounded by one batch whatever the store's size (figures: ``docs/performance.md``). N-Triples batches are plain
concatenation (one triple per line). Turtle batches are whole Turtle documents; the prefix
block is written once at the top and each batch's copy of the same ``@prefix`` lines is cut
(Turtle allows a directive anywhere, so a prefix rdflib would add in a later batch is
kept in place). Blank nodes (only the list cells of ``choices``) carry rdflib's unique
ids, so two batches never share one by accident. The file is written as ``FILE.part`` and
renamed when complete.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote

from eventkg.graphstore.model import stable_id
from eventkg.queries.export.rows import (
    Row,
    Source,
    atomic_output,
    batched,
    check_export_room,
    check_suffix,
    edge_rows,
    empty_counts,
    node_rows,
)

if TYPE_CHECKING:  # rdflib is imported by the functions that write (the CLI's --help never loads it)
    from rdflib import Graph, URIRef

NS = "https://eventkg.org/ns#"
ID = "https://eventkg.org/id/"
EDGE = ID + "edge-"
SUFFIXES = {".ttl": "Turtle", ".nt": "N-Triples"}
PREFIXES = {
    "ekg": NS,
    "ekgid": ID,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}
#: nodes or edges per rdflib Graph: ~10-20 triples each, a few MB of Python objects per batch
PAGE_ROWS = 5_000
#: the least bytes a node or edge took in each format over the stores measured (docs/bad-day.md):
#: the floor of a file's size the pre-export check asks the disk to have free
BYTES_PER_ROW = {"N-Triples": 700, "Turtle": 230}


def node_iri(node_id: str) -> str:
    """The IRI of a node id (``ekgid:`` + the percent-encoded id)."""
    return ID + quote(node_id, safe="")


def statement_iri(rel_type: str, src: str, dst: str) -> str:
    """The IRI of the reified statement that carries an edge's properties.

    A hash in the ``ekgid:`` namespace, not a path such as ``edge/TYPE/SRC/DST``: rdflib's
    Turtle writer files every distinct IRI folder as a candidate namespace, which made
    Turtle is slower than N-Triples (rdflib's writer groups triples by subject).
    """
    return EDGE + stable_id(rel_type, src, dst)


def export_rdf(source: Source, path: str | Path, *, page_size: int = PAGE_ROWS) -> dict[str, Any]:
    """Write ``source`` (a store, or a graph in the store's networkx shape) as Turtle or N-Triples.

    The format follows the suffix of ``path`` (``.ttl`` or ``.nt``; anything else is an
    :class:`~eventkg.queries.errors.ExportError`). Returns ``{"nodes": {label: n},
    "edges": {TYPE: n}, "triples": n}``: what was written, in the shape of ``store.counts()``.
    A disk with less free than the file's floor (:data:`BYTES_PER_ROW` a row) is refused first
    (:class:`~eventkg.errors.DiskFullError`), before any row is read.
    """
    path = Path(path)
    fmt = check_suffix(path, SUFFIXES, "export rdf")
    check_export_room(source, path, BYTES_PER_ROW[fmt], "export rdf")
    counts: dict[str, Any] = {**empty_counts(), "triples": 0}
    rows = chain((("nodes", *r) for r in node_rows(source)), (("edges", *r) for r in edge_rows(source)))
    with atomic_output(path) as out:
        write = _turtle_writer(out) if fmt == "Turtle" else _ntriples_writer(out)
        for chunk in batched(rows, page_size):
            graph = _graph()
            for kind, name, row in chunk:
                (_add_node if kind == "nodes" else _add_edge)(graph, name, row)
                counts[kind][name] += 1
            counts["triples"] += len(graph)
            write(graph)
    return counts


def _graph() -> Graph:
    from rdflib import Graph

    graph = Graph(bind_namespaces="none")
    for prefix, iri in PREFIXES.items():
        graph.bind(prefix, iri)
    return graph


def _add_node(graph: Graph, label: str, row: Row) -> None:
    from rdflib import RDF, URIRef

    subject = URIRef(node_iri(row["id"]))
    graph.add((subject, RDF.type, URIRef(NS + label)))
    _add_properties(graph, subject, {k: v for k, v in row.items() if k != "id"})


def _add_edge(graph: Graph, rel_type: str, row: Row) -> None:
    """One relationship triple, and its reified statement when the edge has properties."""
    from rdflib import RDF, URIRef

    src, dst = URIRef(node_iri(row["src"])), URIRef(node_iri(row["dst"]))
    predicate = URIRef(NS + rel_type)
    graph.add((src, predicate, dst))
    props = {k: v for k, v in row.items() if k not in ("src", "dst") and v != []}
    if not props:
        return
    statement = URIRef(statement_iri(rel_type, row["src"], row["dst"]))
    graph.add((statement, RDF.type, RDF.Statement))
    graph.add((statement, RDF.subject, src))
    graph.add((statement, RDF.predicate, predicate))
    graph.add((statement, RDF.object, dst))
    _add_properties(graph, statement, props)


def _add_properties(graph: Graph, subject: URIRef, props: Row) -> None:
    """Typed literals; ``sources`` one triple per name, other lists as ordered RDF collections."""
    from rdflib import RDF, BNode, Literal, URIRef
    from rdflib.collection import Collection

    for key, value in props.items():
        predicate = URIRef(NS + key)
        if key == "sources":
            for name in value:
                graph.add((subject, predicate, Literal(name)))
        elif isinstance(value, list):
            head = BNode() if value else RDF.nil
            if value:
                Collection(graph, head, [Literal(v) for v in value])
            graph.add((subject, predicate, head))
        else:
            graph.add((subject, predicate, Literal(value)))


def _ntriples_writer(out: IO[bytes]) -> Callable[[Graph], None]:
    def write(graph: Graph) -> None:
        out.write(graph.serialize(format="nt", encoding="utf-8"))

    return write


def _turtle_writer(out: IO[bytes]) -> Callable[[Graph], None]:
    """Prefixes once at the top; each batch's document without the prefix lines already written."""
    header = [f"@prefix {prefix}: <{iri}> .\n".encode() for prefix, iri in PREFIXES.items()]
    out.write(b"".join(header))
    written = set(header)

    def write(graph: Graph) -> None:
        lines = iter(graph.serialize(format="turtle", encoding="utf-8").splitlines(keepends=True))
        for line in lines:
            if not line.startswith(b"@prefix "):
                out.write(line)
                break
            if line not in written:  # a prefix first needed in this batch: legal mid-document
                written.add(line)
                out.write(line)
        out.writelines(lines)

    return write
