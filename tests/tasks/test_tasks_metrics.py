"""The released scorers' rules against hand-worked values, each beside the near miss it replaced.

Every expected number is worked out in the comments next to it; none is read from the code
under test. "old" names the value the rule before this change gave on the same input.
"""

from __future__ import annotations

import math

import pytest

from eventkg.tasks.metrics import (
    alignment_item,
    alignment_released,
    bleu_precisions,
    cluster_lookup,
    detection_metrics,
    generation_metrics,
)
from eventkg.tasks.parsing import released_json

# --- AbsPyramid detection (scikit-learn is the reference) ---------------------------------------


def test_detection_metrics_equal_sklearn() -> None:
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

    gold = [1, 0, 1, 1, 0, 0, 1, 0]
    pred = [1, 0, 0, 1, 1, 0, 1, 1]
    scores = [0.9, 0.2, 0.4, 0.8, 0.6, 0.1, 0.7, 0.55]
    got = detection_metrics(gold, pred, scores)
    assert got["acc"] == accuracy_score(gold, pred)
    assert got["macro_f1"] == f1_score(gold, pred, average="macro")
    assert got["auc"] == roc_auc_score(gold, scores)
    assert detection_metrics([1, 0], [None, 0])["acc"] == 0.5  # an unparsed answer is wrong


# --- AbsPyramid generation ------------------------------------------------------------------------

HYPS = ["a dairy drink", "a large animal"]
REFS = [["dairy drink", "a beverage"], ["an animal", "large animal"]]


def test_bleu_precisions_by_hand_and_not_bleu_of_max_order_2() -> None:
    # item 1 [a, dairy, drink]: unigrams a (in "a beverage"), dairy, drink all match -> 3/3;
    #   bigrams (a dairy) no, (dairy drink) yes -> 1/2; trigram (a dairy drink) no -> 0/1
    # item 2 [a, large, animal]: a no ("an" is not "a"), large, animal -> 2/3; bigrams (large animal) -> 1/2
    # corpus: p1 = 5/6, p2 = 2/4, p3 = 0/2, p4 = 0/0 -> 0
    p = bleu_precisions(HYPS, REFS, 4)
    assert p == pytest.approx([5 / 6, 0.5, 0.0, 0.0])
    got = generation_metrics(HYPS, REFS)
    assert got["bleu1"] == pytest.approx(5 / 6) and got["bleu2"] == pytest.approx(0.5)
    # old rule: sacrebleu BLEU of max order 2 = sqrt(p1*p2) * BP(=1: 6 hypothesis tokens vs 4) on 0-100
    old_bleu2 = math.sqrt(5 / 6 * 0.5) * 100
    assert old_bleu2 == pytest.approx(64.55, abs=0.01) and got["bleu2"] * 100 != pytest.approx(old_bleu2)
    # a clipped count: "the the the" vs "the cat" -> 1 of 3 unigrams; 13a splits punctuation off
    assert bleu_precisions(["the the the"], [["the cat"]], 2) == pytest.approx([1 / 3, 0.0])
    assert bleu_precisions(["meal."], [["meal"]], 1) == pytest.approx([0.5])  # tokens: meal, . -> 1/2
    assert bleu_precisions(["", " "], [["x"], ["y"]]) == [0.0, 0.0, 0.0, 0.0]


def test_rouge_recall_vs_f1_and_the_stemmer() -> None:
    got = generation_metrics(HYPS, REFS)
    # ROUGE-2 recall: item 1 ref "dairy drink" has 1 bigram, matched -> 1.0 (F1 would be 2/3: P = 1/2);
    # item 2 ref "large animal" -> 1.0. Mean 1.0 (old rule, F1: 2/3)
    assert got["rouge2"] == pytest.approx(1.0)
    # ROUGE-1 recall: every unigram of "dairy drink" / "large animal" is in the hypothesis -> 1.0
    assert got["rouge1"] == pytest.approx(1.0)
    # ROUGE-L F: LCS 2, P = 2/3, R = 1 -> F = 2*(2/3)/(5/3) = 0.8 for both items
    assert got["rougeL"] == pytest.approx(0.8)
    # Porter stemmer on: "drinks" matches "drink" (old rule, no stemmer: the one bigram misses, 0.0)
    assert generation_metrics(["dairy drinks"], [["dairy drink"]])["rouge2"] == pytest.approx(1.0)


def test_meteor_is_nltk_best_reference() -> None:
    from nltk.translate.meteor_score import single_meteor_score

    got = generation_metrics(HYPS, REFS)
    expect = sum(max(single_meteor_score(r.split(), h.split()) for r in rs) for h, rs in zip(HYPS, REFS, strict=True)) / 2
    assert got["meteor"] == pytest.approx(expect) and 0 < got["meteor"] < 1


