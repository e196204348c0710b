"""EECKG (the eventuality-centric graph the EV² paper builds its schemas from, §3.1): an eventuality-centric graph in ConceptNet's formats.

Accepted files (a file, or a folder of ``.csv``/``.tsv``/``.txt``):

* ConceptNet 5 assertions: tab-separated, no header: assertion URI, ``/r/Rel``,
  ``/c/en/start``, ``/c/en/end``, JSON metadata with ``weight`` (default 1.0).
* Plain triples: TSV or CSV with a header ``head,relation,tail[,weight]``; heads/tails are
  phrases (``remember information``) or ``/c/en/...`` URIs; relations are ConceptNet names
  (``HasPrerequisite``, ``/r/Causes``) or the paper's names (``IsResult``, ``After``...).

Nodes are ``Event`` (level ``schema``): EECKG nodes are verb phrases, the same event types
EV² was built from, so ``/c/en/pass_exam`` and EV²'s ``pass_exam`` are one node.

Relation table (ConceptNet relation -> what is stored)
-------------------------------------------------------
==================================  ===================================================
``Causes``                          ``CAUSES`` head -> tail
``HasSubevent``, ``HasFirstSubevent``, ``HasLastSubevent``  ``HAS_SUBEVENT`` head -> tail
``HasPrerequisite``                 ``BEFORE`` tail -> head (the prerequisite happens first)
``Before`` / ``After``              ``BEFORE`` head -> tail / tail -> head
``IsResult`` / ``IsSubevent``       ``CAUSES`` / ``HAS_SUBEVENT`` tail -> head
``CausesDesire``                    ``RELATED`` (relation=``CausesDesire``): wanting is a
                                    mental state, not the event itself, so not ``CAUSES``
other ConceptNet relations          ``RELATED`` with ``relation`` = the ConceptNet name
``ExternalURL``                     rejected: it links outside the graph
anything else                       rejected: unknown relation
==================================  ===================================================

Rejected, never dropped silently (``--on-error skip`` writes them to the rejects file):
non-English nodes (``/c/fr/...``), unknown relations, rows with missing fields, bad weights,
bytes that are not UTF-8, a ConceptNet line without its five columns or whose assertion URI
names other relation/start/end than its columns (a line cut or edited by hand). All edges carry
``weight``. Each row is keyed by the edge it stores (type, head, tail, in stored direction):
``RELATED`` edges are keyed by (head, tail) in the store, so a second row storing the same edge
with another relation or weight is refused naming both places (``Causes(a, b)`` and
``IsResult(b, a)`` are one edge); the same edge with the same content is counted as a repeat
(``IngestReport.repeated``). A UTF-8 byte-order mark is accepted.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eventkg.graphstore.model import canonical_edge, normalise_text
from eventkg.ingest.checks import Keys
from eventkg.ingest.errors import RowError
from eventkg.ingest.nodes import edge_row, event_relation_edge, event_row
from eventkg.ingest.pipeline import (
    Parsed,
    Reject,
    Row,
    Source,
    resolve_files,
)

SOURCE = "eeckg"

# ConceptNet relation (or paper name) -> paper event relation, read head -> tail.
EVENT_MAP: dict[str, str] = {
    "Causes": "Causes",
    "HasSubevent": "HasSubevent",
    "HasFirstSubevent": "HasSubevent",
    "HasLastSubevent": "HasSubevent",
    "HasPrerequisite": "After",  # head needs tail first: tail Before head
    "Before": "Before",
    "After": "After",
    "IsResult": "IsResult",
    "IsSubevent": "IsSubevent",
}
# The other ConceptNet 5.7 relations, kept under RELATED with their own name.
CONCEPTNET_OTHER = frozenset(
    """RelatedTo FormOf IsA PartOf HasA UsedFor CapableOf AtLocation HasProperty MotivatedByGoal
    ObstructedBy Desires CreatedBy Synonym Antonym DistinctFrom DerivedFrom SymbolOf DefinedAs
    MannerOf LocatedNear HasContext SimilarTo EtymologicallyRelatedTo EtymologicallyDerivedFrom
    CausesDesire MadeOf ReceivesAction NotDesires NotUsedFor NotCapableOf NotHasProperty
    InstanceOf Entails""".split()
)
REJECTED = {"ExternalURL": "ExternalURL links outside the graph, not an event relation"}
NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes that are not UTF-8, as ``surrogateescape`` reads them


def _accept(p: Path) -> bool:
    return p.suffix.lower() in (".csv", ".tsv", ".txt")


def find_files(path: str | Path) -> list[Path]:
    return resolve_files(path, "EECKG", _accept, "ConceptNet assertion .csv or head,relation,tail .tsv/.csv")


def _relation(value: str) -> str:
    rel = value.strip()
    if rel.startswith("/r/"):
        rel = rel[3:]
    if rel.startswith("dbpedia/"):
        return rel
    return rel.strip("/")


def _term(value: str) -> str:
    """``/c/en/pass_exam/v/...`` -> ``pass_exam``; a plain phrase stays itself."""
    v = value.strip()
    if v.startswith("/c/"):
        parts = v.split("/")
        if len(parts) < 4 or not parts[3]:
            raise RowError(f"malformed node URI {v!r}")
        if parts[2] != "en":
            raise RowError(f"non-English node {v!r} (only /c/en/ is ingested)")
        return parts[3]
    if not v:
        raise RowError("empty head or tail")
    return v


def triple_row(head: str, relation: str, tail: str, weight: Any) -> Row:
    """One (head, relation, tail, weight) -> typed rows, by the table in the module docstring."""
    rel = _relation(relation)
    if not rel:
        raise RowError("missing field 'relation'")
    h, t = _term(head), _term(tail)
    w = _weight(weight)
    hrow, trow = event_row(h, "schema", SOURCE), event_row(t, "schema", SOURCE)
    nodes = [("Event", hrow), ("Event", trow)]
    if rel in EVENT_MAP:
        src, rtype, dst = canonical_edge(normalise_text(h), EVENT_MAP[rel], normalise_text(t))
        return Row(nodes, [event_relation_edge(hrow["id"], EVENT_MAP[rel], trow["id"], SOURCE, weight=w)],
                   [(("edge", rtype, src, dst), {"weight": w})])
    if rel in REJECTED:
        raise RowError(REJECTED[rel])
    if rel in CONCEPTNET_OTHER or rel.startswith("dbpedia/"):
        return Row(nodes, [("RELATED", edge_row(hrow["id"], trow["id"], SOURCE, relation=rel, weight=w))],
                   [(("edge", "RELATED", normalise_text(h), normalise_text(t)), {"relation": rel, "weight": w})])
    raise RowError(f"unknown relation {relation!r} (not a ConceptNet 5 relation; see ingest.eeckg)")


def _weight(weight: Any) -> float:
    """A row's weight (1.0 when not given); RowError unless it is a finite number."""
    if weight in (None, ""):
        return 1.0
    if isinstance(weight, bool) or not isinstance(weight, str | int | float):
        raise RowError(f"weight {weight!r} is not a number (got {type(weight).__name__})")
    try:
        w = float(weight)
    except ValueError:
        raise RowError(f"weight {weight!r} is not a number") from None
    if w != w or w in (float("inf"), float("-inf")):
        raise RowError(f"weight {weight!r} is not a finite number")
    return w


