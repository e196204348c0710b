"""Question files for the shortcut-audit tests: clean CEC rows with random events, each flag planting one
artifact in the gold, so a test sees the audit find it."""

from __future__ import annotations

import random

N = 400
WORDS = [f"w{i}" for i in range(600)]


def random_event(rng: random.Random, k: int = 3) -> str:
    return "_".join(rng.sample(WORDS, k))


def cec_rows(seed: int = 1, *, position0=False, marker=False, longer=False, overlap=False, hub=False,
             similar=False, repeat=False, asked=False) -> list[dict]:
    """CEC schema rows with random events; each flag plants one artifact in the gold (``asked``: the
    answer is the event the next question asks about)."""
    rng = random.Random(seed)
    hubs = [random_event(rng) for _ in range(30)]
    queried = [random_event(rng) for _ in range(N)]
    rows = []
    for i in range(N):
        e0 = queried[i]
        gold = rng.choice(hubs) if hub else queried[(i + 1) % N] if asked else random_event(rng)
        if marker:
            gold = f"zorp_{gold}"
        if longer:
            gold = f"{gold}_{random_event(rng, 4)}"
        if overlap:
            gold = f"{e0.split('_')[0]}_{gold}"
        if similar:
            gold = e0.replace("_", "_") + "_again"
        negs = [random_event(rng) for _ in range(3)]
        head = rng.choice(hubs) if hub else random_event(rng)
        choices = [gold, *negs]
        rng.shuffle(choices)
        if position0:
            choices.remove(gold)
            choices.insert(0, gold)
        rows.append({"id": f"{i}-0", "e0": e0, "rel": "Causes", "e1": gold, "negative_chosen": negs,
                     "context": f'"{head}" is before "{e0}".', "context_tpl": [[head, "Before", e0]],
                     "question": f'Which is result of "{e0}"?', "choices": choices})
    if repeat:
        rows += [dict(r, id=r["id"] + "b") for r in rows[:40]]
    return rows
