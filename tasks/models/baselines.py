"""Offline baselines that run anywhere: ``random``, ``majority``, ``embed-sim`` (``kg-oracle`` is :mod:`~eventkg.tasks.models.kg_oracle`).

They answer from the item's structure through the task's hooks and write their answer
the way a model would (``"B"``, ``"Yes"``, a concept), so the task's own parser reads it
back and every baseline goes through the same scoring path as an LLM.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import TaskError
from eventkg.tasks.models.base import Completion, Model, Request
from eventkg.tasks.models.kg_oracle import NO_ANSWER

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.tasks.base import Item, Task

def _task_item(req: Request) -> tuple[Task, Item]:
    if req.task is None or req.item is None:
        raise TaskError("offline baselines need the task's items, not a bare prompt")
    return req.task, req.item


def _gold_texts(gold: Any) -> list[str]:
    return [str(g) for g in gold] if isinstance(gold, list | tuple) else [str(gold)]


class _Baseline(Model):
    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        out = []
        for req in requests:
            task, item = _task_item(req)
            custom = task.baseline_response(self, req)
            out.append(custom if custom is not None else self.answer(task, item))
        return out

    def answer(self, task: Task, item: Item) -> Completion:  # pragma: no cover - overridden
        raise NotImplementedError


class RandomModel(_Baseline):
    """Uniform over the choices (or yes/no, or the train concepts), seeded: the chance line."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.pool: list[str] = []
        self.name = "random"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "seed": self.seed}

    def fit(self, task: Task, train_items: Sequence[Item]) -> None:
        self.pool = sorted({g for it in train_items for g in _gold_texts(it.gold)})

    def answer(self, task: Task, item: Item) -> Completion:
        if item.choices:
            return Completion(task.answer_text(item, self.rng.randrange(len(item.choices))))
        if task.kind == "yesno":
            p = self.rng.random()
            return Completion("Yes" if p >= 0.5 else "No", score=p)
        if task.kind == "generate" and self.pool:
            return Completion(self.rng.choice(self.pool))
        return Completion(NO_ANSWER)


class MajorityModel(_Baseline):
    """The most frequent gold answer of items other than the scored one.

    Fitted on what the runner hands it (the train split; for EV², which ships none, the
    questions of the other level). When that includes the item being answered (the runner
    falls back to the scored items when no train split exists), only fitted items of another
    group (EV² level) count; with none it abstains and ``describe()`` says why: it never
    learns from the items it is scored on.
    """

    #: the runner may hand it the scored items: it answers each from other groups only
    fits_groups_apart = True

    def __init__(self) -> None:
        self.name = "majority"
        self.fitted: dict[str, Any] = {}  # item id -> group
        self.counts: dict[Any, Counter[str]] = {}
        self.positions: dict[Any, Counter[int]] = {}
        self.closed = True
        self.notes: set[str] = set()

    def describe(self) -> dict[str, Any]:
        groups = sorted(str(g) for g in self.counts)
        return {"name": self.name, "fitted_items": len(self.fitted), "fitted_groups": groups,
                "notes": sorted(self.notes)}

    def fit(self, task: Task, train_items: Sequence[Item]) -> None:
        # Gold texts are a prior only over a closed label set (CRR relations, yes/no); over open
        # choices (CEC events) counting them would memorise answers, so there only the answer
        # position is learnt.
        vocab = {c for it in train_items for c in (it.choices or [])}
        self.closed = not vocab or len(vocab) <= 12
        self.fitted, self.counts, self.positions = {}, {}, {}
        for it in train_items:
            g = it.meta.get("level")
            self.fitted[it.id] = g
            counts = self.counts.setdefault(g, Counter())
            positions = self.positions.setdefault(g, Counter())
            if self.closed:
                counts.update(_gold_texts(it.gold))
            if it.choices and it.gold in it.choices:
                positions[it.choices.index(it.gold)] += 1

    def _prior(self, item: Item) -> tuple[Counter[str], Counter[int]] | None:
        groups = list(self.counts)
        if item.id in self.fitted:  # fitted on the scored items: use only other groups
            groups = [g for g in groups if g != item.meta.get("level")]
            if not groups:
                self.notes.add("abstained: no train split and no other level to fit on (never fits on scored items)")
                return None
            self.notes.add("fitted on the other level's items (no train split)")
        counts: Counter[str] = Counter()
        positions: Counter[int] = Counter()
        for g in groups:
            counts.update(self.counts[g])
            positions.update(self.positions[g])
        return counts, positions

    def answer(self, task: Task, item: Item) -> Completion:
        prior = self._prior(item)
        if prior is None:
            return Completion(NO_ANSWER)
        counts, positions = prior
        if item.choices:
            seen = [(counts[c], -i, i) for i, c in enumerate(item.choices) if counts[c]]
            if seen:
                return Completion(task.answer_text(item, max(seen)[2]))
            if not positions:
                return Completion(NO_ANSWER)
            pos = positions.most_common(1)[0][0]
            return Completion(task.answer_text(item, min(pos, len(item.choices) - 1)))
        if task.kind == "yesno":
            yes, no = counts.get("1", 0), counts.get("0", 0)
            if not yes + no:
                return Completion(NO_ANSWER)
            return Completion("Yes" if yes >= no else "No", score=yes / (yes + no))
        if task.kind == "generate" and counts:
            return Completion(counts.most_common(1)[0][0])
        return Completion(NO_ANSWER)


