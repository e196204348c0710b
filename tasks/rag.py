"""The ``rag`` style of EV²'s instance questions: the paper's direct guidance with retrieved knowledge.

The EV² paper (section 5.4) hands the model each instance's gold event type and schema triples;
under ``--style rag`` the model gets instead what :func:`eventkg.queries.retrieval.retrieve.retrieve`
finds for the instance sentence of ``e0``, packed to :data:`DEFAULT_BUDGET` tokens: the lifted
types and their facts. CEC asks one relation of ``e0``, so that relation goes to ``retrieve``
(its facts first, as asked); CRR asks which relation holds, so none is given.

The item's own story is hidden at query time: every instance event that a question of the same
story (the part of its id before ``-``) links to (``ASKS``, ``HAS_CHOICE``, ``HAS_CONTEXT``) is
passed as ``exclude``, so a benchmark ingested into the store cannot leak into its own prompts.

Each item records whether the fact it needs (type of ``e0``, relation, type of ``e1``, either
spelling) is among the prompt's facts, and the block's tokens: the report shows the budget and
that recall beside the accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eventkg.graphstore.model import EVENT_RELATIONS, normalise_text

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

DEFAULT_BUDGET = 300


def story_of(qid: str) -> str:
    """The story of an EV² question id (``230-1`` -> ``230``)."""
    return str(qid).split("-")[0]


@dataclass
class RagContext:
    """Retrieval for one run: the store, the budget, and each story's hidden events (read once)."""

    store: GraphStore
    budget: int = DEFAULT_BUDGET
    _hidden: dict[str, set[str]] = field(default_factory=dict)

    def hidden(self, qid: str) -> set[str]:
        """The instance events of the question's story (every question of it)."""
        story = story_of(qid)
        if story not in self._hidden:
            rows = self.store.query(
                "MATCH (q:Question)-[]->(e:Event) WHERE e.level = 'instance' AND (q.qid = $s OR q.qid STARTS WITH $p) "
                "RETURN DISTINCT e.id AS id", {"s": story, "p": f"{story}-"})
            self._hidden[story] = {r["id"] for r in rows}
        return self._hidden[story]

    def block(self, doc: dict[str, Any], task: str) -> tuple[str, dict[str, Any]]:
        """The retrieved-knowledge text for one question row, and what it holds (need, tokens)."""
        from eventkg.queries.retrieval.facts import parse_facts
        from eventkg.queries.retrieval.retrieve import approx_tokens, retrieve
        from eventkg.queries.retrieval.scoring import canonical_triple

        inst = doc.get("instances") or {}
        text = inst.get(doc.get("e0")) or str(doc.get("e0") or "")
        relation = doc.get("rel") if task == "CEC" and doc.get("rel") in EVENT_RELATIONS else None
        sub = retrieve(self.store, text, relation=relation, exclude=self.hidden(str(doc.get("id") or doc.get("_qid"))))
        prompt = sub.to_prompt(style="direct", max_tokens=self.budget)
        types = doc.get("event_type") or {}
        need = None
        if doc.get("rel") in EVENT_RELATIONS and doc.get("e0") in types and doc.get("e1") in types:
            want = canonical_triple((types[doc["e0"]], doc["rel"], types[doc["e1"]]))
            need = any(canonical_triple(f) == want for f in parse_facts(prompt))
        return prompt, {"rag_need": need, "rag_tokens": approx_tokens(prompt), "rag_types": [t.name for t in sub.types[:3]]}


def rag_metrics(metas: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    """The report's retrieval figures: budget, the needed fact's share, mean tokens."""
    needs = [m["rag_need"] for m in metas if m.get("rag_need") is not None]
    tokens = [m["rag_tokens"] for m in metas if "rag_tokens" in m]
    return {"budget_tokens": budget,
            "needed_fact_in_prompt": round(sum(needs) / len(needs), 4) if needs else None,
            "questions_with_a_needed_fact": len(needs),
            "mean_prompt_tokens": round(sum(tokens) / len(tokens), 1) if tokens else None}


def choose_from_facts(facts: list[tuple[str, str, str]], rel: str, choice_types: dict[str, str]) -> str | None:
    """The choice whose type is the far end of the first fact of ``rel`` (either spelling), or None.

    ``choice_types``: choice -> its event type. The retrieval-bounded reader of CEC: it knows the
    choices' types and nothing but the facts."""
    from eventkg.queries.retrieval.scoring import canonical_triple

    want = {normalise_text(t): c for c, t in choice_types.items()}
    for f in map(canonical_triple, facts):
        probe = canonical_triple(("headsentinel", rel, "tailsentinel"))
        if f[1] != probe[1]:
            continue
        far = f[2] if probe[0] == "headsentinel" else f[0]
        if far in want:
            return want[far]
    return None
