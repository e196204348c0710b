"""The store-facing CLI: stats, cypher, and one-line errors for bad stores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eventkg.graphstore import Batch, open_store
from eventkg.graphstore.model import event_id


def eventkg(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eventkg", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL with two events and one edge, on each backend."""
    if backend == "ladybug":
        url = str(tmp_path / "cli.lbug")
    else:
        url = request.getfixturevalue("neo4j_server").url
    with open_store(url) as store:
        store.clear()
        b = Batch()
        for t in ("study", "pass exam"):
            b.add_node("Event", {"id": event_id(t), "text": t, "level": "schema", "sources": ["cli"],
                                 "frequency": 1.5 if t == "study" else 3.0})
        b.add_edge("CAUSES", {"src": event_id("study"), "dst": event_id("pass exam"), "sources": ["cli"]})
        store.write_batch(b)
    return url


def test_stats_json(store_url):
    proc = eventkg("--store", store_url, "stats", "--json")
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout)
    assert counts["nodes"]["Event"] == 2
    assert counts["edges"]["CAUSES"] == 1
    assert counts["edges"]["BEFORE"] == 0


def test_store_from_environment(store_url):
    import os

    proc = subprocess.run(
        [sys.executable, "-m", "eventkg", "stats", "--json"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "EVENTKG_STORE": store_url},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["nodes"]["Event"] == 2


def test_cypher_json_rows_keyed_by_return_names(store_url):
    proc = eventkg(
        "--store", store_url, "cypher", "--json",
        "MATCH (a:Event)-[:CAUSES]->(b:Event) RETURN a.text AS cause, b.text AS effect",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"cause": "study", "effect": "pass exam"}]


def test_cypher_params(store_url):
    proc = eventkg(
        "--store", store_url, "cypher", "--json", "-p", "t=study",
        "MATCH (a:Event) WHERE a.text = $t RETURN a.text AS text",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"text": "study"}]


def test_cypher_json_gives_numbers_as_json_numbers(store_url):
    """Aggregates come back as JSON numbers on both backends (LadybugDB's ``sum()`` of integers is
    an INT128 the engine hands over as a ``Decimal``, which used to print as the string "2")."""
    proc = eventkg(
        "--store", store_url, "cypher", "--json",
        "MATCH (a:Event) RETURN sum(1) AS n, count(*) AS c, sum(a.frequency) AS f, "
        "sum(CASE WHEN a.text = 'study' THEN 1 ELSE 0 END) AS one",
    )
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)[0]
    assert (row["n"], row["c"], row["one"]) == (2, 2, 1)
    assert all(type(row[k]) is int for k in ("n", "c", "one")), row
    assert row["f"] == pytest.approx(4.5) and type(row["f"]) is float


@pytest.mark.parametrize("query", ["CREATE (n)", "CREATE (n:Event {id: 'x', text: 'x'})", "MATCH (n:Event) DELETE n"])
def test_cypher_refuses_writes_without_flag(store_url, query):
    before = eventkg("--store", store_url, "stats", "--json").stdout
    proc = eventkg("--store", store_url, "cypher", query)
    assert_one_line_error(proc, "--write")
    assert eventkg("--store", store_url, "stats", "--json").stdout == before


def test_cypher_write_flag_allows_writes(store_url):
    proc = eventkg("--store", store_url, "cypher", "--write", "CREATE (n:Event {id: 'new', text: 'new'})")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(eventkg("--store", store_url, "stats", "--json").stdout)["nodes"]["Event"] == 3


def test_unreachable_neo4j_is_one_line_naming_the_url():
    proc = eventkg("--store", "neo4j://127.0.0.1:1", "stats")
    assert_one_line_error(proc, "neo4j://127.0.0.1:1")


def test_store_path_that_is_a_regular_file(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("not a database\n")
    proc = eventkg("--store", str(f), "stats")
    assert_one_line_error(proc, str(f), "not a LadybugDB database")
    assert f.read_text() == "not a database\n"


def test_store_path_that_is_a_folder(tmp_path):
    proc = eventkg("--store", str(tmp_path), "stats")
    assert_one_line_error(proc, str(tmp_path), "folder")


def test_store_path_that_is_unwritable():
    proc = eventkg("--store", "/proc/eventkg-test/store.lbug", "stats")
    assert_one_line_error(proc, "/proc/eventkg-test/store.lbug")


def test_unknown_scheme():
    proc = eventkg("--store", "postgres://x/y", "stats")
    assert_one_line_error(proc, "postgres://x/y", "unknown scheme")


@pytest.mark.parametrize("command", [["stats"], ["export", "graphml", "{out}"]])
def test_reading_a_store_that_does_not_exist_is_an_error_and_creates_nothing(tmp_path, command):
    """A mistyped --store used to answer with an empty store's zeros (and leave a new file behind)."""
    missing = tmp_path / "typo" / "store.lbug"
    out = tmp_path / "out.graphml"
    proc = eventkg("--store", str(missing), *[a.format(out=out) for a in command])
    assert proc.returncode == 2
    assert_one_line_error(proc, str(missing), "no store at")
    assert not missing.exists() and not missing.parent.exists() and not out.exists()
