"""EV² (Tao et al., arXiv:2404.17513): the four question files and ``clustering.json`` into the typed graph.

Files: ``S_CEC.jsonl``, ``S_CRR.jsonl`` (schema level), ``I_CEC.jsonl``, ``I_CRR.jsonl``
(instance level), ``clustering.json`` (a list of clusters of event-type names). The task and
level come from the file name (``S_``/``I_`` + ``CEC``/``CRR``) and otherwise from the row
(``instances`` present -> instance; choices a relation family -> CRR).

What each question row becomes
------------------------------
* ``Event`` (level ``schema``) per event-type name; ``Event`` (level ``instance``, text = the
  instance sentence, id from that text) per instance, with ``HAS_TYPE`` to its type.
* Schema triples, stored once in canonical direction (``IsResult`` -> ``CAUSES`` reversed...):
  ``context_tpl`` (schema rows), ``event_relation`` (instance rows, already in type names),
  the instance rows' ``context_tpl`` mapped through ``event_type``, and the gold edge
  ``(e0, rel, e1)`` of every non-Vague row (for instance rows: mapped to the types, which
  ``event_relation`` already holds). Vague adds no edge.
* Instance-level edges between instance events: ``context_tpl`` and the non-Vague gold edge.
* A ``Question`` node (origin ``imported``; ``payload`` = the row as JSON for lossless
  export; ``context_tpl`` as JSON; ``answer`` = ``e1`` for CEC, ``rel`` for CRR) with
  ``ASKS`` (role e0/e1), ``HAS_CHOICE`` (CEC; order, correct) and ``HAS_CONTEXT`` (order of
  first appearance in the context triples). Its key is (task, level, id, rel, CRR family), and
  ``e1`` too for a Vague row: in the release a CRR id repeats with the same family, once with
  the gold relation and once as a Vague pair with another ``e1``; the two are two questions.
* ``clustering.json``: cluster ``i`` sets ``Event.cluster = i`` on its event types.
* The folder the files were read from is not part of any row: the store records it when the
  ingest completes (:meth:`eventkg.graphstore.base.GraphStore.ingest_origin`), so that a release
  style can find the checkout the data came from (``data/`` beside ``src/``).

Repeats, types, missing files
-----------------------------
A question key read twice in one ingest with other content is refused, naming both lines
(``--on-error skip``: the later row is a reject); the same row twice is stored once and counted
(``IngestReport.repeated``). So is an event-type name in two clusters. Every field has its type
checked when the row is read (``question`` a string, ``context_tpl`` a list of triples...). A
folder must hold all five files (:data:`PARTS`); ``partial=True`` (``--partial``) ingests what
is there and the report names what was left out. A ``clustering.json`` that cannot be read is
one reject in skip mode, the question files still land.

Instances without text
----------------------
The official release names instance ids (in ``e0``/``e1``, ``choices``, ``negative_chosen``,
``context_tpl`` or ``event_type``) that have no entry in ``instances`` or whose text is empty
(30 rows of ``I_CEC``/``I_CRR``, 14 distinct instances; ``52-2``/``event75`` is the empty
one). Every id a row names is an instance event all the same: it gets ``HAS_TYPE`` to its type
and every link the row gives it (``ASKS``, ``HAS_CHOICE``, ``HAS_CONTEXT``, context and gold
edges). With no text to hash, its node has ``text = ''`` and
the id ``stable_id("Event", "instance", "", "ev2", question id, instance id, normalised type)``:
stable across runs, and one node for the same question's instance in ``I_CEC`` and ``I_CRR``
(in the release a question id carries the same ``instances`` in both files; instance ids are
only unique within a question). ``IngestReport.extra["instances_without_text"]`` counts them
and ``eventkg stats`` counts ``level = 'instance' AND text = ''`` events. Only an id a row
names with neither text nor type, or an ``e0``/``e1`` without type, is refused.

Context without ``context_tpl``
-------------------------------
The release leaves ``context_tpl`` out of the non-Vague ``S_CRR`` rows and the Vague ``I_CRR``
rows (730 rows); their ``context`` text is the same triples verbalised (``"a" causes "b".``,
``is a result of``, ``is before``, ``is after``, ``has subevent``, ``is a subevent of``). When
``context_tpl`` is absent and the whole text is such sentences, they are read as the context
triples (edges and ``HAS_CONTEXT``; the ``context_tpl`` property stays empty, as in the
source); other text is kept on the Question only. In instance rows a sentence naming an id the
row describes neither in ``instances`` nor in ``event_type`` is skipped: the release's Vague
rows reuse the context of their gold twin, whose ``e1`` they drop (``417-2``, ``4-0``).

Other quirks of the release, handled by normalisation: event-type names with stray spaces
(``'interest '``, ``' overcome_trouble'``, ``'being _understood'``) are the same node as the
clean name, and a name listed twice in one cluster is one node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eventkg.graphstore.model import EVENT_RELATIONS, FAMILIES, VAGUE, normalise_text, stable_id
from eventkg.graphstore.rows import NodeRow
from eventkg.ingest.checks import Keys, missing_parts
from eventkg.ingest.errors import RowError
from eventkg.ingest.nodes import edge_row, event_relation_edge, event_row, node_row
from eventkg.ingest.pipeline import (
    EdgeRows,
    NodeRows,
    Parsed,
    Reject,
    Row,
    Source,
    json_line_rows,
    json_list_items,
    resolve_files,
)

SOURCE = "ev2"
FILE_NAME = re.compile(r"^(?P<level>[SI])_(?P<task>CEC|CRR)", re.IGNORECASE)
CRR_CHOICES = {(a, b, VAGUE) for a, b in FAMILIES.values()}
PARTS = ("S_CEC.jsonl", "S_CRR.jsonl", "I_CEC.jsonl", "I_CRR.jsonl", "clustering.json")
EXPECTED = ", ".join(PARTS)
OPTIONAL_TEXT = ("question", "context")  # strings when present (null allowed)
WITHOUT_TEXT = "instances_without_text"  # IngestReport.extra key
VERBALISED = {
    "causes": "Causes",
    "is a result of": "IsResult",
    "is before": "Before",
    "is after": "After",
    "has subevent": "HasSubevent",
    "is a subevent of": "IsSubevent",
}
SENTENCE = re.compile(r'\s*"([^"]+)" (' + "|".join(VERBALISED) + r') "([^"]+)"\.\s*')


def _accept(p: Path) -> bool:
    return p.suffix == ".jsonl" or (p.suffix == ".json" and p.stem.lower().startswith("clustering"))


def find_files(path: str | Path, partial: bool = False) -> tuple[list[Path], list[str]]:
    """The EV² files at ``path`` (a file, or a folder searched recursively), and the parts of
    :data:`PARTS` the folder lacks (an error unless ``partial``)."""
    files = resolve_files(path, "EV²", _accept, EXPECTED)
    return files, missing_parts(path, "EV²", PARTS, files, partial=partial)


def _file_kind(p: Path) -> tuple[str | None, str | None]:
    m = FILE_NAME.match(p.name)
    if not m:
        return None, None
    return m["task"].upper(), "schema" if m["level"].upper() == "S" else "instance"


def _need(obj: dict[str, Any], *names: str) -> None:
    missing = [n for n in names if obj.get(n) in (None, "")]
    if missing:
        raise RowError(f"missing field {', '.join(repr(m) for m in missing)}")


def _triples(obj: dict[str, Any], name: str) -> list[tuple[str, str, str]]:
    value = obj.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RowError(f"{name!r} is not a list of triples")
    out = []
    for t in value:
        if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t)):
            raise RowError(f"{name!r} holds {t!r}, not a [head, Relation, tail] triple")
        if t[1] not in EVENT_RELATIONS:
            raise RowError(f"unknown relation {t[1]!r} in {name}; expected one of {', '.join(EVENT_RELATIONS)}")
        out.append((t[0], t[1], t[2]))
    return out


def _read_context(text: Any) -> list[tuple[str, str, str]]:
    """The triples of a ``context`` text made only of verbalised triples; [] for any other text."""
    if not isinstance(text, str):
        return []
    out, pos = [], 0
    while pos < len(text):
        m = SENTENCE.match(text, pos)
        if not m or not (m[1].strip() and m[3].strip()):
            return []
        out.append((m[1], VERBALISED[m[2]], m[3]))
        pos = m.end()
    return out


def _context(obj: dict[str, Any]) -> tuple[list[tuple[str, str, str]], bool]:
    """(context triples, whether they were read from the ``context`` text)."""
    if obj.get("context_tpl") is not None:
        return _triples(obj, "context_tpl"), False
    return _read_context(obj.get("context")), True


def textless_instance(qid: str, iid: str, type_name: str) -> NodeRow:
    """The ``Event`` row of an instance a question names without text: ``text = ''`` and an id
    scoped by question id, instance id and type (see the module docstring)."""
    eid = stable_id("Event", "instance", "", SOURCE, qid, iid, normalise_text(type_name))
    return {"id": eid, "text": "", "level": "instance", "sources": [SOURCE]}


def _instance_ids(obj: dict[str, Any], task: str, context: list[tuple[str, str, str]]) -> list[str]:
    """Every instance id the row names, in order of first mention."""
    negatives = obj.get("negative_chosen")
    if negatives is None:
        negatives = []
    if not (isinstance(negatives, list) and all(isinstance(x, str) for x in negatives)):
        raise RowError("'negative_chosen' is not a list of instance ids")
    named = [obj["e0"], obj["e1"], *(obj["choices"] if task == "CEC" else []), *negatives]
    named += [x for h, _, t in context for x in (h, t)]
    named += [*obj["event_type"], *obj["instances"]]
    return list(dict.fromkeys(named))


@dataclass
class _RowParts:
    """The typed rows one question row becomes, and the Event id of each mention in it."""

    nodes: NodeRows = field(default_factory=list)
    edges: EdgeRows = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # mention -> Event id (schema names or instance ids)

    def schema(self, name: str) -> str:
        """Add the schema ``Event`` of an event-type name; return its id."""
        row = event_row(name, "schema", SOURCE)
        self.nodes.append(("Event", row))
        return row["id"]


def question_row(obj: Any, file_task: str | None, file_level: str | None) -> Row:
    """One EV² question row -> typed rows; raises RowError with the reason when invalid."""
    task, level = _checked_question(obj, file_task, file_level)
    context, from_text = _context(obj)
    schema_triples = _triples(obj, "event_relation")
    parts = _RowParts()
    if level == "instance":
        context = _instance_events(obj, task, context, from_text, schema_triples, parts)
    else:
        _schema_events(obj, task, context, parts)
    q = _question_node(obj, task, level)
    parts.nodes.append(("Question", q))
    parts.edges += _question_edges(q["id"], obj, task, context, parts.names)
    return Row(parts.nodes, parts.edges, [(("question", *question_key(obj, task, level)), obj)])


def _checked_question(obj: Any, file_task: str | None, file_level: str | None) -> tuple[str, str]:
    """(task, level) of a question row whose fields, relation and choices are valid."""
    if not isinstance(obj, dict):
        raise RowError("expected a JSON object")
    _need(obj, "id", "e0", "e1", "rel", "choices")
    wrong = [k for k in ("id", "e0", "e1", "rel") if not isinstance(obj[k], str)]
    wrong += [k for k in OPTIONAL_TEXT if obj.get(k) is not None and not isinstance(obj[k], str)]
    if wrong:
        raise RowError(f"{', '.join(repr(k) for k in wrong)} must be {'a string' if len(wrong) == 1 else 'strings'}"
                       f" (got {', '.join(type(obj[k]).__name__ for k in wrong)})")
    choices = obj["choices"]
    if not (isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices)):
        raise RowError("'choices' is not a list of strings")
    level = file_level or ("instance" if "instances" in obj else "schema")
    task = file_task or ("CRR" if tuple(choices) in CRR_CHOICES else "CEC")
    rel = obj["rel"]
    if rel not in EVENT_RELATIONS and not (rel == VAGUE and task == "CRR"):
        allowed = ", ".join(EVENT_RELATIONS) + (", Vague" if task == "CRR" else "")
        raise RowError(f"unknown relation {rel!r}; expected one of {allowed}")
    if task == "CRR":
        if tuple(choices) not in CRR_CHOICES:
            raise RowError(f"CRR choices {choices!r} are not a relation family with Vague")
        if rel not in choices:
            raise RowError(f"gold relation {rel!r} is not among the choices {choices!r}")
    elif obj["e1"] not in choices:
        raise RowError(f"answer e1 {obj['e1']!r} is not among the choices")
    return task, level


def _gold(obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The gold triple ``(e0, rel, e1)``, none for Vague."""
    return [(obj["e0"], obj["rel"], obj["e1"])] if obj["rel"] != VAGUE else []


