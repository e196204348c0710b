"""CLoMo's Self-Evaluation Score (Huang, Hong et al., ACL 2024, section 4): the released rule, and Eq. (1) beside it.

A judge answers three yes/no questions per item: c1 = c(r|p1, a), c2p = c(r|p2, a'),
c2 = c(r|p2, a). A reply counts as yes/no by its prefix only (:func:`eventkg.tasks.parsing.released_yes_no`);
anything else is neither (``None``). Two scores, over **all** items (an item whose
prediction was empty or whose judge replies did not parse stays in, scoring what the rule
gives it):

* ``ses_released`` (the default, ``SES/ses.py``): 1 when (c1 = yes and c2p = yes) or
  (c2 = no and c2p = yes), else 0; a judgement that is neither yes nor no satisfies no clause.
* ``ses_paper`` (the paper's Eq. 1, labelled): s = c1·c2p − c2·c2p with yes = 1 and anything
  else 0, in {−1, 0, 1}. The release does not compute it; it is eventkg's reading of Eq. 1.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

JUDGEMENTS = ("c_p1_a", "c_p2_ap", "c_p2_a")
RULES = {
    "ses_released": "CLoMo SES/ses.py: 1 if (c11=yes and c12_22=yes) or (c21=no and c12_22=yes) else 0; "
                    "yes/no by reply prefix, anything else neither; mean over all items",
    "ses_paper": "paper Eq. 1: c(r|p1,a)*c(r|p2,a') - c(r|p2,a)*c(r|p2,a'), yes=1 else 0; mean over all items",
}


def ses_paper(c1: int | None, c2p: int | None, c2: int | None) -> int:
    """Eq. (1) of the paper: c(r|p1,a)·c(r|p2,a') − c(r|p2,a)·c(r|p2,a'); only a yes (1) counts as 1."""
    y1, y2p, y2 = (int(c == 1) for c in (c1, c2p, c2))
    return y1 * y2p - y2 * y2p


def ses_released(c1: int | None, c2p: int | None, c2: int | None) -> int:
    """The released scorer's rule: 1 when (c1=1 and c2p=1) or (c2=0 and c2p=1), else 0 (None is neither)."""
    return int((c1 == 1 and c2p == 1) or (c2 == 0 and c2p == 1))


def ses_summary(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean SES overall and per relation, by both rules, over every item given.

    Each item: ``{"relation": name, "c_p1_a": 1|0|None, "c_p2_ap": ..., "c_p2_a": ...}``.
    ``unparsed`` counts items with at least one judgement that is neither yes nor no.
    """
    per: dict[str, dict[str, list[int]]] = defaultdict(lambda: {"paper": [], "released": []})
    unparsed = 0
    for it in items:
        c1, c2p, c2 = (it.get(k) for k in JUDGEMENTS)
        unparsed += any(c is None for c in (c1, c2p, c2))
        for rel in ("overall", it.get("relation") or "unknown"):
            per[rel]["paper"].append(ses_paper(c1, c2p, c2))
            per[rel]["released"].append(ses_released(c1, c2p, c2))
    overall = per.pop("overall", {"paper": [], "released": []})
    n = len(overall["released"])
    out: dict[str, Any] = {
        "ses": sum(overall["released"]) / n if n else None,
        "ses_released": sum(overall["released"]) / n if n else None,
        "ses_paper": sum(overall["paper"]) / n if n else None,
        "scored": n, "unparsed_judgements": unparsed, "rules": dict(RULES), "per_relation": {},
    }
    for rel, scores in sorted(per.items()):
        k = len(scores["released"])
        out["per_relation"][rel] = {"ses_released": sum(scores["released"]) / k,
                                    "ses_paper": sum(scores["paper"]) / k, "n": k}
    return out
