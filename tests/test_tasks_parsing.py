"""The answer parser reads what models really write and never guesses."""

from __future__ import annotations

import pytest

from tasks.parsing import parse_choice, parse_json_object, parse_yes_no

CHOICES = [["event13"], ["event32"], ["event53"], ["event90"]]
COT = """Let us look at the event types.
A. event13 - [escape] does not follow from the testimony.
B. event32 - [confess] is plausible but indirect.
C. event53 - [kill] follows from fear of exposure.
Therefore the answer is C."""


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("B", 1), ("B.", 1), ("(B) event32", 1), ("The answer is B", 1), ("b", 1), ("answer: (d)", 3),
        ("event53", 2), ("The answer is event90.", 3), ("**C**", 2), (COT, 2),
        ("Given the context...\nA. event13 - no\nB. event32 - no\n\nThe correct choice:\nD. event90", 3),
        ("B\n\nBecause event13 happened first.", 1),
    ],
)
def test_parses_real_answers(response: str, expected: int) -> None:
    assert parse_choice(response, CHOICES) == expected


@pytest.mark.parametrize("response", ["", "   ", "I am not sure.", "event13 or event32", "E", "A lot depends on it",
                                      "event3", "maybe the first one"])
def test_unparseable_is_none(response: str) -> None:
    assert parse_choice(response, CHOICES) is None


def test_crr_sentences_and_relation_names() -> None:
    aliases = [["Causes", '"a" causes "b".', "causes"], ["IsResult", '"a" is a result of "b".', "is result of"],
               ["Vague", 'There is no obvious causal relationship between "a" and "b".', "no obvious"]]
    assert parse_choice("IsResult", aliases) == 1
    assert parse_choice('"a" causes "b".', aliases) == 0
    assert parse_choice("There is no obvious causal relationship between them", aliases) == 2
    assert parse_choice("C", aliases) == 2 and parse_choice("D", aliases) is None


def test_yes_no_and_json() -> None:
    assert parse_yes_no("Yes") is True and parse_yes_no("no.") is False
    assert parse_yes_no("Step 1... step 2...\nAnswer: no") is False
    assert parse_yes_no("Yes and no") is None and parse_yes_no("hard to say") is None
    obj = parse_json_object('Here:\n```json\n{"event_type": {"e1": "talk"}, "event_relation": [["talk", "Causes", "kill"]]}\n```')
    assert obj == {"event_type": {"e1": "talk"}, "event_relation": [["talk", "Causes", "kill"]]}
    assert parse_json_object("{'event_type': {'e1': 'talk'}}") == {"event_type": {"e1": "talk"}}
    assert parse_json_object("no json here {") is None
