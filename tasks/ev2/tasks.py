"""EV² contextual event classification (CEC) and relation reasoning (CRR), from Tao et al.,
"A Comprehensive Evaluation on Event Reasoning of Large Language Models" (arXiv:2404.17513, 2024).

Documents are the store's ``Question`` nodes (imported EV² rows or generated ones); the
EV²-style row is read back from ``payload``. Prompt styles: ``plain`` (Figures 5-8),
``direct`` (event types of every instance, plus the schema triples that touch no candidate's
type, so never the answer triple or a path into it; section 5.4), ``cot`` (Figure 11's
reason-with-types guidance) and ``rag`` (instance level: retrieved knowledge in place of the
gold types, the item's own story hidden; :mod:`eventkg.tasks.rag`). ``kg-oracle`` goes through :mod:`eventkg.queries.oracle` (the item's
answer hidden); abstentions are counted in ``abstained`` and scored wrong.
Metrics are Table 4's columns: accuracy per level, per relation family, forward vs
backward, and per relation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.graphstore.model import EVENT_LEVELS, FAMILIES, INVERSE, VAGUE, check_event_level, family_of
from eventkg.tasks import prompts
from eventkg.tasks.base import Item, Record, Task, letters, sample
from eventkg.tasks.errors import TaskError
from eventkg.tasks.ev2.release import RELEASE_STYLES, EV2Release, ingested_ev2_checkout
from eventkg.tasks.metrics import direction_of, grouped_accuracy, mean
from eventkg.tasks.parsing import released_choice
from eventkg.tasks.rag import DEFAULT_BUDGET, RagContext, rag_metrics
from eventkg.tasks.templates import UserTemplate

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore
    from eventkg.queries.oracle import EV2Oracle

LEVELS = EVENT_LEVELS  # the data model's event levels
#: what an offline baseline answers when it abstains (``eventkg.tasks.models.kg_oracle.NO_ANSWER``)
ABSTAIN = "I cannot tell."

#: walk length of the kg-oracle, for imported and generated questions alike: generated ones
#: were induced over walks of up to 4 edges (``generate_questions``' max_len), and the bundled
#: samples are one coherent world in which every imported question has exactly one right
#: answer at that length (``scripts/make_samples.py``, ``tests/ingest/test_samples_consistent.py``).
ORACLE_MAX_LEN = 4
_FAMILY_WORD = {"causal": "causal", "temporal": "temporal", "hierarchical": "subordinate"}
_PHRASE = {
    "Causes": "causes", "IsResult": "is a result of", "Before": "is before", "After": "is after",
    "HasSubevent": "has the subevent", "IsSubevent": "is a subevent of",
}
_SHORT = {
    "Causes": ["causes", "cause"], "IsResult": ["is result of", "is the result of", "is a result of", "result"],
    "Before": ["before"], "After": ["after"], "HasSubevent": ["has subevent", "has the subevent"],
    "IsSubevent": ["is subevent of", "is subevent"], VAGUE: ["vague", "none", "no obvious", "no relation"],
}


def _show(name: str) -> str:
    return name.replace("_", " ") if name else name


def triple_sentence(head: str, rel: str, tail: str) -> str:
    return f'"{head}" {_PHRASE.get(rel, rel)} "{tail}".'


def release_row(doc: dict[str, Any]) -> dict[str, Any]:
    """The release's row of a question as ingested (its payload), without eventkg's own keys."""
    return {k: v for k, v in doc.items() if not k.startswith("_") and k != "candidates"}


def load_question_rows(
    store: GraphStore, task: str, level: str | None = None, split: str | None = None, origin: str | None = None
) -> list[dict[str, Any]]:
    """EV²-style rows of the store's Question nodes (payload first, node properties fill gaps)."""
    rows = []
    for q in store.iter_nodes("Question"):
        if str(q.get("task") or "").upper() != task.upper():
            continue
        if level and str(q.get("level") or "").lower() != level:
            continue
        if split and (q.get("split") or "") != split:
            continue
        if origin and (q.get("origin") or "") != origin:
            continue
        try:
            row = json.loads(q["payload"]) if q.get("payload") else {}
        except json.JSONDecodeError as exc:
            raise TaskError(f"Question {q.get('qid') or q['id']}: payload is not JSON ({exc.msg})") from None
        for key in ("e0", "e1", "rel", "question", "choices", "context"):
            if row.get(key) in (None, "", []) and q.get(key) not in (None, ""):
                row[key] = q[key]
        if not row.get("context_tpl") and q.get("context_tpl"):
            row["context_tpl"] = json.loads(q["context_tpl"])
        row["_node"] = q["id"]
        row["_qid"] = q.get("qid") or row.get("id") or q["id"]
        row["_level"] = (q.get("level") or ("instance" if row.get("instances") else "schema")).lower()
        row["_split"] = q.get("split")
        row["_origin"] = q.get("origin")
        row["_answer"] = q.get("answer")
        rows.append(row)
    return rows


