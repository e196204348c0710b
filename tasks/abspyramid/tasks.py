"""AbsPyramid detection and generation (Wang et al., "AbsPyramid", arXiv:2311.09174, sections 5-7) from the graph's entailment edges.

Documents are ``NOUN_ENTAIL``/``VERB_ENTAIL``/``EVENT_ENTAIL`` edges (head event -> tail event,
with ``instance``, ``concept``, ``label`` and each task's split as the release ships it:
``det_split`` from the Detection files, ``gen_split`` from the Generation files).

* Detection: one item per tuple of the Detection files, in its ``det_split``. A labelled edge
  with neither split (a store from an older ingest) gets one here: groups of (head event,
  instance) are ordered by a stable hash and cut 80/10/10, every tuple of a group in one split.
* Generation: one item per row of a Generation file, as the release scores it: the tuples
  of one ``gen_row`` (a row's ``[SEP]``-joined concepts, split at ingest; head event,
  instance, relation and ``gen_split`` shared), whose concepts are the row's references. Two
  identical rows (same event and concept string) are one item here, and a concept listed
  in two rows of one event stays with the row ingested last. Detection tuples are
  never references. The prediction is the reply's first non-empty line as written
  (:func:`eventkg.tasks.parsing.generated_line`); metrics are :func:`eventkg.tasks.metrics.generation_metrics`.

Release style (generation only): ``--style release`` sends the input the release's
``generator_main.py`` builds for a row (its ``template_map``, read from the user's checkout by
:class:`eventkg.tasks.abspyramid.release.AbsPyramidRelease`; the event is the stored head, the instance as
stored), with the release's decoding: greedy, at most 10 new tokens. Detection has no release
prompt: the release's detectors (``NLI_ZERO_SHOT.py``, ``LLM_LORA_FP16.py``, ``PLM_FT_main.py``,
``NLI_FT_main.py``) are classifiers fed a pair of texts (premise and hypothesis, or event and
concept) and read a label's score, never a text reply.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.graphstore.model import ENTAIL_RELATIONS, stable_id
from eventkg.tasks import prompts
from eventkg.tasks.abspyramid.release import AbsPyramidRelease
from eventkg.tasks.base import Item, Record, Task
from eventkg.tasks.errors import TaskError
from eventkg.tasks.metrics import detection_metrics, generation_metrics
from eventkg.tasks.parsing import generated_line, parse_yes_no

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

RELATION_NAME = {"NOUN_ENTAIL": "noun", "VERB_ENTAIL": "verb", "EVENT_ENTAIL": "event"}
GENERATION_RULES = {
    "released": "AbsPyramid generation_metric/ + generator_main.py: one item per Generation row, references = "
                "its concepts split on [SEP], prediction = first non-empty line; 0-1 scale",
    "bleu1/bleu2": "1- and 2-gram precisions of corpus BLEU (max order 4, 13a tokens), not BLEU of max order 1/2",
    "rouge1/rouge2": "ROUGE recall, Porter stemmer, best reference, mean over items",
    "rougeL": "ROUGE-L F-measure, Porter stemmer, best reference, mean over items",
    "meteor": "nltk METEOR (0.9, 3, 0.5), best reference, mean over items",
    "exact_match": "eventkg's case-folded exact match with a reference (not a release metric)",
}
_SPLIT_ALIASES = {"dev": "valid", "validation": "valid", "val": "valid"}


def grouped_splits(keys: Sequence[str], ratios: tuple[float, float, float] = (0.8, 0.1, 0.1)) -> dict[str, str]:
    """group key -> train/valid/test, cut 80/10/10 over groups in stable-hash order."""
    groups = sorted(set(keys), key=lambda k: stable_id("split", k))
    n = len(groups)
    cut1, cut2 = round(n * ratios[0]), round(n * (ratios[0] + ratios[1]))
    return {g: "train" if i < cut1 else "valid" if i < cut2 else "test" for i, g in enumerate(groups)}


def load_tuples(store: GraphStore) -> list[dict[str, Any]]:
    """Every abstraction tuple of the store with head text and a split."""
    rows = []
    for rtype in ENTAIL_RELATIONS:
        for e in store.iter_edges(rtype):
            rows.append({"head_id": e["src"], "tail_id": e["dst"], "relation": RELATION_NAME[rtype],
                         "instance": e.get("instance") or "", "concept": e.get("concept") or "",
                         "label": e.get("label"), "det_split": _split_name(e.get("det_split")),
                         "gen_split": _split_name(e.get("gen_split")), "gen_row": e.get("gen_row") or ""})
    heads = store.get_nodes("Event", sorted({r["head_id"] for r in rows}))
    legacy = [r for r in rows if r["det_split"] is None and r["gen_split"] is None and r["label"] is not None]
    if legacy:
        assign = grouped_splits([f"{r['head_id']}\x1f{r['instance']}" for r in legacy])
        for r in legacy:
            r["det_split"] = assign[f"{r['head_id']}\x1f{r['instance']}"]
    for r in rows:
        r["head"] = (heads.get(r["head_id"]) or {}).get("text") or ""
    return rows


def _split_name(value: object) -> str | None:
    if value in (None, ""):
        return None
    low = str(value).lower()
    return _SPLIT_ALIASES.get(low, low)


def _marked(head: str, instance: str) -> str:
    """The head event with the instance in angle brackets, as the released files write it."""
    if instance and instance in head:
        return head.replace(instance, f"<{instance}>", 1)
    return head


class _AbsTask(Task):
    relation_filter: str | None = None

    def __init__(self, style: str = "plain", level: str | None = None, relation: str | None = None, **options: Any) -> None:
        super().__init__(style=style, level=level, **options)
        if relation and relation not in RELATION_NAME.values():
            raise TaskError(f"task {self.name}: relation must be noun, verb or event, not {relation!r}")
        self.relation = relation

    split_key = ""  # det_split or gen_split

    def _tuples(self, store: GraphStore, split: str | None) -> list[dict[str, Any]]:
        rows = [r for r in load_tuples(store) if r[self.split_key] is not None]
        if self.relation:
            rows = [r for r in rows if r["relation"] == self.relation]
        if split:
            rows = [r for r in rows if r[self.split_key] == _split_name(split)]
        return [dict(r, split=r[self.split_key]) for r in rows]

    def train_items(self, store: GraphStore) -> list[Item]:
        return self.build(store, split="train")


def _by_relation(records: Sequence[Record], block: Callable[[Sequence[Record]], dict[str, float]]) -> dict[str, dict[str, float]]:
    """``block``'s metrics per entailment relation (noun, verb, event), in name order."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        groups[r.meta["relation"]].append(r)
    return {k: block(v) for k, v in sorted(groups.items())}


