"""A user's own prompt template (``--template FILE``), for prompts no release publishes as code.

The paper's CoT guidance (EV², Figure 11) exists only as a figure: a user copies it into a text
file with placeholders, and eventkg fills them per question. The file is a :class:`string.Template`:
``$name`` or ``${name}`` is replaced, ``$$`` is a dollar sign, and the text is sent exactly as
written (no trailing newline added or removed). Placeholders of the EV² CEC and CRR tasks:

==================  ======================================================================
``$instruction``    eventkg's instruction line ("Answer the question by choosing one of A, B, C, D.")
``$instances``      each instance event as ``eventN:`` then its sentence, one per line (empty at schema level)
``$context``        the question's context sentences (empty when it has none)
``$question``       the question as stored
``$choices``        one ``X. choice`` line per choice (CRR: the relation sentences)
``$letters``        the choice letters, ``A, B, C, D`` or ``A, B, C``
``$event_types``    ``eventN: type`` per instance event (the gold types; empty at schema level)
``$e0``, ``$e1``    the question's head event; CRR's tail event (empty for CEC, whose tail is the answer)
==================  ======================================================================

An unknown placeholder or a stray ``$`` is refused with the file, line and name.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from eventkg.tasks.errors import TaskError

#: the placeholders a template may use, and what each holds
TEMPLATE_FIELDS = {
    "instruction": "eventkg's instruction line naming the choice letters",
    "instances": "eventN: and its sentence per instance event",
    "context": "the context sentences",
    "question": "the question",
    "choices": "one 'X. choice' line per choice",
    "letters": "the choice letters, comma-separated",
    "event_types": "eventN: type per instance event",
    "e0": "the head event",
    "e1": "CRR's tail event",
}


class UserTemplate:
    """A template file checked once: every placeholder known, no stray ``$``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TaskError(f"--template {self.path}: cannot read it ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise TaskError(f"--template {self.path}: not UTF-8 text") from None
        self.template = Template(text)
        for m in self.template.pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            if m.group("invalid") is not None:
                raise TaskError(f"{self.path}:{line}: a '$' that starts no placeholder (write $$ for a dollar sign)")
            name = m.group("named") or m.group("braced")
            if name is not None and name not in TEMPLATE_FIELDS:
                raise TaskError(f"{self.path}:{line}: unknown placeholder ${name}; known: "
                                + ", ".join(f"${k}" for k in TEMPLATE_FIELDS))

    def render(self, fields: dict[str, str]) -> str:
        """The prompt: the file's text with every placeholder filled."""
        return self.template.substitute(fields)
