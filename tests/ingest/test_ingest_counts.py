"""Store counts after ingesting samples == counts computed directly from the files."""

from __future__ import annotations

import pytest

from eventkg import ingest_source
from tests.support import expected_counts as expect


def _check(store, expected: dict) -> None:
    assert expect.nonzero(store.counts()) == expected


@pytest.mark.parametrize("source", ["ev2", "clomo", "eeckg", "abspyramid"])
def test_project_samples_counts(store, samples_dir, source):
    report = ingest_source(store, source, samples_dir / source)
    assert report.rejected == 0 and report.rows > 0
    _check(store, getattr(expect, source)(samples_dir / source))


def test_project_aser_counts(store, samples_dir):
    kg, cdb = samples_dir / "aser" / "KG.db", samples_dir / "aser" / "concept.db"
    report = ingest_source(store, "aser", kg, map_events=True, concepts=cdb)
    assert report.rejected == 0
    _check(store, expect.aser(kg, map_events=True, concepts=cdb))


@pytest.mark.parametrize("source", ["ev2", "clomo"])
def test_real_samples_counts(store, shared_samples, source):
    report = ingest_source(store, source, shared_samples / source)
    assert report.rejected == 0 and report.rows > 0
    _check(store, getattr(expect, source)(shared_samples / source))


@pytest.mark.parametrize("map_events", [False, True])
def test_real_aser_counts(store, shared_samples, map_events):
    kg = shared_samples / "aser" / "KG.db"
    report = ingest_source(store, "aser", shared_samples / "aser", map_events=map_events)
    assert report.rows == 1100 and report.rejected == 0
    _check(store, expect.aser(kg, map_events=map_events))


def test_sources_share_event_nodes(embedded_store, samples_dir):
    """An event type in EV² and EECKG is one node carrying both sources; AbsPyramid heads = ASER words."""
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    ingest_source(embedded_store, "eeckg", samples_dir / "eeckg")
    ingest_source(embedded_store, "aser", samples_dir / "aser")
    ingest_source(embedded_store, "abspyramid", samples_dir / "abspyramid")
    from eventkg.graphstore.model import event_id

    both = embedded_store.get_nodes("Event", [event_id("study_for_exam"), event_id("PersonX study for exam")])
    assert both[event_id("study_for_exam")]["sources"] == ["eeckg", "ev2"]
    assert both[event_id("PersonX study for exam")]["sources"] == ["abspyramid", "aser"]
    union = set(expect.ev2(samples_dir / "ev2", raw=True).nodes["Event"])
    for other in (expect.eeckg(samples_dir / "eeckg", raw=True), expect.abspyramid(samples_dir / "abspyramid", raw=True),
                  expect.aser(samples_dir / "aser" / "KG.db", raw=True)):
        union |= {("schema", text) for text in other.nodes["Event"]}
    assert embedded_store.counts()["nodes"]["Event"] == len(union)
