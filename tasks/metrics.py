"""Metrics, each the rule of the paper's released scorer unless labelled otherwise.

* choice accuracy broken down like Table 4 of EV² (level, family, relation, direction);
* schema alignment, EV² Table 5, as ``src/metrics.py`` ``metrics_rq3`` computes it
  (:func:`alignment_released`), with the underscore-normalised cluster map beside it;
* AbsPyramid detection: Accuracy, Macro-F1, ROC-AUC (scikit-learn);
* AbsPyramid generation as ``generation_metric/`` + ``generator_main.py`` compute it
  (:func:`generation_metrics`): BLEU-1/2 = the first two n-gram precisions of corpus BLEU
  (max order 4, 13a tokens), ROUGE-1/2 recall and ROUGE-L F (Porter stemmer), METEOR.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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


# --- schema alignment (EV² 5.3, Table 5) ---------------------------------------------------

#: How the two cluster maps spell a type before looking it up (see :func:`cluster_lookup`).
CLUSTER_MAPS = {
    "released": "as written: clustering.json's names have spaces and event types underscores, so "
                "every multi-word type maps to cluster -1 (how Table 5 was scored)",
    "normalised": "underscores read as spaces, case folded, before the lookup (eventkg's reading)",
}


def cluster_lookup(names: Mapping[str, int], mode: str = "released"):
    """A function type name -> cluster id (-1 when unknown) over ``names`` (clustering.json
    name -> cluster index). ``released`` looks the name up as written; ``normalised`` reads
    ``_`` as a space and folds case on both sides first."""
    if mode == "released":
        table = dict(names)

        def get(t: Any) -> int:
            try:
                return table.get(t, -1)
            except TypeError:  # an unhashable "type" (a list): no cluster (the release crashes)
                return -1
        return get
    if mode != "normalised":
        raise ValueError(f"cluster map {mode!r}: expected one of {', '.join(CLUSTER_MAPS)}")
    folded = {_fold(k): v for k, v in names.items()}
    return lambda t: folded.get(_fold(t), -1) if isinstance(t, str) else -1


def _fold(name: str) -> str:
    return " ".join(name.replace("_", " ").lower().split())


def alignment_item(pred: Mapping[str, Any], gold: Mapping[str, Any], cluster) -> tuple[float, float]:
    """(type accuracy, relation F1) of one parsed reply, ``metrics_rq3``'s per-item rule.

    Type accuracy: predicted event ids whose type equals the gold type (exact strings) over
    the predicted ids. Relation F1: multiset F1 of triples after mapping both types to
    ``cluster`` ids (a predicted entry that is not a triple counts as ``[-1, Causes, -1]``);
    relation names compare as written.
    """
    ptypes, gtypes = pred.get("event_type") or {}, gold.get("event_type") or {}
    correct = sum(1 for k, v in ptypes.items() if k in gtypes and v == gtypes[k])
    acc = correct / len(ptypes) if ptypes else 0.0
    ptrip = Counter(_mapped(t, cluster) for t in pred.get("event_relation") or [])
    gtrip = Counter(_mapped(t, cluster) for t in gold.get("event_relation") or [])
    tp = sum((ptrip & gtrip).values())
    fp, fn = sum((ptrip - gtrip).values()), sum((gtrip - ptrip).values())
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return acc, (2 * p * r / (p + r) if p + r else 0.0)


def _mapped(t: Any, cluster) -> tuple[Any, Any, Any]:
    if not isinstance(t, list | tuple) or len(t) != 3:
        return (-1, "Causes", -1)
    rel = t[1]
    try:
        hash(rel)
    except TypeError:
        rel = repr(rel)
    return (cluster(t[0]), rel, cluster(t[2]))


def alignment_released(preds: Sequence[Mapping[str, Any] | None], golds: Sequence[Mapping[str, Any]],
                       cluster) -> dict[str, float]:
    """Table 5's two numbers over items, as ``metrics_rq3`` weighs them.

    ``preds[i]`` is a parsed reply (:func:`eventkg.tasks.parsing.released_json`) or ``None``. Type
    accuracy is the per-item accuracy weighted by the item's number of predicted types, so
    all predicted types pooled; relation F1 is the per-item F1 weighted by the item's number
    of predicted triples. Unparsed replies weigh nothing; 0-1 scale.
    """
    n_types = sum(len((p or {}).get("event_type") or {}) for p in preds)
    n_rels = sum(len((p or {}).get("event_relation") or []) for p in preds)
    acc = f1 = 0.0
    for p, g in zip(preds, golds, strict=True):
        if not p:
            continue
        a, f = alignment_item(p, g, cluster)
        if n_types:
            acc += a * len(p.get("event_type") or {}) / n_types
        if n_rels:
            f1 += f * len(p.get("event_relation") or []) / n_rels
    return {"event_type_acc": acc, "triplet_f1": f1}


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


def bleu_precisions(hypotheses: Sequence[str], references: Sequence[Sequence[str]], max_order: int = 4) -> list[float]:
    """Corpus n-gram precisions of BLEU, orders 1..``max_order`` (0-1 scale, no smoothing).

    What the release's ``my_bleu.py`` returns as ``precisions`` (HF ``evaluate``'s bleu:
    13a tokens; per sentence, n-gram counts clipped by their largest count in any one
    reference; summed over the corpus, over the hypothesis n-grams; 0 when there are none).
    Predictions and references are stripped first; all-empty predictions give zeros.
    """
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    hyps = [h.strip() for h in hypotheses]
    if sum(len(h) for h in hyps) == 0:
        return [0.0] * max_order
    matches, possible = [0] * max_order, [0] * max_order
    for hyp, refs in zip(hyps, references, strict=True):
        h = tok(hyp).split()
        best: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            best |= _ngrams(tok(ref.strip()).split(), max_order)
        for gram, count in (_ngrams(h, max_order) & best).items():
            matches[len(gram) - 1] += count
        for n in range(1, max_order + 1):
            possible[n - 1] += max(0, len(h) - n + 1)
    return [m / p if p else 0.0 for m, p in zip(matches, possible, strict=True)]


def _ngrams(tokens: Sequence[str], max_order: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for n in range(1, max_order + 1) for i in range(len(tokens) - n + 1))


def generation_metrics(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """AbsPyramid generation scores as the release computes them, all on a 0-1 scale.

    ``bleu1``/``bleu2``: :func:`bleu_precisions` (max order 4) orders 1 and 2 — not BLEU of
    max order 1 or 2; ``rouge1``/``rouge2``: ROUGE recall, ``rougeL``: ROUGE-L F-measure
    (rouge-score, Porter stemmer), each the best over the item's references, averaged over
    items; ``meteor``: nltk's METEOR (alpha 0.9, beta 3, gamma 0.5) on whitespace tokens,
    best reference, averaged. ``references[i]`` is item i's concept list (``[SEP]`` split).
    """
    from nltk.translate.meteor_score import single_meteor_score
    from rouge_score import rouge_scorer

    from eventkg.tasks.wordnet_setup import ensure_wordnet

    hyps = [h or "" for h in hypotheses]
    refs = [[r.strip() for r in rs] for rs in references]
    p = bleu_precisions(hyps, refs, 4)
    out: dict[str, float] = {"bleu1": p[0], "bleu2": p[1]}
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    kinds = {"rouge1": "recall", "rouge2": "recall", "rougeL": "fmeasure"}
    per: dict[str, list[float]] = {k: [] for k in kinds}
    ensure_wordnet()
    met = []
    for h, rs in zip(hyps, refs, strict=True):
        scores = [scorer.score(r, h) for r in rs]
        for k, attr in kinds.items():
            per[k].append(max((getattr(s[k], attr) for s in scores), default=0.0))
        met.append(max((single_meteor_score(r.split(), h.split(), alpha=0.9, beta=3, gamma=0.5) for r in rs), default=0.0))
    for k, v in per.items():
        out[k] = float(sum(v) / len(v)) if v else 0.0
    out["meteor"] = float(sum(met) / len(met)) if met else 0.0
    return out
