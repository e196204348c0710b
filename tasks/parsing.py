"""Reading answers out of what models really write.

A parser commits only when the text does: ``'B'``, ``'B.'``, ``'(B) event32'``,
``'The answer is B'``, ``'b'``, the text of one choice, or a chain of thought whose last
answer line names one choice. Anything else is ``None`` (unparseable) and is scored as
such — never guessed.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

_ANSWER_CUE = re.compile(
    r"(?:final\s+answer|correct\s+answer|the\s+answer|answer|choice|option)\s*(?:is|would\s+be|:|=|-)\s*:?\s*",
    re.IGNORECASE,
)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("_", " ").replace("\\", "").lower()).strip(" \t\n\"'`*")


def _letter_at_start(text: str, n: int) -> int | None:
    """A choice letter opening ``text``: 'B', 'B.', 'B)', 'B:', '(B) ...', '**B**', 'b' alone."""
    t = text.strip().lstrip("*#>- ").strip()
    valid = "ABCDEFGHIJ"[:n]
    m = re.match(r"^\(([A-Ja-j])\)", t) or re.match(r"^\[([A-Ja-j])\]", t)
    if m and m.group(1).upper() in valid:
        return valid.index(m.group(1).upper())
    m = re.match(r"^([A-J])(?:[.):]|\*\*|\s*$)", t)  # upper case: 'B', 'B.', 'B)', 'B:'
    if m and m.group(1) in valid:
        return valid.index(m.group(1))
    m = re.match(r"^([a-j])(?:[.):]?\s*$|[):])", t)  # lower case only alone or with ')'/':'
    if m and m.group(1).upper() in valid:
        return valid.index(m.group(1).upper())
    return None


def _text_match(text: str, aliases: Sequence[Sequence[str]]) -> int | None:
    """The one choice whose text (or an alias) appears in ``text``; None if zero or several."""
    t = _norm(text)
    hits = set()
    for i, names in enumerate(aliases):
        for name in names:
            nm = _norm(name)
            if nm and re.search(rf"(?<![\w]){re.escape(nm)}(?![\w])", t):
                hits.add(i)
                break
    return hits.pop() if len(hits) == 1 else None


def _exact_text(text: str, aliases: Sequence[Sequence[str]]) -> int | None:
    t = _norm(text).rstrip(".")
    for i, names in enumerate(aliases):
        if any(t == _norm(name).rstrip(".") for name in names if name):
            return i
    return None


def parse_choice(response: str, aliases: Sequence[Sequence[str]]) -> int | None:
    """The index of the choice the response commits to, else ``None``.

    ``aliases[i]`` lists the spellings of choice ``i`` (its text, rendered sentence...).
    Order: an explicit answer cue (last one wins, so a CoT's conclusion counts), a letter
    or exact choice text as the whole answer, the last line, then a unique text mention.
    """
    if not response or not response.strip():
        return None
    n = len(aliases)
    text = response.strip()
    cues = list(_ANSWER_CUE.finditer(text))
    for cue in reversed(cues):
        tail = text[cue.end():].strip()
        line = tail.splitlines()[0] if tail else ""
        for candidate in (line, tail):
            if (i := _letter_at_start(candidate, n)) is not None:
                return i
            if (i := _exact_text(candidate, aliases)) is not None:
                return i
        if (i := _text_match(line, aliases)) is not None:
            return i
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) == 1:
        if (i := _letter_at_start(text, n)) is not None:
            return i
        if (i := _exact_text(text, aliases)) is not None:
            return i
        return _text_match(text, aliases)
    last, first = lines[-1], lines[0]
    if (i := _letter_at_start(last, n)) is not None:
        return i
    if len(first) <= 40 and (i := _letter_at_start(first, n)) is not None:  # 'B\n\nBecause ...'
        return i
    if (i := _exact_text(last, aliases)) is not None:
        return i
    return _text_match(last, aliases)


_YES = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(response: str) -> bool | None:
    """``True``/``False`` for a committed yes/no; ``None`` when absent or contradictory."""
    if not response or not response.strip():
        return None
    text = response.strip()
    cue = list(re.finditer(r"(?:answer|verdict|conclusion)\s*(?:is|:)\s*\**\s*\"?(yes|no)\b", text, re.IGNORECASE))
    if cue:
        return cue[-1].group(1).lower() == "yes"
    first = _YES.match(text.lstrip("*\"' "))
    if first:
        words = {m.group(1).lower() for m in _YES.finditer(text.splitlines()[0])}
        return first.group(1).lower() == "yes" if len(words) == 1 else None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    words = {m.group(1).lower() for m in _YES.finditer(lines[-1])} if lines else set()
    if len(words) == 1:
        return words.pop() == "yes"
    return None


def parse_json_object(response: str) -> dict[str, Any] | None:
    """The first JSON (or Python-literal) object in the text, e.g. inside a ```json fence."""
    if not response:
        return None
    start = response.find("{")
    while start != -1:
        depth = 0
        for j in range(start, len(response)):
            c = response[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    blob = response[start : j + 1]
                    for loader in (json.loads, ast.literal_eval):
                        try:
                            value = loader(blob)
                        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                            continue
                        if isinstance(value, dict):
                            return value
                    break
        start = response.find("{", start + 1)
    return None


def first_line(response: str, markers: Sequence[str] = ()) -> str:
    """The generated text proper: after the last marker (e.g. ``Argument':``) else the first line."""
    text = (response or "").strip()
    for marker in markers:
        idx = text.lower().rfind(marker.lower())
        if idx != -1:
            text = text[idx + len(marker):].strip()
            break
    return text.splitlines()[0].strip() if text else ""