class _EV2Task(Task):
    """Shared by CEC and CRR: loading, prompt sections, parsing, Table-4 scoring, oracle."""

    ev2_task = ""
    styles = ("plain", "direct", "cot", "release", "release-direct", "template", "rag")

    def __init__(self, style: str | None = None, level: str | None = None, origin: str | None = None,
                 template: str | Path | None = None, release: str | Path | None = None,
                 rag_tokens: int | None = None, **options: Any) -> None:
        check_event_level(level, TaskError)
        style = style or ("template" if template else "plain")
        if template and style != "template":
            raise TaskError(f"--template replaces the prompt of a style; drop --style {style} to use it")
        if style == "release-direct":  # the release's _DIRECT prompts exist at instance level only (Table 6)
            if level == "schema":
                raise TaskError("--style release-direct: the release builds direct prompts at instance level only (I_*_DIRECT)")
            level = "instance"
        if style == "rag":  # retrieval stands in for the gold event types of instance questions
            if level == "schema":
                raise TaskError("--style rag: retrieval stands in for the event types of instance questions; use --level instance")
            level = "instance"
        super().__init__(style=style, level=level, **options)
        self.rag_tokens = int(rag_tokens or DEFAULT_BUDGET)
        self._rag: RagContext | None = None
        self.origin = origin
        self.user_template = UserTemplate(template) if style == "template" else None
        if style == "template" and self.user_template is None:
            raise TaskError("--style template needs --template FILE")
        self.release_style = style in RELEASE_STYLES
        # the checkout: --release, else (in build) the one the store records its EV² data was ingested from
        self.ev2_release = EV2Release(release) if self.release_style and release else None
        self.max_tokens = 1024 if style == "cot" else 512
        if self.release_style:  # the release's API call: 512 tokens, temperature not sent
            self.temperature = None
        self._oracle_store: GraphStore | None = None
        self._oracle: EV2Oracle | None = None

    # -- documents ---------------------------------------------------------------------
    def bind_release(self, store: GraphStore) -> None:
        """Under a release style without ``--release``: the checkout the store's EV² questions were
        ingested from (:func:`eventkg.tasks.ev2.release.ingested_ev2_checkout`), or its one-line error."""
        if self.release_style and self.ev2_release is None:
            self.ev2_release = EV2Release(ingested_ev2_checkout(store))

    def build(self, store: GraphStore, split: str | None = None, n: int | None = None, seed: int = 0) -> list[Item]:
        self.bind_release(store)
        if self.style == "rag":
            self._rag = RagContext(store, self.rag_tokens)
        rows = load_question_rows(store, self.ev2_task, self.level, split, self.origin)
        items = [self._item(r) for r in rows]
        return sample(items, n, seed)

    def train_items(self, store: GraphStore) -> list[Item]:
        """Items a prior may be fitted on: the train split, else every question of this task
        at any level (the runner drops the scored ones, so a level-restricted run fits on the
        other level; ``majority`` itself refuses to use the items it scores)."""
        rows = load_question_rows(store, self.ev2_task, None, "train", self.origin)
        rows = rows or load_question_rows(store, self.ev2_task, None, None, self.origin)
        return [self._item(r) for r in rows]

    def _meta(self, row: dict[str, Any], family: str | None) -> dict[str, Any]:
        rel = row.get("rel")
        return {
            "qid": row["_qid"], "level": row["_level"], "rel": rel, "family": family,
            "direction": direction_of(rel), "split": row["_split"], "origin": row["_origin"], "task": self.ev2_task,
        }

    def _item(self, row: dict[str, Any]) -> Item:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- prompts -----------------------------------------------------------------------
    def _instances(self, item: Item) -> str:
        inst = item.doc.get("instances") or {}
        return prompts.section("Instances", "\n".join(f"{k}:\n{v}" for k, v in inst.items()))

    def _instruction(self, item: Item) -> str:
        n = len(item.choices or [])
        text = f"Answer the question by choosing one of {', '.join(letters(n))}."
        if item.meta["level"] == "instance":
            text += (' Every event named in "Context", "Question" and "Choices" is the concrete event'
                     ' described under "Instances".')
        return text

    def _guidance(self, item: Item) -> str:
        """Direct guidance (section 5.4): every instance's event type, and the schema triples of
        the question's graph that touch no candidate's type (CEC: any choice; CRR: ``e1``), so
        neither the answer triple nor any path into the answer is shown."""
        if self.style == "rag" and self._rag is not None and item.meta["level"] == "instance":
            block, seen = self._rag.block(item.doc, self.ev2_task)
            item.meta.update(seen)
            return prompts.section("Retrieved event knowledge", block)
        if self.style != "direct" or item.meta["level"] != "instance":
            return ""
        types = item.doc.get("event_type") or {}
        lines = [f"{k}: {_show(v)}" for k, v in types.items()]
        triples = [
            triple_sentence(_show(h), r, _show(t))
            for h, r, t in item.doc.get("event_relation") or []
            if not {h, t} & self._candidate_types(item)
        ]
        return prompts.section("Event types", "\n".join(lines)) + prompts.section("Schema knowledge", " ".join(triples))

    def _candidate_types(self, item: Item) -> set[str]:
        types = item.doc.get("event_type") or {}
        cands = [item.doc.get("e1")] if self.ev2_task == "CRR" else list(item.choices or [])
        return {types[c] for c in cands if c in types}

    def release_method(self, item: Item) -> str:
        """The ``EV2Dataset`` method that builds this item's prompt in the release (``S_CEC``, ``I_CRR_DIRECT``...)."""
        level = "S" if item.meta["level"] == "schema" else "I"
        return f"{level}_{self.ev2_task}" + ("_DIRECT" if self.style == "release-direct" else "")

    def render(self, item: Item) -> str:
        if self.ev2_release is not None:
            return self.ev2_release.prompt(self.release_method(item), release_row(item.doc))
        if self.user_template is not None:
            return self.user_template.render(self.template_fields(item))
        choices = "\n".join(f"{letters(len(item.choices))[i]}. {label}" for i, label in enumerate(self._labels(item)))
        name = "cot" if self.style == "cot" else "plain"
        return prompts.render(
            __package__, name,
            instruction=self._instruction(item),
            instances=self._instances(item),
            guidance=self._guidance(item),
            context=item.doc.get("context") or "(none)",
            question=item.doc.get("question") or "",
            choices=choices,
        )

    def template_fields(self, item: Item) -> dict[str, str]:
        """The values of a ``--template`` file's placeholders (:data:`TEMPLATE_FIELDS`) for one item."""
        inst = item.doc.get("instances") or {}
        labels = self._labels(item)
        n = len(labels)
        return {
            "instruction": self._instruction(item),
            "instances": "\n".join(f"{k}:\n{v}" for k, v in inst.items()),
            "context": item.doc.get("context") or "",
            "question": item.doc.get("question") or "",
            "choices": "\n".join(f"{letters(n)[i]}. {label}" for i, label in enumerate(labels)),
            "letters": ", ".join(letters(n)),
            "event_types": "\n".join(f"{k}: {v}" for k, v in (item.doc.get("event_type") or {}).items()),
            "e0": str(item.doc.get("e0") or ""),
            "e1": str(item.doc.get("e1") or "") if self.ev2_task == "CRR" else "",
        }

    def _labels(self, item: Item) -> list[str]:
        return list(item.choices or [])

    def parse(self, item: Item, response: str) -> Any:
        # a baseline's abstention is not read as a choice, except under the release's reading,
        # which reads every reply (``I cannot tell.`` is A there)
        if not self.release_style and response.strip() == ABSTAIN:
            return None
        # an empty reply (a server's ``content: null``) says nothing: unparseable under eventkg's styles;
        # the release's reading below falls back to the choice with the best overlap (A), its styles only
        if not self.release_style and not response.strip():
            return None
        # EV²'s released metrics_rq12 cascade: it never abstains on a model's reply
        i = released_choice(response, self.ev2_task, item.doc.get("question") or "", item.choices or [])
        return None if i is None else item.choices[i]

    # -- scoring -----------------------------------------------------------------------
    def score(self, records: Sequence[Record]) -> dict[str, Any]:
        rows = [(r.meta, r.correct) for r in records]
        out: dict[str, Any] = {
            "accuracy": mean(ok for _, ok in rows),
            "n": len(rows),
            "unparseable": sum(1 for r in records if r.parsed is None),
            "abstained": sum(1 for r in records if r.response.strip() == ABSTAIN),
        }
        out["abstained_by_level"] = {
            lv: sum(1 for r in records if r.meta["level"] == lv and r.response.strip() == ABSTAIN)
            for lv in sorted({r.meta["level"] for r in records})
        }
        out["by_level"] = grouped_accuracy(rows, "level")
        for key in ("family", "rel", "direction"):
            out[f"by_{key}"] = {
                lv: grouped_accuracy([x for x in rows if x[0]["level"] == lv], key)
                for lv in sorted({m["level"] for m, _ in rows})
            }
        table4 = {}
        for lv, short in (("schema", "S"), ("instance", "I")):
            if lv in out["by_level"]:
                table4[f"{short}-{self.ev2_task}"] = out["by_level"][lv]
                for d, col in (("forward", "F"), ("backward", "B")):
                    if d in out["by_direction"].get(lv, {}):
                        table4[f"{short}-{col}"] = out["by_direction"][lv][d]
        out["table4"] = table4
        if self.style == "rag":
            out["rag"] = rag_metrics([r.meta for r in records], self.rag_tokens)
        return out

    def table_rows(self, metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
        tables = {"Table 4 columns (accuracy)": metrics.get("table4", {}),
                  **({"Retrieved knowledge (rag)": {k: v for k, v in metrics["rag"].items() if v is not None}}
                     if metrics.get("rag") else {}),
                  "Abstentions per level (items, scored wrong)": metrics.get("abstained_by_level", {})}
        for lv, fam in metrics.get("by_family", {}).items():
            tables[f"{lv} level, per relation family"] = fam
        for lv, rel in metrics.get("by_rel", {}).items():
            tables[f"{lv} level, per relation"] = rel
        return tables

    # -- kg-oracle: queries.oracle.EV2Oracle, each question's own answer hidden ------------
    def kg_oracle(self, store: GraphStore) -> EV2Oracle:
        """The honest oracle of ``store`` (its evidence views built once per store)."""
        from eventkg.queries.oracle import EV2Oracle

        if self._oracle_store is not store or self._oracle is None:
            self._oracle_store, self._oracle = store, EV2Oracle(store, max_len=ORACLE_MAX_LEN)
        return self._oracle

    def oracle(self, store: GraphStore, item: Item) -> str | None:
        """The letter of the one choice the evidence singles out with this item's answer hidden
        (:mod:`eventkg.queries.oracle` says what it sees); ``None`` - an abstention, scored wrong - else."""
        answer = self.kg_oracle(store).answer(item.doc, origin=item.meta.get("origin"))
        if answer is None or answer not in (item.choices or []):
            return None
        return letters(len(item.choices))[item.choices.index(answer)]

    def embed_text(self, item: Item, name: str) -> str:
        inst = item.doc.get("instances") or {}
        return inst.get(name) or _show(name)


class CECTask(_EV2Task):
    """Contextual Event Classification: which of 4 events stands in the asked relation to e0."""

    name = "ev2-cec"
    ev2_task = "CEC"
    description = "EV² CEC (4-way) at schema and instance level, from Question nodes"

    def _item(self, row: dict[str, Any]) -> Item:
        choices = list(row.get("choices") or [])
        gold = row.get("e1") or row.get("_answer")
        if not choices or gold not in choices or row.get("rel") not in INVERSE:
            raise TaskError(f"CEC question {row['_qid']}: needs choices containing e1 and a relation (got {row.get('rel')!r})")
        inst = row.get("instances") or {}
        aliases = [[c, _show(c)] + ([inst[c]] if c in inst else []) for c in choices]
        return Item(id=row["_node"], gold=gold, choices=choices, aliases=aliases,
                    meta=self._meta(row, family_of(row["rel"])), doc=row)

    def embed_view(self, item: Item) -> tuple[str, list[str]]:
        return self.embed_text(item, item.doc["e0"]), [self.embed_text(item, c) for c in item.choices]


class CRRTask(_EV2Task):
    """Contextual Relation Reasoning: which relation of one family (or Vague) joins e0 and e1."""

    name = "ev2-crr"
    ev2_task = "CRR"
    description = "EV² CRR (3-way: relation, inverse, Vague) at schema and instance level"

    def _item(self, row: dict[str, Any]) -> Item:
        choices = list(row.get("choices") or [])
        fams = [f for f, members in FAMILIES.items() if set(members) <= set(choices)]
        gold = row.get("rel")
        if len(choices) != 3 or not fams or gold not in choices:
            raise TaskError(f"CRR question {row['_qid']}: choices {choices} are not a relation family with Vague, or miss {gold!r}")
        item = Item(id=row["_node"], gold=gold, choices=choices, meta=self._meta(row, fams[0]), doc=row)
        item.aliases = [[c, self._sentence(item, c), *_SHORT.get(c, [])] for c in choices]
        return item

    def _sentence(self, item: Item, rel: str) -> str:
        e0, e1 = item.doc["e0"], item.doc["e1"]
        if rel == VAGUE:
            return f'There is no obvious {_FAMILY_WORD[item.meta["family"]]} relationship between "{e0}" and "{e1}".'
        return triple_sentence(e0, rel, e1)

    def _labels(self, item: Item) -> list[str]:
        return [self._sentence(item, c) for c in item.choices]

    def embed_view(self, item: Item) -> tuple[str, list[str]]:
        e0, e1 = (self.embed_text(item, item.doc[k]) for k in ("e0", "e1"))
        query = f"{item.doc.get('context') or ''} {e0} {e1}"
        texts = []
        for c in item.choices:
            if c == VAGUE:
                texts.append(f"{e0}. {e1}. unrelated")
            else:
                texts.append(f"{e0} {_PHRASE[c]} {e1}")
        return query, texts
