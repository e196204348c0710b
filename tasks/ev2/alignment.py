"""EV² schema alignment (Tao et al., arXiv:2404.17513, section 5.3, Table 5).

For an instance-level question the model names the event type of every instance event —
chosen from 20 candidates: the gold types plus negatives drawn from *other* clusters of
event types (``Event.cluster`` from EV²'s clustering.json when stored, else faiss k-means
over sentence embeddings) — and lists the schema triplets it used.

Scored as the release's ``src/metrics.py`` ``metrics_rq3`` scores Table 5
(:func:`eventkg.tasks.metrics.alignment_released`): replies read by :func:`eventkg.tasks.parsing.released_json`
(unparsed ones weigh nothing); event-type accuracy pooled over the predicted types (exact
names); relation F1 per item over triples whose types are mapped to clustering.json cluster
ids, weighted by predicted triples. The cluster map is keyed by clustering.json's names
(from the stored ``Event.cluster``, or the file given as ``clustering=``): looked up as
written (``released``, the default: multi-word types, written with underscores, all fall
to cluster -1, as in the paper's Table 5) and, labelled ``triplet_f1_normalised``, with
underscores read as spaces. Type accuracy uses no cluster map, so only F1 has two readings.
Stored names are lower-cased at ingest, so without ``clustering=`` a clustering name with
capitals (2 of 1,567 in the release) matches only its lower-case spelling.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.graphstore.model import normalise_text
from eventkg.tasks import prompts
from eventkg.tasks.base import Item, Record, sample
from eventkg.tasks.ev2.tasks import ABSTAIN, _EV2Task, load_question_rows, release_row
from eventkg.tasks.metrics import CLUSTER_MAPS, alignment_item, alignment_released, cluster_lookup
from eventkg.tasks.models.base import Completion, Request
from eventkg.tasks.parsing import released_json

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

N_CANDIDATES = 20


def _name(text: str) -> str:
    """EV²'s spelling of a type name (``remember_information``) from any stored form."""
    return normalise_text(text).replace(" ", "_")


def clustering_names(store: GraphStore, path: str | Path | None = None) -> dict[str, int]:
    """clustering.json name -> cluster index, later clusters winning (as the release's dict
    does): read from ``path`` when given, else from the stored schema events' ``cluster``."""
    if path is not None:
        clusters = json.loads(Path(path).read_text(encoding="utf-8"))
        return {name: i for i, names in enumerate(clusters) for name in names}
    return {e["text"]: int(e["cluster"]) for e in store.iter_nodes("Event")
            if e.get("level") == "schema" and e.get("cluster") is not None}


