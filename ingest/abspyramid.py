"""AbsPyramid (Wang et al., arXiv:2311.09174): abstraction detection/generation JSON-lines into the typed graph.

Layout: ``{Detection,Generation}/{noun,verb,event,merged}_dataset/{train,valid,test}.json``,
one object per line: ``event`` (the head, instance marked ``<...>``), ``concept``,
``label`` (Detection; Generation rows are all valid, label 1), ``type`` (noun|verb|event;
when absent, taken from the folder ``noun_dataset``/...). PATH may be the root, any folder
in it, or one file.

Each row becomes:

* head ``Event`` (level ``schema``, the same level as ASER eventualities, so a head with an
  eventuality's words is that node): the event with the angle brackets removed;
* tail ``Event`` (level ``schema``): the head with the instance replaced by the concept;
* ``NOUN_ENTAIL``/``VERB_ENTAIL``/``EVENT_ENTAIL`` head -> tail with ``instance``,
  ``concept``, ``label`` and the split of the task the file belongs to (its name:
  train/valid/test): ``det_split`` for a Detection file, ``gen_split`` for a Generation
  file. The same tuple in both tasks keeps both, as the release ships them (a file outside
  both folders counts as Detection when its rows carry labels, else as Generation);
* for valid abstractions only (label 1): a ``Concept`` node and ``ABSTRACTS_TO`` head ->
  concept with ``relation`` = the entail type. An invalid abstraction (label 0) keeps its
  labelled entail edge but does not claim the head abstracts to the concept.

Each entail edge is keyed per task by (type, head, tail): a second row of the same task storing
it with another instance, concept, label or split is refused naming both places, as is a
Detection label 0 for an edge a Generation row (label 1) holds; the same row again (the
``merged_dataset`` repeats the others) is counted (``IngestReport.repeated``). Field types are
checked when a row is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eventkg.graphstore.model import stable_id
from eventkg.ingest.checks import Keys
from eventkg.ingest.errors import RowError
from eventkg.ingest.nodes import edge_row, event_row, node_row
from eventkg.ingest.pipeline import (
    EdgeRows,
    NodeRows,
    Parsed,
    Reject,
    Row,
    Source,
    json_line_rows,
    resolve_files,
)

SOURCE = "abspyramid"
LEVEL = "schema"
TYPES = {"noun": "NOUN_ENTAIL", "verb": "VERB_ENTAIL", "event": "EVENT_ENTAIL"}
SPLITS = ("train", "valid", "test")
MARK = re.compile(r"<([^<>]*)>")
SEP = "[SEP]"


def _accept(p: Path) -> bool:
    return p.suffix in (".json", ".jsonl") and p.stem in SPLITS


def find_files(path: str | Path) -> list[Path]:
    return resolve_files(path, "AbsPyramid", _accept, "train.json, valid.json, test.json under Detection/ or Generation/")


def _context(path: Path) -> tuple[str | None, str | None]:
    """(task, type) named by the file's folders: ``Detection``/``Generation``, ``noun_dataset``..."""
    task = kind = None
    for part in path.parts:
        low = part.lower()
        if low in ("detection", "generation"):
            task = low
        m = re.fullmatch(r"(noun|verb|event)_dataset", low)
        if m:
            kind = m.group(1)
    return task, kind


def entail_row(obj: Any, task: str | None, folder_type: str | None, split: str) -> Row:
    """One AbsPyramid object -> typed rows; raises RowError with the reason when invalid."""
    if not isinstance(obj, dict):
        raise RowError("expected a JSON object")
    missing = [f for f in ("event", "concept") if not isinstance(obj.get(f), str) or not obj[f].strip()]
    if missing:
        raise RowError(f"missing field {', '.join(repr(m) for m in missing)}")
    kind = obj.get("type") or folder_type
    if kind is not None and not isinstance(kind, str):
        raise RowError(f"'type' must be a string (got {type(kind).__name__})")
    if kind is None:
        raise RowError("no 'type' field and the folder does not name noun/verb/event")
    if kind not in TYPES:
        raise RowError(f"unknown relation type {kind!r}; expected noun, verb or event")
    if "label" in obj and obj["label"] is not None:
        label = obj["label"]
        if label not in (0, 1) or isinstance(label, bool | float):
            raise RowError(f"label {label!r} is not 0 or 1")
    elif task == "detection":
        raise RowError("missing field 'label' (Detection rows are labelled)")
    else:
        label = 1
    event = obj["event"]
    marks = MARK.findall(event)
    if len(marks) != 1 or not marks[0].strip() or event.count("<") != 1 or event.count(">") != 1:
        raise RowError(f"event {event!r} must mark exactly one instance with <...>")
    if task is None:
        task = "detection" if obj.get("label") is not None else "generation"
    concepts = [c.strip() for c in obj["concept"].split(SEP)] if task == "generation" else [obj["concept"].strip()]
    if not all(concepts):
        raise RowError(f"concept {obj['concept']!r} has an empty part between {SEP} separators")
    props: dict[str, Any] = {"det_split": split} if task == "detection" else {
        "gen_split": split, "gen_row": stable_id("abspyramid-gen-row", event, obj["concept"])}
    instance = marks[0].strip()
    head = MARK.sub(lambda m: m.group(1), event)
    hrow = event_row(head, LEVEL, SOURCE)
    rtype = TYPES[kind]
    nodes: NodeRows = [("Event", hrow)]
    edges: EdgeRows = []
    keys: list[tuple[Any, Any]] = []
    for concept in dict.fromkeys(concepts):
        trow = event_row(MARK.sub(lambda m, c=concept: c, event), LEVEL, SOURCE)
        nodes.append(("Event", trow))
        edge = ("entail", rtype, hrow["text"], trow["text"])
        keys += [((*edge, task), {"instance": instance, "concept": concept, "label": label, **props}),
                 ((*edge, "label"), label)]
        edges.append((rtype, edge_row(hrow["id"], trow["id"], SOURCE, instance=instance, concept=concept, label=label,
                                      **props)))
        if label == 1:
            crow = node_row("Concept", concept, SOURCE, name=concept)
            nodes.append(("Concept", crow))
            edges.append(("ABSTRACTS_TO", edge_row(hrow["id"], crow["id"], SOURCE, relation=rtype)))
    return Row(nodes, edges, keys)


def iter_rows(files: list[Path], keys: Keys | None = None) -> Iterator[Row | Reject]:
    keys = keys if keys is not None else Keys()
    for path in files:
        task, kind = _context(path)
        yield from json_line_rows(path, lambda obj, task=task, kind=kind, path=path: entail_row(obj, task, kind, path.stem),
                                  keys)


def parse(source: Source) -> Parsed:
    """The AbsPyramid files at ``source.path`` (the root, a folder or a file) and their rows."""
    files = find_files(source.path)
    return Parsed(files, iter_rows(files, source.keys))


