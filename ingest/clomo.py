"""CLoMo (seed 002): counterfactual logical-modification items into the typed graph.

Files: ``zero_<split>.json``, ``few_<split>.json``, ``cot_<split>.json`` — each a JSON list of
``{instruction, input, output, qtype, id_string, input_info: {P, O, Om, Q}}``. The three
prompt settings repeat the same items, so an item is ingested once per (id_string, split);
the split comes from the file name (``zero_test.json`` -> ``test``).

Each item becomes:

* ``Argument`` (state 1, text = ``P``) and ``Argument'`` (an ``Argument`` with state 2,
  text = ``output``), both with ``qtype`` = the relation name (``model.CLOMO_RELATIONS``
  from ``qtype`` 0..3), ``id_string`` and ``split``; ``COUNTERFACTUAL_OF`` Argument' -> Argument;
* ``Statement`` nodes (id from the text, so a statement the modification left unchanged is
  one node in both arguments) with ``PART_OF`` (``order`` = the StatementN number);
* ``Premise`` nodes from ``O`` (Premise1) and ``Om`` (Premise2) with their ``Premise1:`` /
  ``Premise2:`` prefixes removed; the logical relation Premise1 -> Argument (``state`` 1)
  and Premise2 -> Argument' (``state`` 2).

The question stem ``Q`` and the prompt text are not stored (no declared property holds them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eventkg.graphstore.model import CLOMO_RELATIONS
from eventkg.ingest.errors import BadRowError, RowError
from eventkg.ingest.nodes import edge_row, node_row
from eventkg.ingest.pipeline import (
    DEFAULT_BATCH_SIZE,
    IngestReport,
    Progress,
    Reject,
    Row,
    read_json_document,
    resolve_files,
    run,
)

SOURCE = "clomo"
FILE_NAME = re.compile(r"^(?P<prompt>zero|few|cot)_(?P<split>\w+)$", re.IGNORECASE)
STATEMENT = re.compile(r"Statement\s*(\d+)\s*:\s*")
PREMISE = {1: re.compile(r"^\s*Premise\s*1\s*:\s*", re.IGNORECASE), 2: re.compile(r"^\s*Premise\s*2\s*:\s*", re.IGNORECASE)}


def _accept(p: Path) -> bool:
    return p.suffix == ".json" and bool(FILE_NAME.match(p.stem))


def find_files(path: str | Path) -> list[Path]:
    return resolve_files(path, "CLoMo", _accept, "zero_<split>.json, few_<split>.json, cot_<split>.json")


def split_of(path: Path) -> str:
    m = FILE_NAME.match(path.stem)
    return m["split"].lower() if m else path.stem


def statements(text: str) -> list[tuple[int, str]]:
    """``"Statement1: a. Statement2: b."`` -> ``[(1, "a."), (2, "b.")]``; unmarked text is statement 1."""
    parts = STATEMENT.split(text)
    if len(parts) == 1:
        return [(1, text.strip())] if text.strip() else []
    out = []
    for i in range(1, len(parts) - 1, 2):
        body = parts[i + 1].strip()
        if body:
            out.append((int(parts[i]), body))
    return out


def item_row(obj: Any, split: str) -> Row:
    """One CLoMo item -> typed rows; raises RowError with the reason when invalid."""
    if not isinstance(obj, dict):
        raise RowError("expected a JSON object")
    missing = [f for f in ("id_string", "qtype", "output", "input_info") if obj.get(f) in (None, "")]
    info = obj.get("input_info")
    if isinstance(info, dict):
        missing += [f"input_info.{f}" for f in ("P", "O", "Om") if not isinstance(info.get(f), str) or not info[f].strip()]
    elif "input_info" not in missing:
        raise RowError("'input_info' is not an object")
    if missing:
        raise RowError(f"missing field {', '.join(repr(m) for m in missing)}")
    qtype = obj["qtype"]
    if not isinstance(qtype, int) or isinstance(qtype, bool) or not 0 <= qtype < len(CLOMO_RELATIONS):
        raise RowError(f"unknown relation qtype {qtype!r}; expected 0..3 ({', '.join(CLOMO_RELATIONS)})")
    rel = CLOMO_RELATIONS[qtype]
    ids = str(obj["id_string"])
    nodes: list[tuple[str, dict[str, Any]]] = []
    edges: list[tuple[str, dict[str, Any]]] = []
    args = {}
    for state, text in ((1, info["P"]), (2, obj["output"])):
        parts = statements(text)
        if not parts:
            raise RowError(f"{'input_info.P' if state == 1 else 'output'} holds no statements")
        arg = node_row("Argument", f"{SOURCE}|{split}|{ids}|{state}", SOURCE,
                       text=text.strip(), qtype=rel, id_string=ids, split=split, state=state)
        nodes.append(("Argument", arg))
        args[state] = arg["id"]
        for order, body in parts:
            st = node_row("Statement", body, SOURCE, text=body)
            nodes.append(("Statement", st))
            edges.append(("PART_OF", edge_row(st["id"], arg["id"], SOURCE, order=order)))
    for state, key in ((1, "O"), (2, "Om")):
        text = PREMISE[state].sub("", info[key]).strip()
        if not text:
            raise RowError(f"input_info.{key} holds no premise text")
        prem = node_row("Premise", text, SOURCE, text=text)
        nodes.append(("Premise", prem))
        edges.append((rel, edge_row(prem["id"], args[state], SOURCE, state=state)))
    edges.append(("COUNTERFACTUAL_OF", edge_row(args[2], args[1], SOURCE)))
    return Row(nodes, edges)


def iter_rows(files: list[Path]) -> Iterator[Row | Reject]:
    seen: set[tuple[str, str]] = set()
    for path in files:
        data = read_json_document(path)
        if not isinstance(data, list):
            raise BadRowError(str(path), None, "expected a JSON list of CLoMo items")
        if not data:
            yield Reject(str(path), 0, "empty file: no items")
        split = split_of(path)
        for i, obj in enumerate(data):
            key = (str(obj.get("id_string")), split) if isinstance(obj, dict) else None
            if key is not None and key in seen and obj.get("id_string") is not None:
                yield Row([], [])  # the same item in another prompt setting
                continue
            try:
                row = item_row(obj, split)
            except RowError as exc:
                yield Reject(str(path), f"item {i}", str(exc), obj)
                continue
            if key is not None:
                seen.add(key)
            yield row


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
    """Ingest CLoMo files at ``path`` (file or folder) into ``store``."""
    files = find_files(path)
    return run(store, SOURCE, files, iter_rows(files), on_error=on_error, rejects=rejects, limit=limit,
               batch_size=batch_size, progress=progress)
