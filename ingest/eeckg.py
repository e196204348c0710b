"""EECKG (seed 001, §3.1): an eventuality-centric graph in ConceptNet's formats.

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
non-English nodes (``/c/fr/...``), unknown relations, rows with missing fields, bad weights.
All edges carry ``weight``. ``RELATED`` edges are keyed by (head, tail) in the store, so two
different ConceptNet relations between the same pair keep the last one read.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eventkg.ingest.errors import RowError
from eventkg.ingest.nodes import edge_row, event_relation_edge, event_row
from eventkg.ingest.pipeline import DEFAULT_BATCH_SIZE, IngestReport, Progress, Reject, Row, resolve_files, run

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
    try:
        w = 1.0 if weight in (None, "") else float(weight)
    except (TypeError, ValueError):
        raise RowError(f"weight {weight!r} is not a number") from None
    hrow, trow = event_row(h, "schema", SOURCE), event_row(t, "schema", SOURCE)
    nodes = [("Event", hrow), ("Event", trow)]
    if rel in EVENT_MAP:
        return Row(nodes, [event_relation_edge(hrow["id"], EVENT_MAP[rel], trow["id"], SOURCE, weight=w)])
    if rel in REJECTED:
        raise RowError(REJECTED[rel])
    if rel in CONCEPTNET_OTHER or rel.startswith("dbpedia/"):
        return Row(nodes, [("RELATED", edge_row(hrow["id"], trow["id"], SOURCE, relation=rel, weight=w))])
    raise RowError(f"unknown relation {relation!r} (not a ConceptNet 5 relation; see ingest.eeckg)")


def _conceptnet_rows(path: Path, fh) -> Iterator[Row | Reject]:
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        raw = line.rstrip("\n")
        cols = raw.split("\t")
        try:
            if len(cols) < 4:
                raise RowError(f"expected 5 tab-separated columns (uri, relation, start, end, json), got {len(cols)}")
            weight = None
            if len(cols) >= 5 and cols[4].strip():
                try:
                    meta = json.loads(cols[4])
                except json.JSONDecodeError as exc:
                    raise RowError(f"broken JSON metadata: {exc.msg}") from None
                weight = meta.get("weight") if isinstance(meta, dict) else None
            yield triple_row(cols[2], cols[1], cols[3], weight)
        except RowError as exc:
            yield Reject(str(path), n, str(exc), raw)


def _table_rows(path: Path, fh, first: str) -> Iterator[Row | Reject]:
    delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(fh, delimiter=delimiter)
    header = [h.strip().lower() for h in next((r for r in reader if any(c.strip() for c in r)), [])]
    missing = [c for c in ("head", "relation", "tail") if c not in header]
    if missing:
        yield Reject(str(path), 1, f"header lacks {', '.join(missing)} (expected head,relation,tail[,weight])", first)
        return
    idx = {c: header.index(c) for c in header}
    rows = 0
    for cols in reader:
        n = reader.line_num
        if not any(c.strip() for c in cols):
            continue
        rows += 1
        try:
            vals = {c: (cols[i] if i < len(cols) else "") for c, i in idx.items()}
            empty = [c for c in ("head", "relation", "tail") if not vals[c].strip()]
            if empty:
                raise RowError(f"missing field {', '.join(repr(c) for c in empty)}")
            yield triple_row(vals["head"], vals["relation"], vals["tail"], vals.get("weight"))
        except RowError as exc:
            yield Reject(str(path), n, str(exc), delimiter.join(cols))
    if not rows:
        yield Reject(str(path), 1, "empty file: a header but no rows")


def iter_rows(files: list[Path]) -> Iterator[Row | Reject]:
    for path in files:
        with path.open(encoding="utf-8", newline="") as fh:
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
                yield from _conceptnet_rows(path, fh)
            else:
                yield from _table_rows(path, fh, first)


def load(
    store,
    path: str | Path,
    *,
    on_error: str = "fail",
    rejects: str | Path | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest EECKG / ConceptNet-format files at ``path`` into ``store``."""
    files = find_files(path)
    return run(store, SOURCE, files, iter_rows(files), on_error=on_error, rejects=rejects, limit=limit,
               batch_size=batch_size, progress=progress)
