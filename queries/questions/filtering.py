"""Adversarial filtering of generated CEC questions (AFLite-style, Le Bras et al., ICML 2020).

Over-generate, score every question with the audit's baselines that never see the reasoning
(:mod:`eventkg.queries.audit.checks`: the choice-only classifier, the in-file graph, word and TF-IDF
overlap), and, for each baseline that beats chance by more than the audit's tolerance, drop a seeded
random share of the questions it solves until it no longer does. The questions dropped are counted
by the baseline that dropped them.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from eventkg.queries.audit.checks import TOLERANCE, cec_classifier, infile_graph, pick_credit, tfidf_features, words
from eventkg.queries.audit.items import Item, _item
from eventkg.queries.questions.rows import GeneratedQuestion


def solved_by(items: list[Item], seed: int) -> dict[str, np.ndarray]:
    """Per baseline, each question's credit (1 solved, 0 not, 1/t in a t-way tie)."""
    for i, it in enumerate(items):
        it.index = i
    degree, mentions = infile_graph(items)
    prompt = [words(f"{it.question} {it.context}".replace("_", " ")) for it in items]
    pickers: dict[str, Callable[[Item], list[float]]] = {
        "infile_degree_max": lambda it: [degree(it.index, c) for c in it.choices],
        "infile_degree_min": lambda it: [-degree(it.index, c) for c in it.choices],
        "infile_mentions_max": lambda it: [mentions(it.index, c) for c in it.choices],
        "infile_mentions_min": lambda it: [-mentions(it.index, c) for c in it.choices],
        "word_overlap_max": lambda it: [len(words(c) & prompt[it.index]) for c in it.choices],
    }
    out = {name: np.array([pick_credit(f(it), it.gold) for it in items]) for name, f in pickers.items()}
    out["choice_only"] = np.array(cec_classifier(items, tfidf_features, seed))
    return out


def adversarial_filter(made: list[GeneratedQuestion], n: int, seed: int,
                       dropped: dict[str, int]) -> list[GeneratedQuestion]:
    """Up to ``n`` of ``made`` (CEC), after dropping what the baselines solve beyond chance.

    Args:
        made: the over-generated questions, in order.
        n: how many to keep at most.
        seed: seeds the baselines' folds and the draws of what is dropped.
        dropped: receives the questions dropped, by the baseline that solved them.

    Returns:
        The questions kept, in their order.
    """
    if not made:
        return made
    items = [_item(q.row) for q in made]
    chance = 1 / len(items[0].choices)
    keep = np.ones(len(items), dtype=bool)
    rng = random.Random(f"eventkg-filter-{seed}")
    for name, credit in solved_by(items, seed).items():
        solved = [i for i in np.flatnonzero(keep & (credit == 1)).tolist()]
        rng.shuffle(solved)
        while solved and credit[keep].mean() > chance + TOLERANCE / 2:
            keep[solved.pop()] = False
            dropped[name] = dropped.get(name, 0) + 1
    kept = [q for q, k in zip(made, keep.tolist(), strict=True) if k]
    return kept[:n]
