"""CLoMo counterfactual logical modification (Huang, Hong et al., ACL 2024) from the graph, scored by SES.

Graph shape read here: ``Argument`` nodes (``text``, ``qtype``, ``id_string``, ``split``,
``state`` 1 for the original, 2 for Argument'; the release subsets it belongs to as ``clomo:<subset>``
in ``sources``), ``Statement -PART_OF{order}-> Argument``,
``Premise -<RELATION>{state}-> Argument`` (state 1 = Premise1, 2 = Premise2; either pointing at
the original or at Argument'), ``Argument' -COUNTERFACTUAL_OF-> Argument``.

``--split`` selects a split (``train``/``dev``/``test``) or a subset of the release (``ona_test``:
the test items of necessary assumption; ``xna_train``: the train items of the other relations).

Prompts: ``zero`` (instruction + parts), ``few`` (two worked train examples of the same
relation first), ``cot`` (the zero prompt plus "Let's think step by step.", as the release's
cot files add it). Scored as the release's ``SES/ses.py`` does: the modified argument is the
reply's first line as written (:func:`eventkg.tasks.parsing.released_first_line`; an empty one is
judged too), the judge (``--judge``, default the evaluated model) gets the release's SES
system prompt and ``Argument: ... / Premise: ...`` for each of the three questions, and its
replies count as yes/no by prefix; SES averages over every item (:mod:`eventkg.tasks.clomo.ses`).

An offline baseline as judge (``random``, ``majority``, ``kg-oracle``) is not a language model
judging logic: its "SES" is reported under that label (``judge_kind: offline baseline``), and
the reference metrics beside it (``gold_exact``, ``gold_rougeL``: overlap of the judged line
with the dataset's Argument') are labelled as what they are, not SES.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.graphstore.model import CLOMO_RELATIONS, normalise_text
from eventkg.tasks import prompts
from eventkg.tasks.base import Item, Record, Task, sample
from eventkg.tasks.clomo.release import ClomoRelease
from eventkg.tasks.clomo.ses import JUDGEMENTS, ses_paper, ses_released, ses_summary
from eventkg.tasks.errors import TaskError
from eventkg.tasks.models.base import Completion, Model, Request
from eventkg.tasks.parsing import released_first_line, released_yes_no

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

PHRASE = {
    "NECESSARY_ASSUMPTION": "provides a necessary assumption for",
    "SUFFICIENT_ASSUMPTION": "provides a sufficient assumption for",
    "STRENGTHENS": "strengthens",
    "WEAKENS": "weakens",
}
SHORT = {"NECESSARY_ASSUMPTION": "necessary_assumption", "SUFFICIENT_ASSUMPTION": "sufficient_assumption",
         "STRENGTHENS": "strengthen", "WEAKENS": "weaken"}
#: The judge's wording per relation, as the release's ``SES/eval_prompts.py`` phrases the SES
#: question (its definition sentence and relation phrase), so a judge is asked what it was asked there.
JUDGE_DEFINITION = {
    "NECESSARY_ASSUMPTION": "A premise provides a necessary assumption to the argument is that the premise must be "
                            "true or is required in order for the argument to work",
    "SUFFICIENT_ASSUMPTION": "A premise provides a sufficient assumption to the argument is that if the premise is "
                             "added to the argument, it would make the argument logically valid",
    "STRENGTHENS": "A premise strengthens the argument is that the premise contains information that would "
                   "strengthen an argument",
    "WEAKENS": "A premise weakens the argument is that the premise contains information that would weaken an argument",
}
JUDGE_RELATION = {"NECESSARY_ASSUMPTION": "provides a necessary assumption to",
                  "SUFFICIENT_ASSUMPTION": "provides a sufficient assumption to",
                  "STRENGTHENS": "strengthens", "WEAKENS": "weakens"}
#: the release styles and the prompt file (``data/<setup>_<split>.json``) each reads
RELEASE_SETUPS = {"release": "zero", "release-few": "few", "release-cot": "cot"}
OFFLINE_JUDGES = frozenset({"random", "majority", "kg-oracle", "embed-sim"})


def load_items(store: GraphStore) -> list[Item]:
    """One item per original Argument that has both premises."""
    args = {a["id"]: a for a in store.iter_nodes("Argument")}
    statements: dict[str, list[tuple[int, str]]] = defaultdict(list)
    stmt_ids: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for e in store.iter_edges("PART_OF"):
        stmt_ids[e["dst"]].append((int(e.get("order") or 0), e["src"]))
    all_stmt = sorted({s for v in stmt_ids.values() for _, s in v})
    texts = {k: v.get("text") or "" for k, v in store.get_nodes("Statement", all_stmt).items()}
    for aid, pairs in stmt_ids.items():
        statements[aid] = [(o, texts.get(s, "")) for o, s in sorted(pairs)]
    counterfactual = {e["dst"]: e["src"] for e in store.iter_edges("COUNTERFACTUAL_OF")}
    to_original = {cf: o for o, cf in counterfactual.items()}
    premises: dict[str, dict[int, tuple[str, str]]] = defaultdict(dict)  # original arg -> state -> (rel, premise id)
    for rtype in CLOMO_RELATIONS:
        for e in store.iter_edges(rtype):
            target = e["dst"]
            original = to_original.get(target, target)
            premises[original][int(e.get("state") or 1)] = (rtype, e["src"])
    pids = sorted({p for d in premises.values() for _, p in d.values()})
    ptext = {k: v.get("text") or "" for k, v in store.get_nodes("Premise", pids).items()} if pids else {}

    def arg_text(aid: str) -> str:
        node = args.get(aid) or {}
        if node.get("text"):
            return node["text"]
        return " ".join(f"Statement{i + 1}: {t}" for i, (_, t) in enumerate(statements.get(aid, [])))

    items = []
    for aid, prem in premises.items():
        if 1 not in prem or 2 not in prem or aid not in args:
            continue
        rel = prem[1][0]
        node = args[aid]
        gold = arg_text(counterfactual[aid]) if aid in counterfactual else None
        items.append(Item(
            id=node.get("id_string") or aid, gold=gold,
            meta={"relation": SHORT[rel], "split": node.get("split"), "qtype": node.get("qtype"),
                  "subsets": subsets_of(node)},
            doc={"argument": arg_text(aid), "premise1": _strip(ptext.get(prem[1][1], ""), "Premise1:"),
                 "premise2": _strip(ptext.get(prem[2][1], ""), "Premise2:"), "relation": rel, "argument_id": aid,
                 "gold": gold},
        ))
    return items


def subsets_of(node: dict[str, Any]) -> list[str]:
    """The release subsets (``ona_test``, ``xna_train``...) an Argument belongs to: its ``clomo:<subset>`` sources."""
    return sorted(s.split(":", 1)[1] for s in node.get("sources") or [] if s.startswith("clomo:"))


def in_split(item: Item, split: str) -> bool:
    """Whether ``item`` is of ``split``: a split of the release (train/dev/test) or one of its subsets."""
    return item.meta["split"] == split or split in item.meta.get("subsets", ())


def _strip(text: str, prefix: str) -> str:
    return text[len(prefix):].strip() if text.startswith(prefix) else text


class ClomoTask(Task):
    """Write Argument' so Premise2 holds the relation; judged by SES (paper and released rules)."""

    name = "clomo"
    kind = "clomo"
    styles = ("zero", "few", "cot", "release", "release-few", "release-cot")
    description = "CLoMo"

    def __init__(self, style: str = "zero", level: str | None = None, judge: Any = None, seed: int = 0,
                 release: str | Path | None = None, **options: Any) -> None:
        super().__init__(style=style, level=level, **options)
        self.judge: Model | None = None
        self.seed = seed
        self.max_tokens = 1024 if style == "cot" else 512
        self._examples: list[Item] = []
        self.clomo_release = ClomoRelease(release) if style in RELEASE_SETUPS else None
        self._release_rows: dict[str, dict[str, Any]] = {}
        if self.clomo_release is not None:  # LLMer_inference.py's API call: temperature 0.7, no token limit
            self.max_tokens, self.temperature = None, 0.7

    def set_judge(self, judge: Model | None) -> None:
        self.judge = judge

    def build(self, store: GraphStore, split: str | None = None, n: int | None = None, seed: int = 0) -> list[Item]:
        items = load_items(store)
        if self.clomo_release is not None:  # the release's prompt file of the setup and split
            self._release_rows = self.clomo_release.rows(RELEASE_SETUPS[self.style], split)
            items = [it for it in items if it.id in self._release_rows]
            if not items:
                raise TaskError(f"clomo --style {self.style}: no stored argument has an id_string of the release's "
                                f"{RELEASE_SETUPS[self.style]}_{split or 'test'}.json (ingest CLoMo first)")
            return sample(items, n, seed)
        if split:
            items = [it for it in items if in_split(it, split)]
        if self.style == "few" and not self._examples:
            self._examples = [it for it in items if it.gold] if split == "train" else [it for it in load_items(store) if it.gold]
        return sample(items, n, seed)

    def train_items(self, store: GraphStore) -> list[Item]:
        return [it for it in load_items(store) if it.meta["split"] == "train"]

    # -- prompts -----------------------------------------------------------------------
    def _examples_for(self, item: Item) -> str:
        if self.style != "few":
            return ""
        pool = [e for e in self._examples if e.id != item.id and e.doc["relation"] == item.doc["relation"]]
        pool = pool or [e for e in self._examples if e.id != item.id]
        chosen = random.Random(f"{self.seed}:{item.id}").sample(pool, min(2, len(pool)))
        blocks = [f"Example {i + 1}:\nArgument: {e.doc['argument']}\nPremise1: {e.doc['premise1']}\n"
                  f"Premise2: {e.doc['premise2']}\nModified argument:\n{e.gold}" for i, e in enumerate(chosen)]
        return prompts.section("Worked examples", "\n\n".join(blocks))

    def render(self, item: Item) -> str:
        if self.clomo_release is not None:  # the release's user message: the row's ``input``
            return self._release_rows[item.id]["input"]
        d = item.doc
        return prompts.render(
            __package__, "task", relation=PHRASE[d["relation"]], examples=self._examples_for(item), argument=d["argument"],
            premise1=d["premise1"], premise2=d["premise2"],
            cot="Let's think step by step." if self.style == "cot" else "",
        )

    def judge_system(self, item: Item) -> str:
        """The SES judge's system prompt for this item's relation."""
        rel = item.doc["relation"]
        return prompts.render(__package__, "judge", definition=JUDGE_DEFINITION[rel], relation=JUDGE_RELATION[rel]).strip()

    @staticmethod
    def judge_prompt(argument: str, premise: str) -> str:
        """The SES judge's user message, laid out as the release's."""
        return f"\nArgument: {argument}\nPremise: {premise}\n"

    def parse(self, item: Item, response: str) -> Any:
        """The modified argument as the release reads it: the first line as written ("" if empty)."""
        return released_first_line(response)

    # -- running: generation, then the three judge questions ----------------------------
    def run_chunk(self, model: Model, items: list[Item]) -> list[Record]:
        gen_prompts = [self.render(it) for it in items]
        gen = model.generate([self._generation_request(p, it) for p, it in zip(gen_prompts, items, strict=True)])
        parsed = [self.parse(it, c.text) for it, c in zip(items, gen, strict=True)]
        judge = self.judge or model
        reqs, index = [], []
        for k, (it, ap) in enumerate(zip(items, parsed, strict=True)):
            if self.clomo_release is not None:
                reqs.extend(self._release_judge_requests(it, gen[k].text, ap))
                index.extend((k, name) for name in JUDGEMENTS)
                continue
            system = self.judge_system(it)
            for name, arg, prem in (("c_p1_a", it.doc["argument"], it.doc["premise1"]),
                                    ("c_p2_ap", ap, it.doc["premise2"]),
                                    ("c_p2_a", it.doc["argument"], it.doc["premise2"])):
                view = Item(id=it.id, gold=it.gold, meta=it.meta, doc=dict(it.doc, candidate=ap, judged_argument=arg))
                reqs.append(Request(prompt=self.judge_prompt(arg, prem), system=system, item=view, task=self,
                                    purpose=name, max_tokens=1024))
                index.append((k, name))
        answers = judge.generate(reqs) if reqs else []
        verdicts: dict[int, dict[str, Any]] = defaultdict(dict)
        raw: dict[int, dict[str, str]] = defaultdict(dict)
        for (k, name), c in zip(index, answers, strict=True):
            verdicts[k][name] = released_yes_no(c.text)
            raw[k][name] = c.text
        records = []
        for k, (it, p, c) in enumerate(zip(items, gen_prompts, gen, strict=True)):
            v = {name: verdicts[k].get(name) for name in JUDGEMENTS}
            released = ses_released(v["c_p1_a"], v["c_p2_ap"], v["c_p2_a"])
            extra = {"judgements": v, "judge_responses": raw.get(k, {}),
                     "ses_released": released, "ses_paper": ses_paper(v["c_p1_a"], v["c_p2_ap"], v["c_p2_a"])}
            records.append(Record(id=it.id, prompt=p, response=c.text, parsed=parsed[k], gold=it.gold,
                                  correct=bool(released), meta=it.meta, cached=c.cached, extra=extra))
        return records

    def _generation_request(self, prompt: str, item: Item) -> Request:
        if self.clomo_release is not None:  # system = the row's instruction, as LLMer_inference.py sends it
            return self.request(prompt, item, system=self._release_rows[item.id]["instruction"])
        return self.request(prompt, item)

    def _release_judge_requests(self, item: Item, reply: str, candidate: str) -> list[Request]:
        """The three SES queries as the release's ``SES/ses.py`` writes them, with its temperature."""
        row = self._release_rows[item.id]
        queries = self.clomo_release.judge_queries(row["input_info"], reply, row["qtype"])
        temperature = self.clomo_release.judge_args.get("temperature")
        out = []
        for name in JUDGEMENTS:
            (system, user) = (m["content"] for m in queries[name])
            view = Item(id=item.id, gold=item.gold, meta=item.meta, doc=dict(item.doc, candidate=candidate))
            out.append(Request(prompt=user, system=system, item=view, task=self, purpose=name, max_tokens=None,
                               temperature=temperature))
        return out

    def judge_generation(self) -> dict[str, Any]:
        """The SES judge's settings as metrics.json records them."""
        if self.clomo_release is not None:
            return {"source": "the release's SES/ses.py", "max_tokens": "not sent (server default)",
                    "temperature": 1.0, "system": "SES/eval_prompts.py template_ses per relation"}
        return {"source": "eventkg", "max_tokens": 1024, "temperature": 0.0, "system": "tasks/clomo/prompts/judge.txt per relation"}

    def score(self, records: Sequence[Record]) -> dict[str, Any]:
        rows = [{"relation": r.meta["relation"], **r.extra.get("judgements", {})} for r in records]
        out = ses_summary(rows)
        judge_name = getattr(self.judge, "name", None)
        offline = judge_name in OFFLINE_JUDGES if self.judge else None
        out.update(n=len(records), empty_predictions=sum(not r.parsed for r in records),
                   unparseable=sum(not r.parsed for r in records),
                   judge=self.judge.describe() if self.judge else "the evaluated model",
                   judge_generation=self.judge_generation(),
                   judge_kind=("offline baseline: not a language model judging logic, so these are not the paper's SES"
                               if offline else "language model" if self.judge else "the evaluated model"))
        out.update(reference_metrics(records))
        return out

    def table_rows(self, metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
        tables = {"SES overall": {"released rule (default)": metrics.get("ses_released"),
                                  "paper Eq.1": metrics.get("ses_paper")},
                  "reference overlap with Argument' (not SES)": {"exact match": metrics.get("gold_exact"),
                                                                  "ROUGE-L F": metrics.get("gold_rougeL")}}
        for rule, key in (("released rule", "ses_released"), ("paper Eq.1", "ses_paper")):
            tables[f"SES per relation ({rule})"] = {rel: m[key] for rel, m in metrics.get("per_relation", {}).items()}
        return tables

    # -- offline baselines ---------------------------------------------------------------
    def baseline_response(self, model: Any, request: Request) -> Completion | None:
        """Offline writers and judges, replying the way the released parsers read (first line,
        yes/no prefix). No baseline reads the item's reference Argument'."""
        item, name = request.item, getattr(model, "name", "")
        if name == "kg-oracle":  # the graph holds no evidence on an edited argument but the item's own reference
            return Completion("")
        if request.purpose == "answer":
            if name == "majority":  # the no-edit baseline: hand the argument back unchanged
                return Completion(item.doc["argument"])
            if name == "random":
                words = item.doc["argument"].split()
                model.rng.shuffle(words)
                return Completion(" ".join(words))
            raise TaskError(f"clomo: {name} cannot write arguments; use it only as the judge, or pick another model")
        if name == "random":
            return Completion("Yes" if model.rng.random() < 0.5 else "No")
        if name == "majority":
            return Completion("Yes")
        raise TaskError(f"clomo: {name} cannot judge arguments")


def reference_metrics(records: Sequence[Record]) -> dict[str, Any]:
    """Overlap of each judged line with the dataset's Argument' (items with one), labelled: not SES.

    ``gold_exact``: share equal after case and space folding; ``gold_rougeL``: mean ROUGE-L F
    (rouge-score, Porter stemmer)."""
    from rouge_score import rouge_scorer

    pairs = [(r.parsed or "", r.gold) for r in records if r.gold]
    if not pairs:
        return {"gold_exact": None, "gold_rougeL": None, "reference_note": "no reference Argument' stored"}
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    exact = sum(normalise_text(p) == normalise_text(g) for p, g in pairs) / len(pairs)
    rl = sum(scorer.score(g, p)["rougeL"].fmeasure for p, g in pairs) / len(pairs)
    return {"gold_exact": exact, "gold_rougeL": rl,
            "reference_note": "overlap of the judged line with the dataset's Argument'; a reference metric, not SES"}
