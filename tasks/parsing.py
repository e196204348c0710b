"""Reading answers out of what models really write.

Two families live here:

* the released scorers' rules, the defaults wherever a paper's number is reproduced:
  :func:`released_choice` (EV² ``src/metrics.py``, ``metrics_rq12``), :func:`released_json`
  (EV² ``metrics_rq3``), :func:`released_yes_no` and :func:`released_first_line` (CLoMo
  ``SES/ses.py``), :func:`generated_line` (AbsPyramid ``generator_main.py``);
* eventkg's own committed-answer parsers (:func:`parse_choice`, :func:`parse_yes_no`,
  :func:`parse_json_object`): they commit only when the text does and return ``None``
  otherwise. They are not any release's rule; use them where no release defines one
  (AbsPyramid detection) or to count how often a model commits at all.
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


# --- released rules ------------------------------------------------------------------------

#: EV²'s label table: A..H, whatever the number of choices (a letter past the last choice is
#: simply a wrong answer there).
_EV2_LETTERS = "ABCDEFGH"
_CAP_DOT, _CAP_COMMA, _CAP_PAREN = re.compile(r"[A-Z]\."), re.compile(r"[A-Z],"), re.compile(r"\([A-Z]\)")
_ANSWER_IS = re.compile(r"the(?: correct)? answer is[\s:]+([ABCDEFGH])", re.IGNORECASE)
_SHOULD_BE = re.compile(r"the(?: correct)? (?:option|answer) should be[\s:]+([ABCDEFGH])", re.IGNORECASE)


def simpson(text1: str, text2: str) -> float:
    """Simpson overlap of two whitespace token sets (case kept): |A∩B| / min(|A|, |B|); 0 if either is empty."""
    a, b = set(text1.split()), set(text2.split())
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def released_choice_index(response: str | None, fallback: Sequence[str]) -> int:
    """The label index EV²'s ``metrics_rq12`` reads from a reply (0 = A); it never abstains.

    In order, on the stripped reply: it starts with ``X.`` (X in A..H); else the first
    ``[A-Z].`` anywhere, then the first ``[A-Z],``, then the first ``([A-Z])`` (a capital past
    H counts as A); the reply is exactly one of A..H; "the (correct) answer is X" or "the
    (correct) option/answer should be X" (any case); else the ``fallback`` text with the best
    :func:`simpson` overlap with the reply, the first on ties (so A when nothing overlaps).
    ``fallback`` is what the release compares against: ``A``..``D`` for CEC, its own choice
    sentences for CRR (:func:`ev2_fallback_texts`).
    """
    pred = (response or "").strip()
    for i, k in enumerate(_EV2_LETTERS):
        if pred.startswith(f"{k}."):
            return i
    for pattern, group in ((_CAP_DOT, 0), (_CAP_COMMA, 0), (_CAP_PAREN, 1)):
        m = pattern.search(pred)
        if m:
            letter = m.group(0)[group]
            return _EV2_LETTERS.index(letter) if letter in _EV2_LETTERS else 0
    if pred in _EV2_LETTERS and len(pred) == 1:
        return _EV2_LETTERS.index(pred)
    for pattern in (_ANSWER_IS, _SHOULD_BE):
        m = pattern.search(pred)
        if m:
            return _EV2_LETTERS.index(m.group(1)[-1].upper())
    scores = [simpson(c, pred) for c in fallback]
    return max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores else 0


_CRR_SENTENCES = {
    ("Causes", "IsResult", "Vague"): ("{0} causes {1}.", "{0} is result of {1}.",
                                      "There is no obvious causal relationship between {0} and {1}."),
    ("Before", "After", "Vague"): ("{0} is before {1}.", "{0} is after {1}.",
                                   "There is no obvious temporal relationship between {0} and {1}."),
    ("HasSubevent", "IsSubevent", "Vague"): ("{1} is subevent of {0}.", "{0} is subevent of {1}.",
                                             "There is no obvious subordinate relationship between {0} and {1}."),
}


def ev2_fallback_texts(task: str, question: str, choices: Sequence[str]) -> list[str]:
    """The texts EV²'s scorer gives the Simpson fallback: the letters ``A``-``D`` for CEC; for
    CRR the release's choice sentences, built from the question's second word (``e0``, quotes
    kept) and its last word less its last character (``e1``), in the release's fixed order of a
    family (any other choice list gives none, and the fallback answers A)."""
    if task.upper() == "CEC":
        return ["A", "B", "C", "D"]
    words = (question or "").split()
    pattern = _CRR_SENTENCES.get(tuple(choices))
    if len(words) < 2 or pattern is None:
        return []
    e0, e1 = words[1], words[-1][:-1]
    return [p.format(e0, e1) for p in pattern]


def released_choice(response: str | None, task: str, question: str, choices: Sequence[str]) -> int | None:
    """EV²'s released reading of a CEC/CRR reply as an index into ``choices``; ``None`` only
    when the letter it reads lies past the last choice (wrong there too, as it matches no gold)."""
    i = released_choice_index(response, ev2_fallback_texts(task, question, choices))
    return i if i < len(choices) else None


_JSON_FENCE = re.compile(r"```json\s*(.+)\s*```", re.DOTALL)


def released_json(response: str | None) -> dict[str, Any] | None:
    """EV²'s ``metrics_rq3`` reading of an alignment reply, else ``None`` (no weight there).

    The text inside a json code fence (greedy: up to the last fence) or else the whole reply,
    through ``json.loads`` only; it must be an object whose ``event_type`` is an object and
    whose ``event_relation`` is a list. Anything else, or both empty, is unparsed.
    """
    text = response or ""
    m = _JSON_FENCE.search(text)
    if m:
        text = m.group(1)
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("event_type"), dict) or not isinstance(obj.get("event_relation"), list):
        return None
    if not obj["event_type"] and not obj["event_relation"]:
        return None
    return {"event_type": obj["event_type"], "event_relation": obj["event_relation"]}


def released_yes_no(response: str | None) -> int | None:
    """CLoMo ``SES/ses.py``: 1 when the lower-cased, stripped reply starts with ``yes``, 0 when it
    starts with ``no`` (``"Not really"``, ``"None"`` too), ``None`` otherwise (a reply that
    reasons first, ``"Answer: yes"``...)."""
    t = (response or "").lower().strip()
    if t.startswith("yes"):
        return 1
    if t.startswith("no"):
        return 0
    return None


def released_first_line(response: str | None) -> str:
    """CLoMo ``SES/ses.py``'s modified argument: the reply's first line as written, stripped
    (empty when the reply is empty or opens with a blank line)."""
    return (response or "").split("\n")[0].strip()


def generated_line(response: str | None) -> str:
    """AbsPyramid ``generator_main.py``'s prediction: the first non-empty line, stripped, as
    written (no case folding, no label or punctuation stripping); empty for an empty reply."""
    lines = [ln.strip() for ln in (response or "").split("\n") if ln.strip()]
    return lines[0] if lines else ""