class EmbedSimModel(_Baseline):
    """Sentence-embedding similarity: the candidate nearest the query (cosine, MiniLM offline)."""

    def __init__(self, model_path: str | None = None) -> None:
        self.model_path = model_path
        self.name = "embed-sim"
        self.threshold = 0.5
        self.pool: list[str] = []
        self._encoder = None
        self._pool_vecs = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model_path or "bundled all-MiniLM-L6-v2", "threshold": self.threshold}

    def encode(self, texts: list[str]):
        if self._encoder is None:
            from eventkg.queries.vectors.embeddings import load_encoder, resolve_model

            self._encoder = load_encoder(resolve_model(self.model_path))
        return self._encoder.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)

    def fit(self, task: Task, train_items: Sequence[Item]) -> None:
        if task.kind == "generate":
            self.pool = sorted({g for it in train_items for g in _gold_texts(it.gold)})
            self._pool_vecs = self.encode(self.pool) if self.pool else None
        elif task.kind == "yesno" and train_items:
            sims = [float(x.max()) for x in self._sims(task, train_items)]
            golds = [int(it.gold) for it in train_items]
            best = max(sorted(set(sims)), key=lambda t: sum((s >= t) == bool(g) for s, g in zip(sims, golds, strict=True)))
            self.threshold = float(best)

    def _vectors(self, texts: list[str]) -> dict[str, Any]:
        """One batched encode for every distinct text (per-call encoding is slow on CPU)."""
        unique = sorted(set(texts))
        vecs = self.encode(unique) if unique else []
        return dict(zip(unique, vecs, strict=True))

    def _sims(self, task: Task, items: Sequence[Item]) -> list[Any]:
        views = [task.embed_view(it) for it in items]
        table = self._vectors([t for q, cands in views for t in (q, *cands)])
        import numpy as np

        return [np.array([table[c] for c in cands]) @ table[q] for q, cands in views]

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        pairs = [_task_item(r) for r in requests]
        if not pairs:
            return []
        task = pairs[0][0]
        custom = [task.baseline_response(self, r) for r in requests]
        todo = [i for i, c in enumerate(custom) if c is None]
        if task.kind == "generate":
            answers = self._nearest_pool(task, [pairs[i][1] for i in todo])
        else:
            answers = [self._pick(task, it, s) for it, s in zip([pairs[i][1] for i in todo], self._sims(task, [pairs[i][1] for i in todo]), strict=True)]
        for i, a in zip(todo, answers, strict=True):
            custom[i] = a
        return custom

    def _nearest_pool(self, task: Task, items: Sequence[Item]) -> list[Completion]:
        if self._pool_vecs is None:
            return [Completion(NO_ANSWER) for _ in items]
        table = self._vectors([task.embed_view(it)[0] for it in items])
        return [Completion(self.pool[int((self._pool_vecs @ table[task.embed_view(it)[0]]).argmax())]) for it in items]

    def _pick(self, task: Task, item: Item, sims: Any) -> Completion:
        if task.kind == "yesno":
            s = float(sims[0])
            return Completion("Yes" if s >= self.threshold else "No", score=s)
        return Completion(task.answer_text(item, int(sims.argmax())))


__all__ = ["EmbedSimModel", "MajorityModel", "RandomModel"]
