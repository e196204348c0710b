"""EV²-format question files read for the audit: one :class:`Item` per row, whatever wrote it.

A row is CEC when its choices are events (four of them, the answer in ``e1``), CRR when they
are a relation family plus ``Vague`` (the answer in ``rel``). Instance rows show each event
through its sentence in ``instances``; the audit reads those texts, as a model would. A row
the audit cannot read stops it with one line naming the file, the line and the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eventkg.graphstore.model import FAMILIES, VAGUE
from eventkg.queries.errors import AuditError

CRR_LABELS = {r for pair in FAMILIES.values() for r in pair} | {VAGUE}


@dataclass
class Item:
    """One question as a model would see it, plus its gold."""

    qid: str
    task: str  # CEC or CRR
    level: str  # schema or instance
    e0: str  # the queried event, as shown
    e1: str  # CRR: the second event; CEC: the answer
    rel: str
    question: str
    context: str
    choices: list[str]  # the choices as shown (CEC: event texts; CRR: relation names)
    gold: int  # index of the answer in choices
    choice_keys: list[str] = field(default_factory=list)  # CEC: the events' names in the row
    context_triples: list[tuple[str, str, str]] = field(default_factory=list)  # as shown (texts)
    e0_key: str = ""
    choice_types: list[str] = field(default_factory=list)  # CEC: the choices' schema names (store look-up)
    e0_type: str = ""  # the queried event's schema name
    e1_type: str = ""  # CRR: the second event's schema name
    index: int = 0  # position in its file

    @property
    def family(self) -> str:
        """CRR: the asked family's first member (the choices name it)."""
        return self.choices[0]


def _text(name: str, row: dict[str, Any]) -> str:
    """What a model sees for ``name``: the instance sentence, else the event name in words."""
    inst = row.get("instances") or {}
    got = inst.get(name) if isinstance(inst, dict) else None
    return got if isinstance(got, str) and got.strip() else name.replace("_", " ")


def read_items(path: str | Path) -> list[Item]:
    """The questions of one EV² JSON-lines file (CEC or CRR, schema or instance).

    Args:
        path: the file.

    Returns:
        One :class:`Item` per non-empty line, in file order.

    Raises:
        AuditError: the file cannot be read, or a line is not an EV² question (file:line: reason).
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise AuditError(f"{path}: cannot read it ({exc})") from None
    items = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            items.append(_item(json.loads(line)))
            items[-1].index = len(items) - 1
        except (ValueError, KeyError, TypeError) as exc:
            why = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
            raise AuditError(f"{path}:{no}: not an EV² question ({why})") from None
    if not items:
        raise AuditError(f"{path}: no questions in it")
    if len({(i.task, i.level) for i in items}) > 1:
        raise AuditError(f"{path}: mixes tasks or levels; audit one kind of question per file")
    return items


def _item(row: dict[str, Any]) -> Item:
    if not isinstance(row, dict):
        raise ValueError("a line is not a JSON object")
    choices = row["choices"]
    if not (isinstance(choices, list) and len(choices) >= 2 and all(isinstance(c, str) for c in choices)):
        raise ValueError("'choices' is not a list of at least two strings")
    level = "instance" if row.get("instances") else "schema"
    ctx = row.get("context_tpl") or []
    triples = [(_text(h, row), r, _text(t, row)) for h, r, t in ctx]
    types = row.get("event_type") if isinstance(row.get("event_type"), dict) else {}
    common = dict(qid=str(row["id"]), level=level, rel=row["rel"], question=str(row.get("question") or ""),
                  context=str(row.get("context") or ""), context_triples=triples, e0_key=row["e0"],
                  e0_type=types.get(row["e0"], row["e0"]), e1_type=types.get(row["e1"], row["e1"]))
    if set(choices) <= CRR_LABELS:
        if row["rel"] not in choices:
            raise ValueError(f"CRR answer {row['rel']!r} is not among the choices")
        return Item(task="CRR", e0=_text(row["e0"], row), e1=_text(row["e1"], row), choices=list(choices),
                    gold=choices.index(row["rel"]), **common)
    if row["e1"] not in choices:
        raise ValueError(f"CEC answer {row['e1']!r} is not among the choices")
    return Item(task="CEC", e0=_text(row["e0"], row), e1=_text(row["e1"], row),
                choices=[_text(c, row) for c in choices], gold=choices.index(row["e1"]), choice_keys=list(choices),
                choice_types=[types.get(c, c) for c in choices],
                **common)
