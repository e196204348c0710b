"""Each rule of ``docs/benchmarks.md`` ("How the generator leaves no shortcut") as the named function that
implements it, on inputs small enough to work out by hand: the expected values below are worked from the
rule's statement, not read from the code under test. ``test_question_rules.py`` checks the same rules end to
end (a file generated and audited)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest

from eventkg.queries.graph.components import Component, iter_components
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.questions.balance import (
    UseBalance,
    band_tries,
    degree_band,
    group_by_key,
    infile_degree,
    infile_key,
    infile_named,
    linked_population,
    match_key,
    named_first,
    named_key,
    rank_split,
    within_band,
)
from eventkg.queries.questions.build import first_ask, path_relation
from eventkg.queries.questions.cec import Pending, answers_apart, deal_position
from eventkg.queries.questions.crr import crr_context, family_entries, one_member_holds, quota_room

# relation codes, in EV²'s order: Causes 0, IsResult 1, Before 2, After 3, HasSubevent 4, IsSubevent 5
TEMPORAL = (1 << 2) | (1 << 3)


@dataclass
class Asked:
    """A drafted question as the file-level counts read it."""

    h: int
    t: int
    context: list[tuple[int, str, int]]


# -- CEC negatives: the population and the keys they are matched on ----------------------------------


def test_degree_band_is_log2_of_the_store_degree() -> None:
    # 0 relations: -1; 1: band 0; 2-3: band 1; 4-7: band 2; 8: band 3
    assert degree_band(np.array([0, 1, 2, 3, 4, 7, 8])).tolist() == [-1, 0, 1, 1, 2, 2, 3]


def test_negatives_come_from_the_linked_population_in_pool_order() -> None:
    band = np.array([-1, 0, -1, 3, 1], dtype=np.int8)
    assert linked_population(np.array([4, 0, 1, 2, 3]), band).tolist() == [4, 1, 3]


def test_infile_degree_counts_distinct_neighbours_over_every_context() -> None:
    contexts = [[(0, "Before", 1), (1, "Causes", 2)], [(0, "Before", 1), (1, "After", 0)]]
    # 0: {1}; 1: {0, 2}; 2: {1}; 3: none (the repeated pair counts once)
    assert infile_degree(4, contexts).tolist() == [1, 2, 1, 0]
    assert infile_degree(3, []).tolist() == [0, 0, 0]


def test_infile_key_is_exact_below_eight_then_by_band() -> None:
    # below 8 as is; 8..15 -> 8 + 3; 16 -> 8 + 4
    assert infile_key(np.array([0, 3, 7, 8, 15, 16])).tolist() == [0, 3, 7, 11, 11, 12]


def test_infile_named_counts_the_questions_naming_an_event() -> None:
    asked = [Asked(0, 9, [(1, "Before", 2)]), Asked(1, 9, [(1, "Causes", 3)])]
    # 0: asked about once; 1: in the first context and asked about in the second (once per question); 9 is
    # only an answer, and answers are not names
    assert infile_named(10, asked).tolist() == [1, 2, 1, 1, 0, 0, 0, 0, 0, 0]


def test_named_key_is_exact_below_four_then_by_band() -> None:
    assert named_key(np.array([0, 3, 4, 7, 8])).tolist() == [0, 3, 6, 6, 7]


def test_match_key_joins_the_infile_key_and_the_store_band() -> None:
    # (infile + 1) * 256 + band + 1: the two events share a key only if they share both
    keys = match_key(np.array([0, 1, 0], dtype=np.int32), np.array([-1, 2, 2], dtype=np.int8))
    assert keys.tolist() == [256, 515, 259]
    assert len(set(keys.tolist())) == 3


def test_group_by_key_keeps_the_events_order_within_a_key() -> None:
    key = np.zeros(8, dtype=np.int32)
    key[[5, 7]] = 1
    groups = group_by_key(np.array([5, 2, 7, 3]), key)
    assert {k: v.tolist() for k, v in groups.items()} == {0: [2, 3], 1: [5, 7]}
    assert group_by_key(np.zeros(0, dtype=np.int32), key) == {}  # no events (the unvetted capacity bound)


def test_named_first_orders_proposed_then_named_alike_then_fresh() -> None:
    # 12 is the sampler's; 11 and 13 are named as often as the answer; 10 and 13 have uses to spare
    order = named_first([10, 11, 12, 13], [12], lambda z: z in {11, 13}, lambda z: z in {10, 13})
    assert order == [12, 13, 11, 10]


# -- CEC negatives: similarity band, as often below the answer as above ------------------------------------


def test_rank_split_takes_the_band_on_each_side_and_a_uniform_number_below() -> None:
    cos = np.array([0.2, 0.45, 0.5, 0.55, 0.8])
    below, above, _ = rank_split(cos, 0.5, 0.1, random.Random(0))
    assert below.tolist() == [1] and above.tolist() == [2, 3]
    rng = random.Random(1)
    drawn = [rank_split(cos, 0.5, 0.1, rng)[2] for _ in range(400)]
    assert set(drawn) == {0, 1, 2, 3} and all(70 <= drawn.count(k) <= 130 for k in range(4))


def test_band_tries_keep_the_seeded_side_then_the_nearest_others_at_the_widest() -> None:
    assert band_tries(1) == [(1.0, 1), (2.0, 1), (2.0, 0), (2.0, 2), (2.0, 3)]
    assert band_tries(3) == [(1.0, 3), (2.0, 3), (2.0, 2), (2.0, 1), (2.0, 0)]
    assert band_tries(0, (1.0,)) == [(1.0, 0), (1.0, 1), (1.0, 2), (1.0, 3)]


def test_within_band_widens_only_where_the_narrow_band_holds_none() -> None:
    cos = np.array([0.1, 0.35, 0.9])
    near, step = within_band(cos, 0.3, 0.1)  # 0.35 is 0.05 away
    assert near.tolist() == [1] and step == 1.0
    near, step = within_band(cos, 0.5, 0.1)  # 0.35 is 0.15 away: only the band twice as wide holds it
    assert near.tolist() == [1] and step == 2.0
    assert within_band(cos, 0.62, 0.1) is None  # nearest 0.27 away


# -- CEC negatives: texts never gold and used once; answer positions ----------------------------------------


def test_use_balance_prefers_texts_never_gold_and_not_yet_a_negative() -> None:
    uses = UseBalance(6)
    uses.set_gold([2, 2, 5])
    assert [uses.room(z) for z in range(6)] == [True, True, False, True, True, False]
    uses.used([1])
    assert not uses.room(1) and uses.never_gold(1) and not uses.never_gold(5)


def test_answer_positions_are_dealt_once_per_block() -> None:
    deck: list[int] = []
    rng = random.Random(0)
    dealt = [deal_position(deck, 4, rng) for _ in range(12)]
    assert [sorted(dealt[i:i + 4]) for i in (0, 4, 8)] == [[0, 1, 2, 3]] * 3
    assert deck == []


# -- CEC answers kept apart from the other questions' names -----------------------------------------------


def test_answers_apart_sets_aside_a_sibling_whose_answer_another_names() -> None:
    a, b, c, d, e, f = range(6)
    # the chain a -> b -> c: the forward copy asks (b, c) with a in its context, the backward (b, a) with c
    forward = Pending("1-0", [a, b, c], b, c, "Before", [(a, "Before", b)])
    backward = Pending("2-0", [c, b, a], b, a, "After", [(c, "After", b)])
    other = Pending("3-0", [f, d, e], d, e, "Before", [(f, "Before", d)])
    assert answers_apart([forward, backward, other], 2) == [forward, other]
    # too few kept apart for the file: the first ones drafted, as drafted
    assert answers_apart([forward, backward, other], 3) == [forward, backward, other]
    # an answer that is another kept question's answer is set aside too
    again = Pending("4-0", [f, e], f, c, "Before", [])
    assert answers_apart([forward, again, other], 2) == [forward, other]


# -- CRR: contexts, the asked family, the quotas, the Vague item's edge ---------------------------------


def test_crr_context_comes_from_either_side_stated_as_stored() -> None:
    # 0 -> 1 -> 2 and 1 -> 3; the pair (1, 2)
    triples = ((0, "Before", 1), (1, "Before", 2), (1, "Causes", 3))
    forward = Component(0, (0, 1, 2, 3), triples, "forward")
    assert crr_context(forward, 1, 2, downstream=False) == ([(0, "Before", 1)], False)  # ancestors: 1 downstream
    assert crr_context(forward, 1, 2, downstream=True) == ([(1, "Causes", 3)], True)  # descendants but 2
    # the backward copy states its triples by the stored relations: (1, After, 0) is stored (0, Before, 1)
    backward = Component(1, (3, 2, 1, 0), ((1, "After", 0), (2, "After", 1), (3, "IsResult", 1)), "backward")
    assert crr_context(backward, 1, 0, downstream=False) == ([(1, "Before", 2), (1, "Causes", 3)], True)
    assert crr_context(backward, 1, 0, downstream=True) == ([], False)


def test_one_member_holds_only_when_the_family_has_one_answer() -> None:
    assert one_member_holds(1 << 2, "Before")
    assert not one_member_holds(TEMPORAL, "Before")  # Before and After both hold somewhere
    assert not one_member_holds(0, "After") and one_member_holds(1 << 3, "After")


@pytest.mark.parametrize(("counts", "label", "vague_prob", "room"), [
    ([0, 0, 0], 0, 0.5, True),    # 0 < 1/3 * 1 + 1
    ([2, 0, 0], 0, 0.5, False),   # 2 < 1/3 * 3 + 1 = 2 fails
    ([2, 1, 1], 0, 0.5, True),    # 2 < 1/3 * 5 + 1
    ([1, 1, 3], 2, 0.5, False),   # 3 < 1/3 * 6 + 1 = 3 fails
    ([0, 0, 3], 2, 1.0, False),   # Vague's share 1/2: 3 < 1/2 * 4 + 1 = 3 fails
    ([2, 0, 2], 0, 1.0, True),    # a member's share 1/4: 2 < 1/4 * 5 + 1
    ([3, 0, 2], 0, 1.0, False),   # 3 < 1/4 * 6 + 1 = 2.5 fails
])
def test_quota_room_keeps_each_label_within_one_of_its_share(counts, label, vague_prob, room) -> None:
    assert quota_room(counts, label, vague_prob) is room


def test_family_entries_skip_the_context_and_other_families() -> None:
    # Before, Causes, After, Before; the first is the context's
    assert family_entries(np.array([2, 0, 3, 2], dtype=np.int8), [0], TEMPORAL).tolist() == [2, 3]
    assert family_entries(np.array([0, 1], dtype=np.int8), [], TEMPORAL).tolist() == []


# -- the relation asked, keys asked once, walks in rounds ----------------------------------------------------


def test_path_relation_takes_the_shortest_path_table_1_induces() -> None:
    direct, chain = [(0, "Causes", 2)], [(0, "Before", 1), (1, "Before", 2)]
    assert path_relation([direct, chain]) == ("Causes", direct)
    assert path_relation([chain]) == ("Before", chain)  # Before then Before: Before (Table 1)
    assert path_relation([[(0, "Before", 1), (1, "After", 2)]]) == (None, [])  # Before then After: nothing


def test_a_key_is_asked_once_unless_repeats_are_asked() -> None:
    asked: set[tuple[int, str, int]] = set()
    assert first_ask(asked, (1, "Before", 2), repeat=False)
    assert not first_ask(asked, (1, "Before", 2), repeat=False)
    assert first_ask(asked, (1, "After", 2), repeat=False)
    assert first_ask(asked, (1, "Before", 2), repeat=True)


def test_walks_in_rounds_keep_the_first_round_and_end_when_nothing_new_is_walked() -> None:
    # a single edge: every walk of a later round repeats one of the first round's
    one = EventCSR.from_rows([("a", "BEFORE", "b")], props=[("a", "a", "schema"), ("b", "b", "schema")])
    first = [(c.nodes, c.triples) for c in iter_components(one, 2, 0)]
    rounds = [(c.nodes, c.triples) for c in iter_components(one, 2, 0, rounds=8)]
    assert first and rounds == first  # the second round walked nothing new: it yields nothing and ends
    # a branching graph gives more components in rounds than in one
    edges = [("a", "BEFORE", "b"), ("a", "BEFORE", "c"), ("a", "BEFORE", "d"), ("b", "CAUSES", "e")]
    many = EventCSR.from_rows(edges, props=[(x, x, "schema") for x in "abcde"])
    once = [(c.nodes, c.triples) for c in iter_components(many, 2, 0)]
    more = [(c.nodes, c.triples) for c in iter_components(many, 2, 0, rounds=8)]
    assert more[:len(once)] == once and len({*more}) > len({*once})
