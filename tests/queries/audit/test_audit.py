"""The shortcut audit: each artifact planted in a clean file is found; with the gold shuffled, none is."""

from __future__ import annotations

import json
import random

import pytest

from eventkg.queries.audit.items import read_items
from eventkg.queries.audit.report import audit_files, plot, write_json
from eventkg.queries.errors import AuditError
from tests.support.question_files import N, cec_rows, random_event

PHRASE = {"Causes": "causes", "IsResult": "is a result of"}


def crr_rows(seed: int = 2, *, vague_share=1 / 3, related_similar=False, context_names=False,
             context_side=False) -> list[dict]:
    """CRR rows; ``context_names``: a related question's context states its answer's relation;
    ``context_side``: every context states Causes, with the queried event at the head when the answer is
    Causes, at the tail when IsResult, elsewhere when Vague (no word names the answer)."""
    rng = random.Random(seed)
    rows = []
    for i in range(N):
        e0 = random_event(rng)
        vague = rng.random() < vague_share
        rel = "Vague" if vague else rng.choice(["Causes", "IsResult"])
        e1 = f"{e0}_{random_event(rng, 1)}" if related_similar and not vague else random_event(rng)
        x, y = random_event(rng), random_event(rng)
        tpl = []
        if context_names and not vague:
            tpl = [[x, rel, e0]]
        elif context_side:
            tpl = [[e0, "Causes", x] if rel == "Causes" else [x, "Causes", e0] if rel == "IsResult" else [x, "Causes", y]]
        context = " ".join(f'"{h}" {PHRASE[r]} "{t}".' for h, r, t in tpl)
        rows.append({"id": f"{i}-0", "e0": e0, "rel": rel, "e1": e1, "context": context, "context_tpl": tpl,
                     "question": f'Is "{e0}" "Causes", "IsResult" or "Vague" "{e1}"?',
                     "choices": ["Causes", "IsResult", "Vague"]})
    return rows


def _write(tmp_path, name: str, rows: list[dict]):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _audit(tmp_path, rows, name="q.jsonl", **kw):
    return audit_files([_write(tmp_path, name, rows)], similarity=kw.pop("similarity", False), **kw)[0]


def _finding(audit, check):
    return next(f for f in audit.findings if f.check == check)


def test_clean_files_pass(tmp_path):
    for rows in (cec_rows(), crr_rows()):
        a = _audit(tmp_path, rows)
        assert a.passed, [f.as_dict() for f in a.findings if not f.passed]


@pytest.mark.parametrize(("plant", "check"), [
    ({"position0": True}, "position"),
    ({"marker": True}, "choice_only"),
    ({"longer": True}, "form_only"),
    ({"overlap": True}, "word_overlap_max"),
    ({"overlap": True}, "tfidf_overlap_max"),
    ({"hub": True}, "infile_degree_max"),
    ({"hub": True}, "infile_mentions_max"),
    ({"asked": True}, "infile_named_max"),
    ({"asked": True}, "infile_named_min"),
    ({"repeat": True}, "duplicates"),
])
def test_each_cec_artifact_is_found(tmp_path, plant, check):
    clean = _finding(_audit(tmp_path, cec_rows()), check)
    found = _finding(_audit(tmp_path, cec_rows(**plant)), check)
    assert clean.passed and not found.passed
    if check.endswith("_min"):  # elimination: the answer is never the least named
        assert found.score < 0.05
    elif check not in ("position", "duplicates"):
        assert found.score - found.chance > 0.3 and found.ci[0] > found.chance + 0.1


def test_similar_gold_is_found_by_the_sentence_model(tmp_path):
    a = _audit(tmp_path, cec_rows(similar=True), similarity=True)
    assert not _finding(a, "similar_to_event_max").passed
    assert not _finding(a, "similar_to_event_min").passed  # the gold is never the least similar
    clean = _audit(tmp_path, cec_rows(), similarity=True)
    assert _finding(clean, "similar_to_event_max").passed


