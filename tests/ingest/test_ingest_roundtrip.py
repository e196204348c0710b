"""EV² round trip: the relation stored between the types of e0 and e1 is the gold `rel`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore.model import FAMILIES, INVERSE, STORED_TO_FORWARD, event_id, family_of


def relations_between(store, a: str, b: str) -> set[str]:
    """Paper relations from a to b, read back through the inverse table."""
    found = set()
    for stored, forward in STORED_TO_FORWARD.items():
        ab = store.query(f"MATCH (x:Event {{id: $a}})-[r:{stored}]->(y:Event {{id: $b}}) RETURN count(r) AS n", {"a": a, "b": b})
        ba = store.query(f"MATCH (x:Event {{id: $a}})-[r:{stored}]->(y:Event {{id: $b}}) RETURN count(r) AS n", {"a": b, "b": a})
        if ab[0]["n"]:
            found.add(forward)
        if ba[0]["n"]:
            found.add(INVERSE[forward])
    return found


def check_round_trip(store, folder: Path) -> int:
    ingest_source(store, "ev2", folder)
    checked = 0
    for name in ("I_CEC.jsonl", "I_CRR.jsonl"):
        for line in (folder / name).read_text().splitlines():
            row = json.loads(line)
            t0, t1 = (event_id(row["event_type"][row[k]]) for k in ("e0", "e1"))
            found = relations_between(store, t0, t1)
            if row["rel"] == "Vague":
                family = family_of(row["choices"][0])
                assert not found & set(FAMILIES[family]), (name, row["id"], found)
            else:
                in_family = found & set(FAMILIES[family_of(row["rel"])])
                assert in_family == {row["rel"]}, (name, row["id"], row["rel"], found)
            checked += 1
    return checked


def test_round_trip_project_samples(store, samples_dir):
    assert check_round_trip(store, samples_dir / "ev2") >= 40


def test_round_trip_real_samples(store, shared_samples):
    assert check_round_trip(store, shared_samples / "ev2") == 24


def test_project_sample_is_big_enough_for_generation(embedded_store, samples_dir):
    """60-120 event types and 150+ schema edges over the three families."""
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    fams = {}
    for stored in STORED_TO_FORWARD:
        rows = embedded_store.query(
            f"MATCH (a:Event)-[r:{stored}]->(b:Event) WHERE a.level = 'schema' RETURN count(r) AS n")
        fams[stored] = rows[0]["n"]
    assert sum(fams.values()) >= 150 and min(fams.values()) >= 20, fams
    types = embedded_store.query(
        "MATCH (a:Event)-[r:CAUSES|BEFORE|HAS_SUBEVENT]-(b:Event) WHERE a.level = 'schema' RETURN count(DISTINCT a.id) AS n")
    assert 60 <= types[0]["n"] <= 120


@pytest.mark.parametrize("name", ["I_CEC.jsonl", "I_CRR.jsonl", "S_CEC.jsonl", "S_CRR.jsonl"])
def test_question_payload_is_lossless(embedded_store, samples_dir, name):
    ingest_source(embedded_store, "ev2", samples_dir / "ev2" / name)
    rows = [json.loads(line) for line in (samples_dir / "ev2" / name).read_text().splitlines()]
    stored = [json.loads(q["payload"]) for q in embedded_store.iter_nodes("Question")]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(map(key, stored)) == sorted(map(key, rows))
