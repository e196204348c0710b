"""``kg-rag``: answers EV² questions from the retrieved facts of a ``--style rag`` prompt alone.

It reads the fact lines of the prompt (``- ("head", Relation, "tail")``, parsed back with
:func:`eventkg.queries.retrieval.facts.parse_facts`) and the gold event type of each candidate
(the item's ``event_type``), and nothing else: no graph, no question text. CEC: the choice whose
type is the far end of the first fact of the asked relation (either spelling). CRR: the first
fact joining the type of ``e1`` with a relation of the choices' family, read from ``e0``'s side.
Where the facts decide nothing it abstains (scored wrong). Beside the models of a report it is
the ceiling of the retrieved knowledge: what a reader that trusts the facts gets from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventkg.tasks.errors import TaskError
from eventkg.tasks.models.base import Completion, Model, Request

NO_ANSWER = "I cannot tell."


def _crr(facts: list[tuple[str, str, str]], doc: dict[str, Any], choices: list[str]) -> str | None:
    from eventkg.graphstore.model import normalise_text
    from eventkg.queries.retrieval.scoring import canonical_triple

    t1 = normalise_text((doc.get("event_type") or {}).get(doc.get("e1"), ""))
    if not t1:
        return None
    for f in map(canonical_triple, facts):
        for rel in choices:
            if rel == "Vague":
                continue
            probe = canonical_triple(("headsentinel", rel, "tailsentinel"))  # where e1's type sits when stored
            if f[1] == probe[1] and (f[2] if probe[2] == "tailsentinel" else f[0]) == t1:
                return rel
    return None


class KGRagModel(Model):
    """The retrieved facts' answer (module docstring); abstains where they decide nothing."""

    name = "kg-rag"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name,
                "sees": "the fact lines of the prompt and each candidate's event type; abstains where they decide nothing"}

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        from eventkg.queries.retrieval.facts import parse_facts
        from eventkg.tasks.base import letters
        from eventkg.tasks.rag import choose_from_facts

        out = []
        for req in requests:
            item, task = req.item, req.task
            if item is None or task is None or task.name not in ("ev2-cec", "ev2-crr"):
                raise TaskError("kg-rag answers EV² CEC and CRR questions (eventkg eval ev2-cec|ev2-crr --style rag)")
            facts = parse_facts(req.prompt)
            choices = list(item.choices or [])
            if task.name == "ev2-cec":
                types = item.doc.get("event_type") or {}
                got = choose_from_facts(facts, str(item.doc.get("rel")), {c: types[c] for c in choices if c in types})
            else:
                got = _crr(facts, item.doc, choices)
            out.append(Completion(letters(len(choices))[choices.index(got)] if got in choices else NO_ANSWER))
        return out
