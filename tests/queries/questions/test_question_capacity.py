"""The most questions a graph can give (``question_capacity``), counted by hand on a small graph.

The graph: a chain ``x -> a -> b -> c`` of BEFORE edges and two lone CAUSES edges ``d -> e``,
``f -> g``. Degrees: a and b 2 (band 1), every other event 1 (band 0). Every count below is worked
out from the rules in ``docs/benchmarks.md`` ("Maximum from the keys"), not read from the code.
"""

from __future__ import annotations

import pytest

from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.questions.capacity import direct_bound, expected_notice, question_capacity, quota_max


@pytest.fixture(scope="module")
def chain() -> EventCSR:
    edges = [("x", "BEFORE", "a"), ("a", "BEFORE", "b"), ("b", "BEFORE", "c"),
             ("d", "CAUSES", "e"), ("f", "CAUSES", "g")]
    return EventCSR.from_rows(edges, props=[(e, f"event {e}", "schema") for e in "xabcdefg"])


def test_cec_keys_by_hand(chain) -> None:
    # e0 needs a predecessor off the path (forward: x->a before a, a->b before b; backward copy
    # c->b->a->x: c before b, b before a). Keys with a context: a-Before->b, a-Before->c, b-Before->c,
    # b-After->a, b-After->x, a-After->x. None: the 3 keys from x and the 3 from c in the backward copy
    # (no predecessor), and the 4 lone-edge keys (d, e, f, g have one neighbour each).
    # Negatives: three events of the answer's band not linked to e0 in time. Band 0 holds d, e, f, g
    # (unlinked to the chain); band 1 is a and b only, so the answers b and a find none.
    cap = question_capacity(chain, "cec", "schema")
    assert cap.complete
    assert cap.keys == cap.questions == 4
    assert cap.dropped == {"fewer than 3 negatives of the answer's degree band": 2, "no context": 10}
    assert cap.by_length == {1: 2, 2: 2}  # b->c, a->x direct; a->c, b->x over two edges


def test_crr_keys_by_hand(chain) -> None:
    # Every ordered chain pair of at most 3 edges is a key (6 Before, 6 After); a context is
    # another edge in the component (x->a has a->b->c beyond a). Only Before/After walks join the chain,
    # and no mixed Before/After sequence induces anything, so one member holds for each pair. A Vague
    # partner is an event unrelated to e0 in the related partner's band: d, e, f, g for band 0; none
    # for a or b (band 1). Kept: x/a/b-Before->c and c/b/a-After->x: 3 of each member.
    # Quotas (a label added while its count < share * (made + 1) + 1, shares a third): 3 + 3 related,
    # 3 Vague, then Vague again while 3 < 10/3 + 1 and 4 < 11/3 + 1, not 5 < 12/3 + 1: 11 questions.
    cap = question_capacity(chain, "crr", "schema")
    assert cap.complete and cap.keys == 6 and cap.questions == 11
    assert cap.dropped == {"no Vague partner of the related partner's degree band": 6, "no context": 4}


def test_quota_max_by_hand() -> None:
    # a label is added while its count < (made + 1) / 3 + 1 (shares a third each), the least-made first
    assert quota_max((1, 1), 0.5) == 4  # Before, After, Vague; a second Vague as 1 < 4/3 + 1
    # After and Vague alone take turns: 4 of each, then neither fits (4 < 9/3 + 1 is false)
    assert quota_max((0, 5), 0.5) == 8
    # 10 of each label, then Vague while 10 < 31/3 + 1 and 11 < 32/3 + 1, not 12 < 33/3 + 1
    assert quota_max((10, 10), 0.5) == 32


def test_the_notice_says_when_fewer_than_asked(chain) -> None:
    cap = question_capacity(chain, "cec", "schema")
    line = expected_notice(cap, 100)
    assert line is not None and line.startswith("expects at most 4 schema CEC questions from this store (100 asked)")
    assert expected_notice(cap, 4) is None
    loose = question_capacity(chain, "cec", "schema", vetted=False)  # the 6 keys with a context, negatives unvetted
    assert loose.questions == 6 and "(negatives not vetted)" in (expected_notice(loose, 100) or "")
    capped = question_capacity(chain, "cec", "schema", limit=3)  # counting stops at the limit: not a maximum
    assert not capped.complete and capped.questions == 3 and expected_notice(capped, 3) is None


def test_direct_bound_by_hand(chain) -> None:
    # CEC: edges read both ways whose e0 has a predecessor in that reading: a->b, b->c, b->a, a->x
    assert direct_bound(chain, "cec", "schema") == 4
    # CRR: three per pair of the two members' edges: Before 3 / After 3, Causes 2 / IsResult 2
    assert direct_bound(chain, "crr", "schema") == 3 * 3 + 3 * 2