class DetectionTask(_AbsTask):
    """Is the concept a valid abstraction of the marked instance? Acc, Macro-F1, ROC-AUC.

    No ``release`` style: the release classifies (premise, hypothesis) pairs with a sequence
    classifier, it builds no prompt a chat model could be sent."""

    name = "abspyramid-det"
    kind = "yesno"
    split_key = "det_split"
    styles = ("plain", "cot")
    description = "AbsPyramid[Det]"

    def __init__(self, style: str = "plain", level: str | None = None, relation: str | None = None, **options: Any) -> None:
        if style == "release":
            raise TaskError("task abspyramid-det has no release style: the release's detectors classify "
                            "(premise, hypothesis) pairs with a sequence classifier and send no prompt; "
                            "use --style plain or cot")
        super().__init__(style=style, level=level, relation=relation, **options)

    def build(self, store: GraphStore, split: str | None = None, n: int | None = None, seed: int = 0) -> list[Item]:
        items = [
            Item(id=stable_id("absdet", r["head_id"], r["tail_id"], r["relation"], r["concept"]), gold=int(r["label"]),
                 meta={"relation": r["relation"], "split": r["split"]}, doc=r)
            for r in self._tuples(store, split) if r["label"] is not None
        ]
        from eventkg.tasks.base import sample

        return sample(items, n, seed)

    def render(self, item: Item) -> str:
        d = item.doc
        return prompts.render(
            __package__, "detection", event=_marked(d["head"], d["instance"]), instance=d["instance"], concept=d["concept"],
            cot="Explain briefly what the words mean first, then answer." if self.style == "cot" else "",
        )

    def parse(self, item: Item, response: str) -> Any:
        yn = parse_yes_no(response)
        return None if yn is None else int(yn)

    def score(self, records: Sequence[Record]) -> dict[str, Any]:
        def block(rs: Sequence[Record]) -> dict[str, float]:
            scores = None
            if all(r.score is not None for r in rs):
                scores = [float(r.score) for r in rs]
            return detection_metrics([r.gold for r in rs], [r.parsed for r in rs], scores)

        out: dict[str, Any] = {**block(records), "n": len(records), "unparseable": sum(r.parsed is None for r in records)}
        out["by_relation"] = _by_relation(records, block)
        return out

    def table_rows(self, metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
        tables = {"overall": {k: metrics[k] for k in ("acc", "macro_f1", "auc")}}
        for rel, m in metrics.get("by_relation", {}).items():
            tables[f"{rel}-entail"] = m
        return tables

    def embed_view(self, item: Item) -> tuple[str, list[str]]:
        return item.doc["instance"] or item.doc["head"], [item.doc["concept"]]


class GenerationTask(_AbsTask):
    """Generate an abstract concept for the marked instance; one item per Generation row, its
    concepts the references. BLEU-1/2 precisions, ROUGE-1/2 recall, ROUGE-L F, METEOR."""

    name = "abspyramid-gen"
    kind = "generate"
    split_key = "gen_split"
    styles = ("plain", "release")
    description = "AbsPyramid[Gen]"
    max_tokens = 32

    def __init__(self, style: str = "plain", level: str | None = None, relation: str | None = None,
                 release: str | Path | None = None, **options: Any) -> None:
        super().__init__(style=style, level=level, relation=relation, **options)
        self.abs_release = AbsPyramidRelease(release) if style == "release" else None
        if self.abs_release is not None:  # generator_main.py's decoding: greedy, --max_target_length 10
            self.max_tokens, self.temperature = 10, 0.0

    def build(self, store: GraphStore, split: str | None = None, n: int | None = None, seed: int = 0) -> list[Item]:
        groups: dict[tuple[str, str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for r in self._tuples(store, split):
            if r["concept"]:
                groups[(r["head_id"], r["instance"], r["relation"], r["split"], r["gen_row"])].append(r)
        items = []
        for (head_id, instance, relation, gsplit, row), rows in groups.items():
            refs = sorted({r["concept"] for r in rows})
            items.append(Item(id=stable_id("absgen", head_id, instance, relation, gsplit, row), gold=refs,
                              meta={"relation": relation, "split": gsplit}, doc=dict(rows[0], references=refs)))
        from eventkg.tasks.base import sample

        return sample(items, n, seed)

    def render(self, item: Item) -> str:
        d = item.doc
        if self.abs_release is not None:
            return self.abs_release.prompt(d["relation"], d["head"], d["instance"])
        return prompts.render(__package__, "generation", event=_marked(d["head"], d["instance"]), instance=d["instance"],
                              relation=d["relation"])

    def parse(self, item: Item, response: str) -> Any:
        """The release's prediction: the first non-empty line as written; ``None`` when empty
        (scored as the empty string, as the release would)."""
        return generated_line(response) or None

    def is_correct(self, item: Item, parsed: Any) -> bool | None:
        """Case-folded exact match with a reference (eventkg's ``exact_match``, not a release metric)."""
        return None if parsed is None else " ".join(parsed.lower().split()) in {" ".join(g.lower().split()) for g in item.gold}

    def score(self, records: Sequence[Record]) -> dict[str, Any]:
        def block(rs: Sequence[Record]) -> dict[str, float]:
            return generation_metrics([r.parsed or "" for r in rs], [list(r.gold) for r in rs])

        out: dict[str, Any] = {**block(records), "n": len(records), "unparseable": sum(r.parsed is None for r in records),
                               "exact_match": sum(bool(r.correct) for r in records) / max(1, len(records)),
                               "rules": dict(GENERATION_RULES)}
        out["by_relation"] = _by_relation(records, block)
        return out

    def table_rows(self, metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
        keys = ("bleu1", "bleu2", "rouge1", "rouge2", "rougeL", "meteor")
        tables = {"overall": {k: metrics[k] for k in keys}}
        for rel, m in metrics.get("by_relation", {}).items():
            tables[f"{rel}-entail"] = m
        return tables

    def embed_view(self, item: Item) -> tuple[str, list[str]]:
        return f"{item.doc['instance']} ({item.doc['head']})", []
