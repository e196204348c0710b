"""The answer parser reads what models really write and never guesses."""

from __future__ import annotations

import json

import pytest

from eventkg.tasks.parsing import parse_choice, parse_json_object, parse_yes_no

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


# --- the released rules (EV² src/metrics.py metrics_rq12, CLoMo SES/ses.py, AbsPyramid) -------

from eventkg.tasks.parsing import (  # noqa: E402
    ev2_fallback_texts,
    generated_line,
    released_choice,
    released_choice_index,
    released_first_line,
    released_json,
    released_yes_no,
    simpson,
)

CEC_FALLBACK = ["A", "B", "C", "D"]  # what the release hands metrics_rq12 as CEC "choices"


@pytest.mark.parametrize(
    ("reply", "expected", "why"),
    [
        ("B. event32", 1, "starts with 'B.'"),
        ("  C.", 2, "stripped first"),
        ("(B)", 1, "no 'X.' or 'X,' anywhere, then '(B)'"),
        ("B", 1, "exactly a letter"),
        ("Answer: D, not A.", 0, "the first capital-dot anywhere ('A.') wins over 'D,' and over the cue"),
        ("We ruled out the USA. So C", 0, "'A.' inside 'USA.' is a capital-dot: A"),
        ("I.", 0, "a capital-dot past H counts as A"),
        ("D, surely", 3, "no capital-dot, then the first 'X,'"),
        ("the correct answer is c", 2, "the answer cue, any case"),
        ("The answer is Because of event13", 1, "the cue takes the 'B' of 'Because' (case-insensitive)"),
        ("the option should be d", 3, "'should be' cue"),
        ("b", 0, "a lower-case letter is not a label: Simpson with A-D is 0 everywhere, so A"),
        ("event53 follows from the testimony", 0, "prose: no letter token overlaps, so A"),
        ("I pick C or D", 2, "Simpson: tokens C and D both overlap 1/1, the first max wins"),
        ("", 0, "an empty reply never abstains: A"),
    ],
)
def test_released_cec_cascade(reply: str, expected: int, why: str) -> None:
    assert released_choice_index(reply, CEC_FALLBACK) == expected, why


def test_released_cascade_differs_from_the_committed_parser() -> None:
    # old rule (parse_choice, the default before) vs the release, on the same replies
    choices = [["event13"], ["event32"], ["event53"], ["event90"]]
    replies = ["Answer: D, not A.", "b", "event53 follows from the testimony", "(B)"]
    gold = [3, 1, 2, 1]
    old = [parse_choice(r, choices) for r in replies]  # abstains on the first (two letters), reads the rest
    new = [released_choice_index(r, CEC_FALLBACK) for r in replies]  # never abstains
    assert old == [None, 1, 2, 1] and new == [0, 0, 0, 1]
    assert sum(o == g for o, g in zip(old, gold, strict=True)) / 4 == 0.75  # old accuracy 3/4
    assert sum(n == g for n, g in zip(new, gold, strict=True)) / 4 == 0.25  # released accuracy 1/4


def test_crr_fallback_is_the_release_sentences_and_simpson() -> None:
    question = 'Is "have_party" "Causes", "IsResult" or "Vague" "winning"?'
    texts = ev2_fallback_texts("CRR", question, ["Causes", "IsResult", "Vague"])
    assert texts == ['"have_party" causes "winning".', '"have_party" is result of "winning".',
                     'There is no obvious causal relationship between "have_party" and "winning".']
    hier = ev2_fallback_texts("CRR", 'Is "a" "HasSubevent", "IsSubevent" or "Vague" "b"?', ["HasSubevent", "IsSubevent", "Vague"])
    assert hier[0] == '"b" is subevent of "a".'  # HasSubevent: e1 is a subevent of e0
    reply = 'I believe "have_party" is result of "winning"'  # 7 tokens, no letter pattern
    # overlaps: {"have_party"} 1/min(3,7)=1/3; {"have_party",is,result,of} 4/min(5,7)=0.8;
    # {is,"have_party"} 2/min(10,7)=2/7 ('"winning".' keeps its period, so it never matches)
    assert simpson(texts[0], reply) == pytest.approx(1 / 3)
    assert simpson(texts[1], reply) == pytest.approx(0.8)
    assert simpson(texts[2], reply) == pytest.approx(2 / 7)
    assert released_choice(reply, "CRR", question, ["Causes", "IsResult", "Vague"]) == 1
    assert released_choice("no idea", "CRR", question, ["Causes", "IsResult", "Vague"]) == 2  # 'no' only in Vague: 1/2
    assert released_choice("D", "CRR", question, ["Causes", "IsResult", "Vague"]) is None  # a label past the last choice
    assert ev2_fallback_texts("CRR", question, ["IsResult", "Causes", "Vague"]) == []  # not the release's order


def test_released_yes_no_is_a_prefix_rule() -> None:
    assert released_yes_no(" Yes, it does.") == 1 and released_yes_no("no") == 0
    assert released_yes_no("Not at all.") == 0 and released_yes_no("Nothing here supports it") == 0  # 'no' prefix
    assert released_yes_no("Answer: yes") is None  # the committed parser said yes
    assert parse_yes_no("Answer: yes") is True
    assert released_yes_no("Let me think. ... So yes.") is None and released_yes_no("") is None


def test_first_lines_as_the_releases_read_them() -> None:
    assert released_first_line("Argument': Statement1: x\nbecause ...") == "Argument': Statement1: x"
    assert released_first_line("\nStatement1: x") == ""  # a blank first line is an empty argument
    assert generated_line("\n  Legal Proceeding.  \nmore") == "Legal Proceeding."  # as written
    assert generated_line("   ") == ""


def test_released_json_reads_only_what_json_loads_reads() -> None:
    body = '{"event_type": {"e1": "talk"}, "event_relation": [["talk", "Causes", "kill"]]}'
    assert released_json(f"Here:\n```json\n{body}\n```") == json.loads(body)
    assert released_json(body) == json.loads(body)
    assert released_json(f"Here: {body}") is None  # prose around bare JSON: json.loads fails
    assert parse_json_object(f"Here: {body}") == json.loads(body)  # the committed parser finds it
    assert released_json("{'event_type': {'e1': 'talk'}, 'event_relation': []}") is None  # not JSON
    assert released_json('{"event type": {"e1": "talk"}, "event relation": []}') is None  # keys as the prompt spelled them
    assert released_json('{"event_type": {}, "event_relation": []}') is None  # empty weighs nothing