def _schema_events(obj: dict[str, Any], task: str, context: list[tuple[str, str, str]], parts: _RowParts) -> None:
    """A schema row: its named event types, context and gold edges."""
    for name in [obj["e0"], obj["e1"], *(obj["choices"] if task == "CEC" else [])]:
        parts.names[name] = parts.schema(name)
    for h, r, t in context + _gold(obj):
        parts.names.setdefault(h, parts.schema(h))
        parts.names.setdefault(t, parts.schema(t))
        parts.edges.append(event_relation_edge(parts.names[h], r, parts.names[t], SOURCE))


def _instance_events(
    obj: dict[str, Any],
    task: str,
    context: list[tuple[str, str, str]],
    from_text: bool,
    schema_triples: list[tuple[str, str, str]],
    parts: _RowParts,
) -> list[tuple[str, str, str]]:
    """An instance row: its instance events with their types, the schema and instance edges.

    Returns the context triples kept (sentences read from text about undescribed ids are dropped).
    """
    instances, types = _checked_instances(obj)
    if from_text:  # a sentence about an id the row does not describe stays text only
        context = [t for t in context if all(x in types or (instances.get(x) or "").strip() for x in (t[0], t[2]))]
    type_ids: dict[str, str] = {}
    for iid in _instance_ids(obj, task, context):
        text, tname = instances.get(iid), types.get(iid)
        if text and text.strip():
            row = event_row(text, "instance", SOURCE)
        elif tname is not None:
            row = textless_instance(str(obj["id"]), iid, tname)
        else:
            where = "no entry in 'instances'" if iid not in instances else "an empty text"
            raise RowError(f"instance id {iid!r} has {where} and no 'event_type'")
        parts.nodes.append(("Event", row))
        parts.names[iid] = row["id"]
        if tname is not None:
            type_ids[iid] = parts.schema(tname)
            parts.edges.append(("HAS_TYPE", edge_row(parts.names[iid], type_ids[iid], SOURCE)))
    for role in ("e0", "e1"):
        if obj[role] not in type_ids:
            raise RowError(f"{role} {obj[role]!r} has no event_type")
    for h, r, t in schema_triples:
        parts.edges.append(event_relation_edge(parts.schema(h), r, parts.schema(t), SOURCE))
    for h, r, t in context + _gold(obj):
        parts.edges.append(event_relation_edge(parts.names[h], r, parts.names[t], SOURCE))
        if h in type_ids and t in type_ids:
            parts.edges.append(event_relation_edge(type_ids[h], r, type_ids[t], SOURCE))
    return context


