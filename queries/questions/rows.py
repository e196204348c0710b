"""What a generated question is: the EV² row templates, the result type and the errors.

Shared by construction (:mod:`eventkg.queries.questions.build` and its CEC and CRR builders), storage
(:mod:`eventkg.queries.questions.store`) and the graph's own check
(:func:`eventkg.queries.oracle.kg_oracle_answer`); imports nothing else of the query layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from eventkg.graphstore.model import EVENT_LEVELS, FAMILIES, VAGUE
from eventkg.queries.errors import QuestionError  # noqa: F401 - importable from here as before

TASKS = ("CEC", "CRR")
LEVELS = EVENT_LEVELS  # the data model's event levels
SOURCE = "generated"

CEC_QUESTIONS: dict[str, str] = {
    "Causes": 'Which is result of "{e0}"?',
    "IsResult": 'Which is the cause of "{e0}"?',
    "Before": 'Which happened after "{e0}"?',
    "After": 'Which happened before "{e0}"?',
    "HasSubevent": 'Which is a subevent of "{e0}"?',
    "IsSubevent": 'Which event has the subevent of "{e0}"?',
}
CRR_QUESTION = 'Is "{e0}" "{a}", "{b}" or "Vague" "{e1}"?'
CRR_CHOICES: dict[str, list[str]] = {fam: [a, b, VAGUE] for fam, (a, b) in FAMILIES.items()}


class NegativeSource(Protocol):
    """Anything that proposes negative event ids (``eventkg.queries.negatives.nearest.NearestNegatives`` does)."""

    def sample(
        self, query_event_id: str, relation: str, answer_id: str, k: int = 3,
        exclude: set[str] = ..., rng: Any = None,
    ) -> list[str]: ...


@dataclass
class GeneratedQuestion:
    """One question: the EV² row plus the store ids behind the names it uses."""

    row: dict[str, Any]
    task: str
    level: str
    names: dict[str, str] = field(default_factory=dict)  # name in the row -> Event id in the store
    context_ids: list[str] = field(default_factory=list)  # context events, in order of appearance

    @property
    def answer(self) -> str:
        return self.row["e1"] if self.task == "CEC" else self.row["rel"]
