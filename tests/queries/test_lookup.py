"""Events named by text (``eventkg.queries.lookup``): one find_event for ``paths`` and ``negatives``."""

from __future__ import annotations

import pytest

from eventkg.errors import EventKGError
from eventkg.graphstore.base import Batch
from eventkg.graphstore.model import event_id
from eventkg.queries.lookup import default_answer, find_event, paths_between


@pytest.fixture
def small(embedded_store):
    """learn -BEFORE-> study -CAUSES-> pass exam; 'study' also exists at instance level."""
    batch = Batch()
    for text, level in (("learn", "schema"), ("study", "schema"), ("pass exam", "schema"), ("study", "instance")):
        batch.add_node("Event", {"id": event_id(text, level), "text": text, "level": level, "sources": ["test"]})
    batch.add_edge("BEFORE", {"src": event_id("learn"), "dst": event_id("study"), "sources": ["test"]})
    batch.add_edge("CAUSES", {"src": event_id("study"), "dst": event_id("pass exam"), "sources": ["test"]})
    embedded_store.write_batch(batch)
    return embedded_store


def test_find_event_by_text_id_and_level(small):
    assert find_event(small, "pass exam")[0] == event_id("pass exam", "schema")
    assert find_event(small, "Pass  Exam", "schema")[1]["text"] == "pass exam"  # normalised like the loaders
    assert find_event(small, event_id("learn"))[0] == event_id("learn")  # an id is accepted as is
    assert find_event(small, "study")[0] == event_id("study", "schema")  # schema first without a level
    assert find_event(small, "study", "instance")[0] == event_id("study", "instance")
    with pytest.raises(EventKGError, match="no Event with text 'learn' at level instance"):
        find_event(small, "learn", "instance")
    with pytest.raises(EventKGError, match="no Event with text 'nowhere' at any level"):
        find_event(small, "nowhere")
    with pytest.raises(EventKGError, match="level 'both'"):
        find_event(small, "learn", "both")


def test_default_answer_follows_the_relation_both_ways(small):
    assert default_answer(small, event_id("study"), "Causes") == event_id("pass exam")
    assert default_answer(small, event_id("study"), "After") == event_id("learn")  # BEFORE read backwards
    with pytest.raises(EventKGError, match="no Causes edge"):
        default_answer(small, event_id("pass exam"), "Causes")


def test_paths_between_names_each_step(small):
    assert paths_between(small, "learn", "pass exam", max_len=2) == [
        {"nodes": ["learn", "study", "pass_exam"], "relations": ["Before", "Causes"], "induced": "Before", "length": 2}
    ]
    assert paths_between(small, "learn", "pass exam", max_len=1) == []
