"""CLoMo's SES rules (the released one and the paper's Eq. 1) against hand-worked values."""

from __future__ import annotations

import pytest

from eventkg.tasks.clomo.ses import ses_paper, ses_released, ses_summary
from eventkg.tasks.parsing import released_yes_no


def _ses_rows(raw):
    return [{"relation": rel, "c_p1_a": released_yes_no(a), "c_p2_ap": released_yes_no(b), "c_p2_a": released_yes_no(c)}
            for rel, a, b, c in raw]


def test_ses_released_rule_over_all_items_by_hand() -> None:
    # judge replies (c11 = c(r|p1,a), c12_22 = c(r|p2,a'), c21 = c(r|p2,a)); prefix rule
    raw = [
        ("strengthen", "Yes", "Yes, it does", "No"),         # 1,1,0: released 1; paper 1*1-0*1 = 1
        ("strengthen", "yes", "yes", "Yes"),                 # 1,1,1: released 1 (c11 and c12_22); paper 1-1 = 0
        ("weaken", "No", "Yes", "Yes"),                      # 0,1,1: released 0; paper 0-1 = -1
        ("weaken", "Answer: yes", "Yes", "No"),              # None,1,0: released 1 (c21=no, c12_22=yes); paper 0
        ("weaken", "Yes", "I cannot judge an empty argument", "No"),  # empty prediction: 1,None,0 -> 0; paper 0
        ("weaken", "Not at all.", "Yes", "Nothing in it weakens"),    # 0,1,0 ('no' prefixes): released 1; paper 0
    ]
    got = ses_summary(_ses_rows(raw))
    assert got["scored"] == 6 and got["unparsed_judgements"] == 2
    assert got["ses_released"] == got["ses"] == pytest.approx(4 / 6)  # (1+1+0+1+0+1)/6
    assert got["ses_paper"] == pytest.approx(0.0)                     # (1+0-1+0+0+0)/6
    assert got["per_relation"]["strengthen"] == {"ses_released": 1.0, "ses_paper": 0.5, "n": 2}
    assert got["per_relation"]["weaken"]["ses_released"] == pytest.approx(2 / 4)
    assert got["per_relation"]["weaken"]["ses_paper"] == pytest.approx(-1 / 4)
    # old rule: looser yes/no parser ("Answer: yes" = yes, "Not at all." unparsed), items with an
    # unparsed judgement (or an empty prediction) dropped: items 1-4 -> released (1+1+0+1)/4 = 0.75
    assert got["ses_released"] != pytest.approx(0.75)
    assert "rules" in got and "ses_released" in got["rules"] and "Eq. 1" in got["rules"]["ses_paper"]


def test_ses_the_case_a_test_once_hard_coded_as_0_6() -> None:
    raw = [
        ("strengthen", "Yes", "Answer: yes", "no"),   # 1,None,0 -> 0 (old parser: 1,1,0 -> 1)
        ("strengthen", "yes", "yes", "Yes, it does."),  # 1,1,1 -> 1
        ("weaken", "No", "Answer: yes", "Answer: yes"),  # 0,None,None -> 0
        ("weaken", "no", "yes", "no"),                 # 0,1,0 -> 1
        ("weaken", "yes", "no", "no"),                 # 1,0,0 -> 0
        ("weaken", "yes", "I cannot decide", "no"),    # 1,None,0 -> 0 (old: dropped)
    ]
    got = ses_summary(_ses_rows(raw))
    assert got["ses_released"] == pytest.approx(2 / 6)  # 0.333; the old test asserted 0.6 = 3/5
    assert ses_released(None, 1, 0) == 1 and ses_released(1, None, 0) == 0 and ses_released(None, 1, None) == 0
    assert ses_paper(0, 1, 1) == -1 and ses_paper(None, 1, None) == 0
