"""Scoring a model's generated event schema against a question's evaluation subgraph.

A model asked to "output the event semantic knowledge used" (the EV² paper, section 5.3) returns
``{"event_type": {instance: type}, "event_relation": [[type, Relation, type], ...]}``
(Figure 9 of the paper); :func:`score_schema` compares that with the
:class:`~eventkg.queries.retrieval.subgraphs.EvalSubgraph`: event-type accuracy over the gold
instances and relation-triplet F1, a triplet counting as correct when head type, relation
and tail type all match. Inverse spellings of one fact (``[a, Causes, b]`` and
``[b, IsResult, a]``) count as the same triplet unless ``canonical=False``; names are
compared after :func:`eventkg.graphstore.model.normalise_text`.

scikit-learn computes the metrics and is imported inside :func:`score_many` only, so
importing this module stays cheap.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventkg.graphstore.model import CANONICAL, STORED_TO_FORWARD, normalise_text
from eventkg.queries.errors import BadPredictionError
from eventkg.queries.retrieval.subgraphs import EvalSubgraph, Triple


def canonical_triple(t: Sequence[str]) -> Triple:
    """One spelling per fact: the stored direction, in the forward relation's name."""
    h, r, tail = (normalise_text(str(x)) if i != 1 else str(x) for i, x in enumerate(t))
    if r not in CANONICAL:
        return (h, r, tail)
    stored, forward = CANONICAL[r]
    fwd = STORED_TO_FORWARD[stored]
    return (h, fwd, tail) if forward else (tail, fwd, h)


@dataclass(frozen=True)
class SchemaScore:
    """Event-type accuracy and relation-triplet precision/recall/F1 for one or many questions."""

    type_accuracy: float
    precision: float
    recall: float
    f1: float
    n_types: int
    n_gold_triples: int
    n_pred_triples: int


def parse_prediction(output: str | Mapping[str, Any]) -> dict[str, Any]:
    """A model's output (JSON text, Python-literal text, or a dict) -> ``{event_type, event_relation}``."""
    if isinstance(output, Mapping):
        data: Any = output
    else:
        start, end = output.find("{"), output.rfind("}")
        if start < 0 or end <= start:
            raise BadPredictionError("model output holds no {...} object with event_type / event_relation")
        chunk = output[start : end + 1]
        try:
            data = json.loads(chunk)
        except json.JSONDecodeError:
            try:
                data = ast.literal_eval(chunk)
            except (ValueError, SyntaxError) as exc:
                raise BadPredictionError(f"model output is not JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise BadPredictionError("model output is not an object")
    types = data.get("event_type") or data.get("event type") or {}
    rels = data.get("event_relation") or data.get("event relation") or []
    if not isinstance(types, Mapping) or not isinstance(rels, list):
        raise BadPredictionError("event_type must be an object and event_relation a list")
    triples = [tuple(map(str, t)) for t in rels if isinstance(t, list | tuple) and len(t) == 3]
    return {"event_type": {str(k): str(v) for k, v in types.items()}, "event_relation": triples}


def _triple_key(t: Sequence[str], canonical: bool) -> str:
    c = canonical_triple(t) if canonical else (normalise_text(t[0]), t[1], normalise_text(t[2]))
    return "\x1f".join(c)


def score_many(
    predictions: Sequence[str | Mapping[str, Any]],
    golds: Sequence[EvalSubgraph],
    *,
    canonical: bool = True,
) -> SchemaScore:
    """Micro-averaged scores over questions (sklearn): types over all gold instances, triplets over all triplets.

    An unreadable prediction counts as empty (every gold type and triplet missed).
    """
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support
    from sklearn.preprocessing import MultiLabelBinarizer

    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} questions")
    gold_types: list[str] = []
    pred_types: list[str] = []
    gold_sets: list[set[str]] = []
    pred_sets: list[set[str]] = []
    for pred, gold in zip(predictions, golds, strict=True):
        try:
            p = parse_prediction(pred)
        except BadPredictionError:
            p = {"event_type": {}, "event_relation": []}
        ptypes = {k: normalise_text(v) for k, v in p["event_type"].items()}
        for iid, tname in gold.event_types.items():
            gold_types.append(normalise_text(tname))
            pred_types.append(ptypes.get(iid, "\x00missing"))
        gold_sets.append({_triple_key(t, canonical) for t in gold.schema_triples})
        pred_sets.append({_triple_key(t, canonical) for t in p["event_relation"]})
    acc = float(accuracy_score(gold_types, pred_types)) if gold_types else 0.0
    # micro P/R/F1 over the multilabel indicator matrix = set overlap summed over questions
    mlb = MultiLabelBinarizer()
    mlb.fit(gold_sets + pred_sets + [{"\x00"}])
    y_true, y_pred = mlb.transform(gold_sets), mlb.transform(pred_sets)
    prec, rec, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="micro", zero_division=0)
    return SchemaScore(acc, float(prec), float(rec), float(f1), len(gold_types),
                       sum(map(len, gold_sets)), sum(map(len, pred_sets)))


def score_schema(prediction: str | Mapping[str, Any], gold: EvalSubgraph, *, canonical: bool = True) -> SchemaScore:
    """Scores of one model output against one question's evaluation subgraph."""
    return score_many([prediction], [gold], canonical=canonical)