def not_utf8(text: str) -> str | None:
    """Why ``text`` (read with ``surrogateescape``) is not UTF-8, or None."""
    m = NOT_UTF8.search(text)
    return None if m is None else f"invalid UTF-8 (byte 0x{ord(m[0]) - 0xDC00:02x} at column {m.start() + 1})"


def _assertion(cols: list[str]) -> tuple[str, str, str, Any]:
    """(start, relation, end, weight) of a ConceptNet assertion line's five columns, checked."""
    if len(cols) != 5:
        raise RowError(f"expected 5 tab-separated columns (uri, relation, start, end, json), got {len(cols)}")
    uri = cols[0].strip()
    named = ",".join(c.strip().rstrip("/") + "/" for c in cols[1:4])
    if uri.startswith("/a/[") and uri[4:-1] != named:
        raise RowError(f"assertion URI {uri!r} does not name the relation, start and end of its columns "
                       f"({', '.join(c.strip() for c in cols[1:4])}): a cut or edited line?")
    weight = None
    if cols[4].strip():
        try:
            meta = json.loads(cols[4])
        except json.JSONDecodeError as exc:
            raise RowError(f"broken JSON metadata: {exc.msg}") from None
        if not isinstance(meta, dict):
            raise RowError(f"JSON metadata is not an object (got {type(meta).__name__})")
        weight = meta.get("weight")
    return cols[2], cols[1], cols[3], weight


