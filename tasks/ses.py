"""CLoMo's Self-Evaluation Score (seed 002, section 4), both ways.

A judge answers three yes/no questions per item: c1 = c(r|p1, a), c2p = c(r|p2, a'),
c2 = c(r|p2, a). Two scores are reported side by side because they disagree:

* ``paper``: s = c1·c2p − c2·c2p (Eq. 1), in {−1, 0, 1};
* ``released``: the authors' scorer, 1 if (c1 and c2p) or (not c2 and c2p), else 0.

An item whose three judgements are not all parseable is left out of both and counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

JUDGEMENTS = ("c_p1_a", "c_p2_ap", "c_p2_a")


def ses_paper(c1: int, c2p: int, c2: int) -> int:
    """Eq. (1) of the paper: c(r|p1,a)·c(r|p2,a') − c(r|p2,a)·c(r|p2,a')."""
    return int(c1) * int(c2p) - int(c2) * int(c2p)


def ses_released(c1: int, c2p: int, c2: int) -> int:
    """The released scorer's rule: 1 when (c1=1 and c2p=1) or (c2=0 and c2p=1), else 0."""
    return int((c1 == 1 and c2p == 1) or (c2 == 0 and c2p == 1))


def ses_summary(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean SES overall and per relation, by both rules.

    Each item: ``{"relation": name, "c_p1_a": 0|1|None, "c_p2_ap": ..., "c_p2_a": ...}``.
    """
    per: dict[str, dict[str, list[int]]] = defaultdict(lambda: {"paper": [], "released": []})
    skipped = 0
    for it in items:
        cs = [it.get(k) for k in JUDGEMENTS]
        if any(c is None for c in cs):
            skipped += 1
            continue
        c1, c2p, c2 = (int(c) for c in cs)
        for rel in ("overall", it.get("relation") or "unknown"):
            per[rel]["paper"].append(ses_paper(c1, c2p, c2))
            per[rel]["released"].append(ses_released(c1, c2p, c2))
    out: dict[str, Any] = {"ses_paper": None, "ses_released": None, "judged": 0, "unjudged": skipped,
                           "per_relation": {}}
    for rel, scores in sorted(per.items()):
        means = {k: sum(v) / len(v) for k, v in scores.items()}
        if rel == "overall":
            out["ses_paper"], out["ses_released"], out["judged"] = means["paper"], means["released"], len(scores["paper"])
        else:
            out["per_relation"][rel] = {"ses_paper": means["paper"], "ses_released": means["released"], "n": len(scores["paper"])}
    return out