def _checked_instances(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(instances, event_type) of an instance row, checked to be objects of texts and names."""
    _need(obj, "instances", "event_type")
    instances, types = obj["instances"], obj["event_type"]
    if not isinstance(instances, dict) or not isinstance(types, dict):
        raise RowError("'instances' and 'event_type' must be objects")
    for iid, tname in types.items():
        if not isinstance(tname, str) or not tname.strip():
            raise RowError(f"event_type of {iid!r} is not a name")
    for iid, text in instances.items():
        if text is not None and not isinstance(text, str):
            raise RowError(f"text of instance {iid!r} is not a string")
    return instances, types


def question_key(obj: dict[str, Any], task: str, level: str) -> tuple[str, ...]:
    """(task, level, id, rel, CRR family), and ``e1`` for a Vague row: what tells questions apart."""
    family = "|".join(obj["choices"]) if task == "CRR" else ""
    key = (task, level, obj["id"], obj["rel"], family)
    return (*key, obj["e1"]) if obj["rel"] == VAGUE else key


def _question_node(obj: dict[str, Any], task: str, level: str) -> NodeRow:
    """The ``Question`` row: unique per :func:`question_key`, the source row as payload."""
    rel, choices = obj["rel"], obj["choices"]
    return node_row(
        "Question",
        "|".join((SOURCE, *question_key(obj, task, level))),
        SOURCE,
        qid=str(obj["id"]),
        task=task,
        level=level,
        rel=rel,
        origin="imported",
        question=obj.get("question"),
        e0=obj["e0"],
        e1=obj["e1"],
        choices=list(choices),
        answer=obj["e1"] if task == "CEC" else rel,
        context=obj.get("context"),
        context_tpl=json.dumps(obj["context_tpl"], ensure_ascii=False) if obj.get("context_tpl") is not None else None,
        payload=json.dumps(obj, ensure_ascii=False),
    )


def _question_edges(
    qid: str, obj: dict[str, Any], task: str, context: list[tuple[str, str, str]], names: dict[str, str]
) -> EdgeRows:
    """``ASKS`` (e0, e1), ``HAS_CHOICE`` (CEC) and ``HAS_CONTEXT`` (order of first appearance) edges."""
    edges = [("ASKS", edge_row(qid, names[obj["e0"]], SOURCE, role="e0"))]
    if names[obj["e1"]] != names[obj["e0"]]:
        edges.append(("ASKS", edge_row(qid, names[obj["e1"]], SOURCE, role="e1")))
    if task == "CEC":
        for i, c in enumerate(obj["choices"]):
            edges.append(("HAS_CHOICE", edge_row(qid, names[c], SOURCE, order=i, correct=int(c == obj["e1"]))))
    order: dict[str, int] = {}
    for h, _, t in context:
        for x in (h, t):
            order.setdefault(names[x], len(order))
    for eid, i in order.items():
        edges.append(("HAS_CONTEXT", edge_row(qid, eid, SOURCE, order=i)))
    return edges


def _clustering_rows(path: Path, keys: Keys) -> Iterator[Row | Reject]:
    """One row per cluster; a file that is not a JSON list of clusters is one reject."""
    for got in json_list_items(path, "clustering file must be a JSON list of clusters (lists of event-type names)",
                               "empty file: no clusters"):
        if isinstance(got, Reject):
            yield got
            continue
        i, cluster = got
        place = f"cluster {i}"
        if not (isinstance(cluster, list) and cluster and all(isinstance(x, str) and x.strip() for x in cluster)):
            yield Reject(str(path), place, "a cluster must be a non-empty list of event-type names", cluster)
            continue
        names = list(dict.fromkeys(normalise_text(x) for x in cluster))
        row = Row([("Event", event_row(name, "schema", SOURCE, cluster=i)) for name in cluster], [],
                  [(("event type in a cluster", name), i) for name in names])
        try:
            yield keys.admit(row, str(path), place)
        except RowError as exc:
            yield Reject(str(path), place, str(exc), cluster)


def iter_rows(files: list[Path], without_text: set[str] | None = None, keys: Keys | None = None) -> Iterator[Row | Reject]:
    """Every EV² source row of ``files`` as a Row or a Reject; the ids of instance events
    without text in good rows are added to ``without_text`` when given. ``keys`` holds the
    question keys read so far (repeats are checked across all files)."""
    keys = keys if keys is not None else Keys()
    for path in files:
        if path.suffix == ".json":
            yield from _clustering_rows(path, keys)
            continue
        task, level = _file_kind(path)
        rows = json_line_rows(path, lambda obj, task=task, level=level: question_row(obj, task, level), keys)
        for item in rows:
            if without_text is not None and isinstance(item, Row):
                without_text.update(
                    r["id"]
                    for label, r in item.nodes
                    if label == "Event" and r["level"] == "instance" and not r["text"]
                )
            yield item


def parse(source: Source, partial: bool = False) -> Parsed:
    """The EV² files at ``source.path`` (file or folder) and their rows; with ``partial`` a folder
    lacking some of :data:`PARTS` is read all the same and ``left_out`` names them."""
    files, left_out = find_files(source.path, partial)
    without_text: set[str] = set()
    return Parsed(files, iter_rows(files, without_text, source.keys), left_out,
                  counts=lambda: {WITHOUT_TEXT: len(without_text)})


