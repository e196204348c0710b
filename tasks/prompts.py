"""Prompt templates of eventkg's own wording, laid out like the papers' prompts.

Each task family keeps its templates in its own ``prompts/`` folder (``tasks/ev2/prompts/plain.txt``),
``.txt`` files with ``$name`` placeholders (:class:`string.Template`), so JSON examples with braces
need no escaping. Optional sections are rendered by the task and passed in (empty string when absent).
"""

from __future__ import annotations

import importlib.resources
import re
from functools import cache
from string import Template


@cache
def template(family: str, name: str) -> Template:
    """Template ``name`` of the family package ``family`` (``eventkg.tasks.ev2``): its ``prompts/<name>.txt``."""
    return Template((importlib.resources.files(family) / "prompts" / f"{name}.txt").read_text(encoding="utf-8"))


def render(family: str, name: str, **fields: str) -> str:
    """Fill template ``name`` of ``family``; blank runs left by empty sections collapse to one blank line."""
    text = template(family, name).substitute(**fields)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def section(title: str, body: str) -> str:
    """``### Title:`` followed by the body, or nothing when the body is empty."""
    return f"### {title}:\n{body.strip()}\n" if body and body.strip() else ""
