"""SES by both rules against hand-worked values; AbsPyramid metrics equal the libraries' own."""

from __future__ import annotations

import pytest

from tasks.metrics import detection_metrics, generation_metrics, triplet_prf, type_accuracy
from tasks.parsing import parse_yes_no
from tasks.ses import ses_paper, ses_released, ses_summary


def test_ses_both_rules_by_hand() -> None:
    # judge outputs as a model writes them: (c(r|p1,a), c(r|p2,a'), c(r|p2,a))
    raw = [
        ("strengthen", "Yes", "Answer: yes", "no"),           # 1,1,0: paper 1-0=1, released 1
        ("strengthen", "yes", "yes", "Yes, it does."),        # 1,1,1: paper 1-1=0, released 1 (c1 and c2p)
        ("weaken", "No", "Answer: yes", "Answer: yes"),       # 0,1,1: paper 0-1=-1, released 0
        ("weaken", "no", "yes", "no"),                        # 0,1,0: paper 0, released 1 (c2=0 and c2p)
        ("weaken", "yes", "no", "no"),                        # 1,0,0: paper 0, released 0
        ("weaken", "yes", "I cannot decide", "no"),           # unparseable: left out
    ]
    items = [{"relation": rel, "c_p1_a": parse_yes_no(a), "c_p2_ap": parse_yes_no(b), "c_p2_a": parse_yes_no(c)}
             for rel, a, b, c in raw]
    got = ses_summary(items)
    assert got["judged"] == 5 and got["unjudged"] == 1
    assert got["ses_paper"] == pytest.approx((1 + 0 - 1 + 0 + 0) / 5)       # 0.0
    assert got["ses_released"] == pytest.approx((1 + 1 + 0 + 1 + 0) / 5)    # 0.6
    assert got["per_relation"]["strengthen"] == {"ses_paper": 0.5, "ses_released": 1.0, "n": 2}
    assert got["per_relation"]["weaken"]["ses_paper"] == pytest.approx(-1 / 3)
    assert got["per_relation"]["weaken"]["ses_released"] == pytest.approx(1 / 3)
    assert ses_paper(0, 1, 1) == -1 and ses_released(0, 1, 1) == 0


def test_detection_metrics_equal_sklearn() -> None:
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

    gold = [1, 0, 1, 1, 0, 0, 1, 0]
    pred = [1, 0, 0, 1, 1, 0, 1, 1]
    scores = [0.9, 0.2, 0.4, 0.8, 0.6, 0.1, 0.7, 0.55]
    got = detection_metrics(gold, pred, scores)
    assert got["acc"] == accuracy_score(gold, pred)
    assert got["macro_f1"] == f1_score(gold, pred, average="macro")
    assert got["auc"] == roc_auc_score(gold, scores)
    # an unparseable answer is wrong, never a guessed label
    assert detection_metrics([1, 0], [None, 0])["acc"] == 0.5


def test_generation_metrics_equal_the_libraries() -> None:
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU

    hyps = ["a dairy drink", "a large animal", "an activity"]
    refs = [["dairy product", "a drink", "beverage"], ["animal", "a mammal"], ["an outdoor activity"]]
    got = generation_metrics(hyps, refs)
    streams = [["dairy product", "animal", "an outdoor activity"], ["a drink", "a mammal", None], ["beverage", None, None]]
    assert got["bleu1"] == pytest.approx(BLEU(max_ngram_order=1).corpus_score(hyps, streams).score)
    assert got["bleu2"] == pytest.approx(BLEU(max_ngram_order=2).corpus_score(hyps, streams).score)
    scorer = rouge_scorer.RougeScorer(["rouge2", "rougeL"])
    for key in ("rouge2", "rougeL"):
        expect = sum(max(scorer.score(r, h)[key].fmeasure for r in rs) for h, rs in zip(hyps, refs, strict=True)) / 3
        assert got[key] == pytest.approx(expect)
    expect = sum(meteor_score([r.split() for r in rs], h.split()) for h, rs in zip(hyps, refs, strict=True)) / 3
    assert got["meteor"] == pytest.approx(expect) and 0 < got["meteor"] < 1


def test_alignment_scores() -> None:
    gold = [["commit_crime", "Before", "take_stand"], ["take_stand", "HasSubevent", "talk"]]
    assert triplet_prf(gold, gold) == (1.0, 1.0, 1.0)
    p, r, f = triplet_prf([["commit crime", "Before", "take_stand"], ["talk", "Causes", "kill"]], gold)
    assert (p, r, f) == (0.5, 0.5, 0.5)
    assert type_accuracy({"e1": "talk", "e2": "kill"}, {"e1": "talk", "e2": "escape", "e3": "run"}) == (1, 3)