def type_clusters(store: GraphStore, names: Sequence[str], seed: int = 0) -> dict[str, int]:
    """Cluster id per event-type name: stored ``Event.cluster`` if any, else faiss k-means."""
    stored = {}
    for e in store.iter_nodes("Event"):
        if e.get("level") == "schema" and e.get("cluster") is not None:
            stored[normalise_text(e["text"])] = int(e["cluster"])
    if stored:
        nxt = max(stored.values()) + 1
        out = {}
        for n in names:  # types the clustering file did not cover: each its own cluster
            key = normalise_text(n)
            if key not in stored:
                stored[key] = nxt
                nxt += 1
            out[n] = stored[key]
        return out
    import faiss
    import numpy as np

    from eventkg.queries.vectors.embeddings import load_encoder, resolve_model

    names = sorted(set(names))
    vecs = load_encoder(resolve_model(None)).encode([n.replace("_", " ") for n in names], normalize_embeddings=True)
    k = max(2, min(1000, len(names) // 4))
    km = faiss.Kmeans(vecs.shape[1], k, niter=20, seed=seed, verbose=False)
    km.train(np.ascontiguousarray(vecs, dtype="float32"))
    _, assign = km.index.search(np.ascontiguousarray(vecs, dtype="float32"), 1)
    return {n: int(c) for n, c in zip(names, assign[:, 0], strict=True)}


def _gold(r: dict[str, Any]) -> dict[str, Any]:
    """The release's label: the row's whole event_type and event_relation, as written."""
    return {"event_type": dict(r.get("event_type") or {}), "event_relation": [list(t) for t in r.get("event_relation") or []]}


class AlignmentTask(_EV2Task):
    """Generate event types (from 20 candidates) and schema triplets for instance questions."""

    name = "ev2-alignment"
    kind = "json"
    styles = ("plain", "release")
    description = "EV² schema alignment"

    def __init__(self, style: str = "plain", level: str | None = None, seed: int = 0,
                 clustering: str | Path | None = None, **options: Any) -> None:
        super().__init__(style=style, level=None, **options)
        self.seed = seed
        self.max_tokens = 512
        self.clustering = clustering
        self.cluster_names: dict[str, int] = {}

    def build(self, store: GraphStore, split: str | None = None, n: int | None = None, seed: int = 0) -> list[Item]:
        self.bind_release(store)
        if self.ev2_release is not None:  # the release's own clustering.json, its names as written
            self.clustering = self.clustering or self.ev2_release.clustering_path
        rows = [dict(r, _task=task) for task in ("CEC", "CRR") for r in load_question_rows(store, task, "instance", split, self.origin)]
        if self.ev2_release is not None:  # the release asks every instance question (CEC_rq3 / CRR_rq3)
            self.cluster_names = clustering_names(store, self.clustering)
            items = [Item(id=r["_node"], gold=_gold(r), meta=self._alignment_meta(r), doc=r) for r in rows]
            return sample(items, n, seed)
        rows = [r for r in rows if r.get("event_type") and r.get("instances")]
        pool_names = {_name(e["text"]) for e in store.iter_nodes("Event") if e.get("level") == "schema"}
        pool_names |= {_name(t) for r in rows for t in r["event_type"].values()}
        clusters = type_clusters(store, sorted(pool_names), self.seed)
        self.cluster_names = clustering_names(store, self.clustering)
        by_cluster = sorted(clusters.items())
        items = []
        for r in rows:
            gold_types = dict(r["event_type"])  # the release samples candidates around every gold type
            rng = random.Random(f"{self.seed}:{r['_node']}")
            gold_names = {_name(t) for t in gold_types.values()}
            taken = {clusters.get(t) for t in gold_names}
            negatives = sorted({n for n, c in by_cluster if c not in taken} - gold_names)
            cands = sorted(gold_names)
            cands += rng.sample(negatives, min(len(negatives), max(0, N_CANDIDATES - len(cands))))
            rng.shuffle(cands)
            items.append(Item(id=r["_node"], gold=_gold(r), meta=self._alignment_meta(r), doc=dict(r, candidates=cands)))
        return sample(items, n, seed)

    @staticmethod
    def _alignment_meta(r: dict[str, Any]) -> dict[str, Any]:
        return {"qid": r["_qid"], "task": r["_task"], "level": "instance", "split": r["_split"], "origin": r["_origin"]}

    def release_draw(self, item: Item) -> str:
        """The seed of one item's candidate draw under the release style: ``--seed`` and the question.

        The release draws the 20 candidates with the unseeded ``random`` module, so the paper's
        own draws cannot be recovered; here each question's draw is pinned by ``--seed``."""
        return f"{self.seed}:{item.meta['task']}:{item.id}"

    def render(self, item: Item) -> str:
        if self.ev2_release is not None:
            method = f"{item.meta['task']}_rq3"
            return self.ev2_release.prompt(method, release_row(item.doc), draw=self.release_draw(item))
        d = item.doc
        choices = ""
        if d.get("choices"):
            choices = "Choices: " + " ".join(f"{'ABCD'[i]}. {c}" for i, c in enumerate(d["choices"]))
        return prompts.render(
            __package__, "alignment", schema=", ".join(d["candidates"]), instances=self._instances(item),
            context=d.get("context") or "(none)", question=d.get("question") or "", choices=choices,
        )

    def parse(self, item: Item, response: str) -> Any:
        """The release's reading (:func:`eventkg.tasks.parsing.released_json`); ``None`` weighs nothing."""
        return released_json(response)

    def is_correct(self, item: Item, parsed: Any) -> bool | None:
        if parsed is None:
            return None
        acc, f1 = alignment_item(parsed, item.gold, cluster_lookup(self.cluster_names, "released"))
        return acc == 1.0 and f1 == 1.0

    def score(self, records: Sequence[Record]) -> dict[str, Any]:
        released = cluster_lookup(self.cluster_names, "released")
        normalised = cluster_lookup(self.cluster_names, "normalised")

        def block(rs: Sequence[Record]) -> dict[str, float]:
            preds, golds = [r.parsed for r in rs], [r.gold for r in rs]
            out = alignment_released(preds, golds, released)
            out["triplet_f1_normalised"] = alignment_released(preds, golds, normalised)["triplet_f1"]
            return out

        out: dict[str, Any] = {**block(records), "n": len(records), "unparseable": sum(r.parsed is None for r in records)}
        out["by_task"] = {t: block([r for r in records if r.meta["task"] == t]) for t in ("CEC", "CRR")
                          if any(r.meta["task"] == t for r in records)}
        out["rules"] = {
            "event_type_acc": "EV2 metrics_rq3: per-item share of predicted types equal to gold (exact names), "
                              "weighted by predicted types; unparsed replies weigh nothing",
            "triplet_f1": "EV2 metrics_rq3: per-item triple F1 after mapping types to clusters, weighted by "
                          "predicted triples; cluster map " + CLUSTER_MAPS["released"],
            "triplet_f1_normalised": "as triplet_f1 with cluster map " + CLUSTER_MAPS["normalised"],
        }
        return out

    def table_rows(self, metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
        table = {f"{t} {k}": m[key] for t, m in metrics.get("by_task", {}).items()
                 for k, key in (("ET", "event_type_acc"), ("Rel", "triplet_f1"))}
        norm = {f"{t} Rel": m["triplet_f1_normalised"] for t, m in metrics.get("by_task", {}).items()}
        return {"Table 5, released rule (ET accuracy, relation-triplet F1)": table,
                "Relation-triplet F1, underscore-normalised cluster map (not the released rule)": norm}

    # -- baselines -----------------------------------------------------------------------
    def _respond(self, types: dict[str, str], triples: list[list[str]]) -> Completion:
        return Completion(json.dumps({"event_type": types, "event_relation": triples}))

    def _context_triples(self, item: Item, types: dict[str, str]) -> list[list[str]]:
        return [[types[h], r, types[t]] for h, r, t in item.doc.get("context_tpl") or [] if h in types and t in types]

    def baseline_response(self, model: Any, request: Request) -> Completion | None:
        item, name = request.item, getattr(model, "name", "")
        ids = list(item.gold["event_type"])
        cands = item.doc["candidates"]
        if name == "random":
            types = {i: model.rng.choice(cands) for i in ids}
        elif name == "majority":  # the most frequent type of held-out questions; none held out: abstain
            counts = Counter(t for it in getattr(model, "held_out", []) for t in it.gold["event_type"].values())
            if not counts:
                return Completion(ABSTAIN)
            ranked = sorted(cands, key=lambda c: (-counts[c], c))
            types = {i: ranked[0] for i in ids}
        elif name == "embed-sim":
            # the release names some instances without text: they are matched as empty text
            texts = [item.doc["instances"].get(i, "") for i in ids] + [c.replace("_", " ") for c in cands]
            vecs = model.encode(texts)
            sims = vecs[: len(ids)] @ vecs[len(ids):].T
            types = {i: cands[int(sims[k].argmax())] for k, i in enumerate(ids)}
        else:
            return None
        return self._respond(types, self._context_triples(item, types))


__all__ = ["AlignmentTask", "type_clusters"]