# --- EV² alignment (metrics_rq3) ------------------------------------------------------------------

CLUSTERS = {"talk": 0, "kill": 1, "take stand": 2, "commit crime": 3}  # clustering.json names: spaces
GOLD = [
    {"event_type": {"e1": "talk", "e2": "take_stand", "e3": "commit_crime"},
     "event_relation": [["commit_crime", "Before", "take_stand"], ["take_stand", "HasSubevent", "talk"]]},
    {"event_type": {"e4": "kill", "e5": "talk"}, "event_relation": [["talk", "Causes", "kill"]]},
    {"event_type": {"e6": "kill"}, "event_relation": [["kill", "Causes", "talk"]]},
]
REPLIES = [
    '{"event_type": {"e1": "talk", "e2": "take_stand", "e3": "kill"}, '
    '"event_relation": [["open_door", "Before", "take_stand"], ["take_stand", "HasSubevent", "talk"]]}',
    '```json\n{"event_type": {"e4": "kill"}, "event_relation": [["talk", "Causes", "kill"], ["kill", "Causes", "talk"]]}\n```',
    "I think e6 is a killing.",  # unparsed: weighs nothing
]


def test_alignment_released_weights_and_the_cluster_quirk() -> None:
    preds = [released_json(r) for r in REPLIES]
    assert preds[2] is None
    released, normalised = cluster_lookup(CLUSTERS, "released"), cluster_lookup(CLUSTERS, "normalised")
    assert released("take_stand") == -1 and released("talk") == 0 and normalised("take_stand") == 2
    # item 1, types: e1, e2 right, e3 wrong -> 2/3 over 3 predicted types
    # item 1, triples, released map: every underscore type -> -1, so gold {(-1,Before,-1), (-1,HasSubevent,0)}
    #   and pred {(-1,Before,-1) [open_door unknown], (-1,HasSubevent,0)}: tp 2 -> F1 1.0
    # item 1, normalised map: gold {(3,Before,2), (2,HasSubevent,0)}, pred {(-1,Before,2), (2,HasSubevent,0)}:
    #   tp 1, P = R = 1/2 -> F1 0.5
    assert alignment_item(preds[0], GOLD[0], released) == pytest.approx((2 / 3, 1.0))
    assert alignment_item(preds[0], GOLD[0], normalised) == pytest.approx((2 / 3, 0.5))
    # item 2: types 1/1; triples {(0,Causes,1), (1,Causes,0)} vs {(0,Causes,1)}: P 1/2, R 1 -> F1 2/3 (both maps)
    assert alignment_item(preds[1], GOLD[1], released) == pytest.approx((1.0, 2 / 3))
    # weights: types 3 + 1 = 4 -> acc = 2/3*3/4 + 1*1/4 = 0.75 (= 3 right of 4 predicted)
    # triples 2 + 2 = 4 -> released F1 = 1.0*2/4 + 2/3*2/4 = 0.8333; normalised 0.5*2/4 + 2/3*2/4 = 0.5833
    got = alignment_released(preds, GOLD, released)
    assert got == pytest.approx({"event_type_acc": 0.75, "triplet_f1": 0.5 + 1 / 3})
    norm = alignment_released(preds, GOLD, normalised)
    assert norm == pytest.approx({"event_type_acc": 0.75, "triplet_f1": 0.25 + 1 / 3})
    # type accuracy uses no cluster map in metrics_rq3: the quirk moves F1 only
    # old rule: types micro over the 6 gold types, unparsed counted (3/6 = 0.5); F1 a plain mean
    # over the 3 items of name-matched F1 ((0.5 + 2/3 + 0)/3 = 0.3889)
    assert got["event_type_acc"] != pytest.approx(0.5) and got["triplet_f1"] != pytest.approx((0.5 + 2 / 3) / 3)


def test_alignment_malformed_triples_and_exact_names() -> None:
    released = cluster_lookup(CLUSTERS, "released")
    pred = {"event_type": {"e1": "Talk", "e9": "talk"}, "event_relation": [["talk", "Causes"], ["talk", "causes", "kill"]]}
    gold = {"event_type": {"e1": "talk"}, "event_relation": [["talk", "Causes", "kill"]]}
    # types: 'Talk' != 'talk' and e9 is not a gold event -> 0/2
    # triples: ['talk','Causes'] -> (-1,Causes,-1); ('talk','causes','kill') -> (0,causes,1) != (0,Causes,1): F1 0
    assert alignment_item(pred, gold, released) == (0.0, 0.0)
