"""Prompt templates of eventkg's own wording, laid out like the papers' prompts.

Each template is a ``.txt`` file beside this module using ``$name`` placeholders
(:class:`string.Template`), so JSON examples with braces need no escaping. Optional
sections are rendered by the task and passed in (empty string when absent).
"""

from __future__ import annotations

import importlib.resources
import re
from functools import cache
from string import Template

HERE = importlib.resources.files(__package__)


@cache
def template(name: str) -> Template:
    return Template((HERE / f"{name}.txt").read_text(encoding="utf-8"))


def render(name: str, **fields: str) -> str:
    """Fill template ``name``; blank runs left by empty sections collapse to one blank line."""
    text = template(name).substitute(**fields)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def section(title: str, body: str) -> str:
    """``### Title:`` followed by the body, or nothing when the body is empty."""
    return f"### {title}:\n{body.strip()}\n" if body and body.strip() else ""
