"""Metrics, computed with the libraries the papers' numbers come from.

* choice accuracy broken down like Table 4 of EV² (level, family, relation, direction);
* schema alignment (EV² Table 5): event-type accuracy and relation-triplet F1;
* AbsPyramid detection: Accuracy, Macro-F1, ROC-AUC (scikit-learn);
* AbsPyramid generation: BLEU-1/2 (sacrebleu), ROUGE-2/L (rouge-score), METEOR (nltk).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphstore.model import EVENT_RELATIONS

#: EV² section 5.1 calls After/IsResult "forward" and Before/Causes "backward" (Table 4).
FORWARD = ("After", "IsResult")
BACKWARD = ("Before", "Causes")


def direction_of(relation: str | None) -> str | None:
    if relation in FORWARD:
        return "forward"
    if relation in BACKWARD:
        return "backward"
    return None


def mean(flags: Iterable[bool | None]) -> float | None:
    """Share of True among flags; ``None`` (unparseable) counts as wrong."""
    values = [bool(f) for f in flags]
    return sum(values) / len(values) if values else None


def grouped_accuracy(rows: Sequence[tuple[dict[str, Any], bool | None]], key: str) -> dict[str, float]:
    """Accuracy per value of ``meta[key]`` (rows with no value are left out)."""
    groups: dict[str, list[bool | None]] = defaultdict(list)
    for meta, ok in rows:
        if meta.get(key) is not None:
            groups[str(meta[key])].append(ok)
    return {k: mean(v) for k, v in sorted(groups.items())}


# --- schema alignment (EV² 5.3) ---------------------------------------------------------


# One implementation of the scoring: queries.subgraphs (score_schema / score_many). These
# wrappers only add what a model's free-form output needs: relation names in any case or
# spacing ("is result" -> IsResult), and "nothing predicted, nothing asked" as a perfect 1.

_RELATION_SPELLINGS = {r.lower(): r for r in EVENT_RELATIONS}


def _triples(triples: Iterable[Sequence[str]]) -> list[list[str]]:
    out = []
    for t in triples:
        if isinstance(t, list | tuple) and len(t) == 3:
            rel = str(t[1]).strip().replace(" ", "").replace("_", "")
            out.append([str(t[0]), _RELATION_SPELLINGS.get(rel.lower(), rel), str(t[2])])
    return out


def _gold_subgraph(types: Mapping[str, str], triples: Iterable[Sequence[str]]):
    from queries.subgraphs import EvalSubgraph

    return EvalSubgraph("", "instance", [tuple(t) for t in _triples(triples)], event_types=dict(types))


def schema_scores(predicted: Sequence[Mapping[str, Any] | None], gold: Sequence[Mapping[str, Any]]):
    """Micro-averaged :class:`queries.subgraphs.SchemaScore` of ``{event_type, event_relation}``
    predictions (``None``: nothing predicted) against gold ones; inverse spellings of a fact match."""
    from queries.subgraphs import score_many

    preds = [{"event_type": dict((p or {}).get("event_type") or {}),
              "event_relation": _triples((p or {}).get("event_relation") or [])} for p in predicted]
    golds = [_gold_subgraph(g.get("event_type") or {}, g.get("event_relation") or []) for g in gold]
    return score_many(preds, golds)


def triplet_prf(predicted: Iterable[Sequence[str]], gold: Iterable[Sequence[str]]) -> tuple[float, float, float]:
    """Precision, recall, F1 of predicted relation triplets (:func:`queries.subgraphs.score_schema`):
    head type, relation and tail type must match after text normalisation. Empty vs empty is 1."""
    pred, gold = _triples(predicted), _triples(gold)
    if not pred and not gold:
        return 1.0, 1.0, 1.0
    s = schema_scores([{"event_relation": pred}], [{"event_relation": gold}])
    return s.precision, s.recall, s.f1


def type_accuracy(predicted: Mapping[str, str], gold: Mapping[str, str]) -> tuple[int, int]:
    """(correct, total) event types over the gold instance events."""
    s = schema_scores([{"event_type": predicted}], [{"event_type": gold}])
    return round(s.type_accuracy * s.n_types), s.n_types


# --- AbsPyramid detection ---------------------------------------------------------------


def detection_metrics(gold: Sequence[int], pred: Sequence[int | None], scores: Sequence[float] | None = None) -> dict[str, float]:
    """Accuracy, Macro-F1 and ROC-AUC (scikit-learn).

    An unparseable prediction (``None``) is a third label (-1): wrong for accuracy, a miss
    for both classes in Macro-F1, and 0.5 in the AUC ranking when no score is given.
    """
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

    y = [int(g) for g in gold]
    p = [-1 if v is None else int(v) for v in pred]
    if scores is None:
        scores = [0.5 if v is None else float(v) for v in pred]
    out = {
        "acc": float(accuracy_score(y, p)),
        "macro_f1": float(f1_score(y, p, labels=[0, 1], average="macro", zero_division=0)),
    }
    out["auc"] = float(roc_auc_score(y, list(scores))) if len(set(y)) == 2 else float("nan")
    return out


# --- AbsPyramid generation --------------------------------------------------------------


def generation_metrics(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """BLEU-1/2 (sacrebleu corpus BLEU, max n-gram order 1 and 2), ROUGE-2/L F1 (rouge-score,
    best reference per item, averaged) and METEOR (nltk, multi-reference, averaged); 0-100 scale
    for BLEU like sacrebleu, 0-1 for the others."""
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU

    from tasks.wordnet_setup import ensure_wordnet

    hyps = [h or "" for h in hypotheses]
    width = max((len(r) for r in references), default=1)
    ref_streams = [[r[i] if i < len(r) else None for r in references] for i in range(width)]
    out: dict[str, float] = {}
    for order in (1, 2):
        out[f"bleu{order}"] = float(BLEU(max_ngram_order=order).corpus_score(hyps, ref_streams).score)
    scorer = rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=False)
    r2, rl = [], []
    for h, refs in zip(hyps, references, strict=True):
        best = scorer.score_multi(list(refs), h)
        r2.append(best["rouge2"].fmeasure)
        rl.append(best["rougeL"].fmeasure)
    out["rouge2"] = sum(r2) / len(r2) if r2 else 0.0
    out["rougeL"] = sum(rl) / len(rl) if rl else 0.0
    ensure_wordnet()
    met = [meteor_score([r.split() for r in refs], h.split()) for h, refs in zip(hyps, references, strict=True)]
    out["meteor"] = float(sum(met) / len(met)) if met else 0.0
    return out
