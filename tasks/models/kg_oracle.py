"""``kg-oracle``: answers from the store with the answered item's own answer hidden.

What it can see, per task (abstaining, scored wrong, wherever that evidence decides nothing):

* EV² CEC/CRR: :mod:`eventkg.queries.oracle` — edges other datasets hold, the background of every
  imported question, and (instance questions only) the schema questions' gold; never an
  instance-level gold, never a schema gold for a schema question. Generated questions: abstains.
* EV² alignment: an instance's type is the type other questions give the same instance
  text (never this question's ``event_type``); the triplets are the direct triples among
  those types that some evidence other than this question states (:class:`eventkg.queries.oracle.TripleEvidence`).
* AbsPyramid detection: the majority label of the *other* tuples (other head events) with the
  same instance and concept; with none, WordNet hypernymy (offline, Debian's WordNet 3.0) for
  noun and verb tuples: Yes when a sense of the concept is a sense of the instance or one of
  its hypernyms, No when both are in WordNet and none is; else (a tie, event tuples, words
  WordNet lacks, WordNet absent) it abstains.
* AbsPyramid generation: the concept most often valid for the same instance in tuples of
  other head events; none abstains.
* CLoMo: the graph holds no evidence on an edited argument other than the item's own
  reference, so it abstains everywhere, as writer and as judge (an empty reply).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import TaskError
from eventkg.tasks.models.base import Completion, Model, Request

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore
    from eventkg.tasks.base import Item, Task

NO_ANSWER = "I cannot tell."


def _norm(text: str) -> str:
    return " ".join(str(text or "").lower().split())


_WORDNET: list[Any] = []


def _wordnet() -> Any:
    """nltk's WordNet reader, or None where no offline WordNet can be set up."""
    if not _WORDNET:
        try:
            from eventkg.tasks.wordnet_setup import ensure_wordnet

            ensure_wordnet()
            from nltk.corpus import wordnet

            _WORDNET.append(wordnet)
        except Exception:  # noqa: BLE001 - no WordNet: the oracle abstains instead
            _WORDNET.append(None)
    return _WORDNET[0]


class AbsPyramidEvidence:
    """Every labelled abstraction tuple of a store, keyed for the two AbsPyramid oracles."""

    def __init__(self, store: GraphStore) -> None:
        from eventkg.graphstore.model import ENTAIL_RELATIONS

        self.labels: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(
            list
        )  # (inst, concept) -> (head, label)
        self.valid: dict[str, list[tuple[str, str]]] = defaultdict(list)  # inst -> (head, concept)
        for rtype in ENTAIL_RELATIONS:
            for e in store.iter_edges(rtype):
                inst, concept, label = _norm(e.get("instance")), _norm(e.get("concept")), e.get("label")
                if not inst or not concept or label is None:
                    continue
                self.labels[(inst, concept)].append((e["src"], int(label)))
                if int(label) == 1:
                    self.valid[inst].append((e["src"], concept))

    def detect(self, head: str, instance: str, concept: str) -> tuple[str, float] | None:
        """Majority label of the same (instance, concept) under other heads; None on a tie or none."""
        votes = [lab for h, lab in self.labels.get((_norm(instance), _norm(concept)), []) if h != head]
        yes = sum(votes)
        if not votes or 2 * yes == len(votes):
            return None
        share = yes / len(votes)
        return ("Yes" if share > 0.5 else "No"), share

    def wordnet(self, relation: str, instance: str, concept: str) -> tuple[str, float] | None:
        """Hypernymy between the instance and the concept (noun/verb tuples), or None."""
        pos = {"noun": "n", "verb": "v"}.get(relation)
        wn = _wordnet() if pos else None
        if wn is None:
            return None

        def senses(phrase: str) -> list[Any]:
            words = _norm(phrase).replace("personx", "").split()
            for cand in ("_".join(words), *(words[-1:] if pos == "n" else words[:1])):
                found = wn.synsets(cand, pos) if cand else []
                if found:
                    return found
            return []

        inst, conc = senses(instance), set(senses(concept))
        if not inst or not conc:
            return None
        for s in inst:
            if s in conc or conc & set(s.closure(lambda x: x.hypernyms() + x.instance_hypernyms())):
                return "Yes", 1.0
        return "No", 0.0

    def generate(self, head: str, instance: str) -> str | None:
        """The concept most often valid for ``instance`` under other heads (ties: alphabetical)."""
        counts = Counter(c for h, c in self.valid.get(_norm(instance), []) if h != head)
        if not counts:
            return None
        return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


class KGOracleModel(Model):
    """The graph's answer with the item's own answer hidden (module docstring); abstains otherwise."""

    def __init__(self, store: GraphStore | None) -> None:
        if store is None:
            raise TaskError("kg-oracle needs a store")
        self.store = store
        self.name = "kg-oracle"
        self._abs: AbsPyramidEvidence | None = None
        self._triples: Any = None

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sees": "graph evidence with the answered item's own answer hidden; "
            "abstains (scored wrong) where that evidence decides nothing",
        }

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        out = []
        for req in requests:
            if req.task is None or req.item is None:
                raise TaskError("kg-oracle needs the task's items, not a bare prompt")
            out.append(self.respond(req.task, req.item, req))
        return out

    def respond(self, task: Task, item: Item, req: Request) -> Completion:
        name = task.name
        if name.startswith("clomo"):
            return Completion("")  # no honest evidence: abstain as writer and as judge
        if name == "abspyramid-det":
            return self._detect(item)
        if name == "abspyramid-gen":
            return self._generate(item)
        if name == "ev2-alignment":
            return self._align(item)
        if name in ("ev2-cec", "ev2-crr"):
            text = task.oracle(self.store, item)
            return Completion(text if text is not None else NO_ANSWER)
        raise TaskError(f"kg-oracle: no honest oracle for task {name!r}")

    # -- AbsPyramid -------------------------------------------------------------------------
    def _abs_evidence(self) -> AbsPyramidEvidence:
        if self._abs is None:
            self._abs = AbsPyramidEvidence(self.store)
        return self._abs

    def _detect(self, item: Item) -> Completion:
        d = item.doc
        ev = self._abs_evidence()
        got = ev.detect(d.get("head_id", ""), d.get("instance", ""), d.get("concept", ""))
        if got is None:
            got = ev.wordnet(d.get("relation", ""), d.get("instance", ""), d.get("concept", ""))
        return Completion(NO_ANSWER) if got is None else Completion(got[0], score=got[1])

    def _generate(self, item: Item) -> Completion:
        d = item.doc
        got = self._abs_evidence().generate(d.get("head_id", ""), d.get("instance", ""))
        return Completion(got if got is not None else "")

    # -- EV² alignment ------------------------------------------------------------------------
    def _align(self, item: Item) -> Completion:
        import json

        from eventkg.queries.oracle import TripleEvidence

        if self._triples is None:
            self._triples = TripleEvidence(self.store)
        ev: TripleEvidence = self._triples
        own = item.doc.get("_node") or item.id
        wanted = [k for k in (item.doc.get("instances") or {}) if k in (item.gold or {}).get("event_type", {})]
        types = {}
        for iid in wanted:
            t = ev.type_of(item.doc["instances"][iid], exclude=own)
            if t is not None:
                types[iid] = t
        triples = ev.triples_among(sorted(set(types.values())), exclude=own)
        return Completion(json.dumps({"event_type": types, "event_relation": [list(t) for t in triples]}))