def _conceptnet_rows(path: Path, fh, keys: Keys) -> Iterator[Row | Reject]:
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        raw = line.rstrip("\r\n")
        try:
            bad = not_utf8(raw)
            if bad:
                raise RowError(bad)
            start, rel, end, weight = _assertion(raw.split("\t"))
            yield keys.admit(triple_row(start, rel, end, weight), str(path), n)
        except RowError as exc:
            yield Reject(str(path), n, str(exc), raw)


def _table_rows(path: Path, fh, first: str, keys: Keys) -> Iterator[Row | Reject]:
    delimiter = "\t" if "\t" in first else ","
    # a tab-separated file has no quoting: a stray quote is text, not the start of a field that
    # runs on over the lines after it
    reader = csv.reader(fh, delimiter=delimiter, quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL)
    header = [h.strip().lower() for h in next((r for r in reader if any(c.strip() for c in r)), [])]
    missing = [c for c in ("head", "relation", "tail") if c not in header]
    if missing:
        yield Reject(str(path), 1, f"header lacks {', '.join(missing)} (expected head,relation,tail[,weight])", first)
        return
    idx = {c: header.index(c) for c in header}
    rows, end = 0, reader.line_num
    for cols in reader:
        n, end = end + 1, reader.line_num  # the row's first line (a quoted field may run on)
        if not any(c.strip() for c in cols):
            continue
        rows += 1
        try:
            if end > n:
                raise RowError(f"a quote opened on line {n} is not closed on it (lines {n}-{end} read as one row)")
            bad = not_utf8(delimiter.join(cols))
            if bad:
                raise RowError(bad)
            vals = {c: (cols[i] if i < len(cols) else "") for c, i in idx.items()}
            empty = [c for c in ("head", "relation", "tail") if not vals[c].strip()]
            if empty:
                raise RowError(f"missing field {', '.join(repr(c) for c in empty)}")
            yield keys.admit(triple_row(vals["head"], vals["relation"], vals["tail"], vals.get("weight")), str(path), n)
        except RowError as exc:
            yield Reject(str(path), n, str(exc), delimiter.join(cols))
    if not rows:
        yield Reject(str(path), 1, "empty file: a header but no rows")


def iter_rows(files: list[Path], keys: Keys | None = None) -> Iterator[Row | Reject]:
    """Every row of ``files``; read with ``surrogateescape`` so a byte that is not UTF-8 rejects its row only."""
    keys = keys if keys is not None else Keys()
    for path in files:
        with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
            first = ""
            for line in fh:
                if line.strip():
                    first = line
                    break
            if not first:
                yield Reject(str(path), 0, "empty file: no rows")
                continue
            fh.seek(0)
            if first.startswith("/a/"):
                yield from _conceptnet_rows(path, fh, keys)
            else:
                yield from _table_rows(path, fh, first, keys)


def parse(source: Source) -> Parsed:
    """The EECKG / ConceptNet-format files at ``source.path`` and their rows."""
    files = find_files(source.path)
    return Parsed(files, iter_rows(files, source.keys))