def test_crr_label_prior_and_similarity_are_found(tmp_path):
    prior = _audit(tmp_path, crr_rows(vague_share=0.7))
    assert not _finding(prior, "label_prior").passed and not _finding(prior, "position").passed
    sim = _audit(tmp_path, crr_rows(related_similar=True), similarity=True)
    assert _finding(sim, "label_prior").passed
    assert not _finding(sim, "prior_similarity").passed and not _finding(sim, "prior_word_overlap").passed


@pytest.mark.parametrize(("plant", "checks"), [
    ({"context_names": True}, ("context_relation_word", "context_relations")),
    ({"context_side": True}, ("context_relations",)),
])
def test_crr_context_naming_the_answer_is_found(tmp_path, plant, checks):
    clean = _audit(tmp_path, crr_rows())
    found = _audit(tmp_path, crr_rows(**plant))
    for check in checks:
        assert _finding(clean, check).passed
        f = _finding(found, check)
        assert not f.passed and f.ci[0] > f.chance + 0.1, f.as_dict()
    if "context_relation_word" not in checks:  # the words name no answer here: only the classifier sees it
        assert _finding(found, "context_relation_word").passed


def _shuffled_positions(rng: random.Random, k: int) -> list[int]:
    """Each answer position equally often, in random order (a seeded draw may skew positions by chance)."""
    got = [i % k for i in range(N)]
    rng.shuffle(got)
    return got


def test_shuffled_gold_falls_to_chance(tmp_path):
    """Every artifact planted, then the gold moved to a random choice: no baseline may still see it."""
    rng = random.Random(5)
    rows = cec_rows(position0=True, marker=True, longer=True, overlap=True, hub=True, asked=True)
    for r, k in zip(rows, _shuffled_positions(rng, 4), strict=True):
        r["e1"] = r["choices"][k]
        r["negative_chosen"] = [c for c in r["choices"] if c != r["e1"]]
    a = _audit(tmp_path, rows, similarity=True)
    assert a.passed, [f.as_dict() for f in a.findings if not f.passed]
    crr = crr_rows(vague_share=0.7, related_similar=True, context_names=True)
    for r, k in zip(crr, _shuffled_positions(rng, 3), strict=True):
        r["rel"] = r["choices"][k]
    a = _audit(tmp_path, crr, similarity=True)
    assert a.passed, [f.as_dict() for f in a.findings if not f.passed]


def test_report_outputs(tmp_path):
    audits = audit_files([_write(tmp_path, "a.jsonl", cec_rows()), _write(tmp_path, "b.jsonl", crr_rows())],
                         similarity=False)
    write_json(audits, tmp_path / "a.json")
    got = json.loads((tmp_path / "a.json").read_text())
    assert [g["task"] for g in got] == ["CEC", "CRR"] and all("ci" in f for g in got for f in g["findings"])
    plot(audits, tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"


def test_bad_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps(cec_rows()[0]) + "\n{not json\n")
    with pytest.raises(AuditError, match=r"bad.jsonl:2: not an EV² question"):
        read_items(p)


def test_pair_only_keeps_a_queried_event_in_one_fold(tmp_path):
    """Questions sharing e0 with different labels (a related question and its Vague twin): with e0
    split across folds the pair classifier is tested on the twin of what it learned and reads far
    below chance, a shortcut in reverse that is not in the file."""
    rng = random.Random(5)
    rows = []
    for i in range(N // 3):
        e0 = random_event(rng, 4)
        for j, rel in enumerate(["Causes", "IsResult", "Vague"]):
            e1 = random_event(rng)
            rows.append({"id": f"{i}-{j}", "e0": e0, "rel": rel, "e1": e1, "context": "", "context_tpl": [],
                         "question": f'Is "{e0}" "Causes", "IsResult" or "Vague" "{e1}"?',
                         "choices": ["Causes", "IsResult", "Vague"]})
    found = _finding(_audit(tmp_path, rows), "pair_only")
    assert found.passed, found.as_dict()
