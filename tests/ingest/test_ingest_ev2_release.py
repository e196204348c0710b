"""EV² rows as odd as the official release's: instances named without text, context given only
as text, a truncated file. Expected values are worked by hand here or come from the
independent reader in ``tests/support/expected_counts.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eventkg import ingest_source
from eventkg.cli.app import app
from eventkg.graphstore import open_store
from eventkg.graphstore.model import event_id, normalise_text, stable_id
from eventkg.queries.stats import instances_without_text
from tests.support import expected_counts as expect

runner = CliRunner()

# One question of the release's shape in both instance files (same id, same instances):
# e1 'event2' has no entry in 'instances', context event 'event3' has an empty text.
INSTANCES = {"event1": "Ann studied every night.", "event3": "", "event4": "Ann slept badly.", "event5": "Ann ate."}
TYPES = {"event1": "study", "event2": "pass_exam", "event3": "learn", "event4": "oversleep", "event5": "eat"}
I_CEC = {
    "id": "7-1",
    "e0": "event1",
    "rel": "Causes",
    "e1": "event2",
    "negative_chosen": ["event4", "event5", "event3"],
    "context": '"event3" is before "event1".',
    "context_tpl": [["event3", "Before", "event1"]],
    "question": 'Which is result of "event1"?',
    "choices": ["event4", "event2", "event5", "event3"],
    "instances": INSTANCES,
    "event_type": TYPES,
    "event_relation": [["learn", "Before", "study"], ["study", "Causes", "pass_exam"]],
}
# the CRR twin gives no context_tpl (as the release's Vague rows): its context is read from the text
I_CRR = {
    "id": "7-1",
    "e0": "event1",
    "rel": "Causes",
    "e1": "event2",
    "context": '"event3" is before "event1".',
    "question": 'Is "event1" "Causes", "IsResult" or "Vague" "event2"?',
    "choices": ["Causes", "IsResult", "Vague"],
    "instances": INSTANCES,
    "event_type": TYPES,
    "event_relation": [["study", "Causes", "pass_exam"]],
}


def write(folder: Path, files: dict[str, list]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        (folder / name).write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return folder


def textless_id(qid: str, iid: str, type_name: str) -> str:
    """The documented id of an instance without text (ingest/ev2.py, README)."""
    return stable_id("Event", "instance", "", "ev2", qid, iid, normalise_text(type_name))


def one(store, cypher: str, **params) -> int:
    return store.query(cypher, params)[0]["n"]


def test_textless_instance_is_linked_as_the_question_says(store, tmp_path):
    report = ingest_source(store, "ev2", write(tmp_path / "ev2", {"I_CEC.jsonl": [I_CEC], "I_CRR.jsonl": [I_CRR]}), partial=True)
    assert report.rejected == 0 and report.extra["instances_without_text"] == 2
    e2, e3 = textless_id("7-1", "event2", "pass_exam"), textless_id("7-1", "event3", "learn")
    e1 = event_id(INSTANCES["event1"], "instance")
    nodes = store.get_nodes("Event", [e1, e2, e3])
    assert {k: (v["text"], v["level"]) for k, v in nodes.items()} == {
        e1: ("Ann studied every night.", "instance"),
        e2: ("", "instance"),
        e3: ("", "instance"),
    }
    # 3 instances with text + 2 without; 5 types (pass_exam also a type of a texted instance: no)
    assert instances_without_text(store) == 2
    assert one(store, "MATCH (e:Event) WHERE e.level = 'instance' RETURN count(e) AS n") == 5
    for iid, tname in (("event2", "pass_exam"), ("event3", "learn")):
        src = textless_id("7-1", iid, tname)
        assert (
            one(
                store,
                "MATCH (a:Event {id: $a})-[:HAS_TYPE]->(t:Event {id: $t}) RETURN count(*) AS n",
                a=src,
                t=event_id(tname),
            )
            == 1
        )
    # e1 without text: asked by both questions, the correct CEC choice, the gold edge from e0
    assert (
        one(store, "MATCH (q:Question)-[r:ASKS]->(e:Event {id: $e}) WHERE r.role = 'e1' RETURN count(q) AS n", e=e2)
        == 2
    )
    assert (
        one(
            store,
            "MATCH (q:Question)-[r:HAS_CHOICE]->(e:Event {id: $e}) WHERE r.correct = 1 RETURN count(q) AS n",
            e=e2,
        )
        == 1
    )
    assert one(store, "MATCH (a:Event {id: $a})-[:CAUSES]->(b:Event {id: $b}) RETURN count(*) AS n", a=e1, b=e2) == 1
    # the empty-text context event: a choice, in both questions' context (the CRR one read from text)
    assert one(store, "MATCH (a:Event {id: $a})-[:BEFORE]->(b:Event {id: $b}) RETURN count(*) AS n", a=e3, b=e1) == 1
    assert one(store, "MATCH (q:Question)-[:HAS_CONTEXT]->(e:Event {id: $e}) RETURN count(q) AS n", e=e3) == 2
    assert one(store, "MATCH (q:Question)-[:HAS_CHOICE]->(e:Event {id: $e}) RETURN count(q) AS n", e=e3) == 1
    # the types carry the context and gold edges too
    assert (
        one(
            store,
            "MATCH (a:Event {id: $a})-[:BEFORE]->(b:Event {id: $b}) RETURN count(*) AS n",
            a=event_id("learn"),
            b=event_id("study"),
        )
        == 1
    )


def test_textless_ids_are_scoped_by_question(embedded_store, tmp_path):
    """The same instance id in another question is another event; re-ingesting adds nothing."""
    other = dict(I_CEC, id="8-0")
    folder = write(tmp_path / "ev2", {"I_CEC.jsonl": [I_CEC, other]})
    ingest_source(embedded_store, "ev2", folder, partial=True)
    assert instances_without_text(embedded_store) == 4  # event2 and event3 of 7-1 and of 8-0
    before = embedded_store.counts()
    report = ingest_source(embedded_store, "ev2", folder, partial=True)
    assert embedded_store.counts() == before and report.extra["instances_without_text"] == 4


def test_an_id_with_neither_text_nor_type_is_refused(embedded_store, tmp_path):
    bad = dict(I_CEC, event_type={k: v for k, v in TYPES.items() if k != "event5"})
    bad["instances"] = {k: v for k, v in INSTANCES.items() if k != "event5"}
    folder = write(tmp_path / "ev2", {"I_CEC.jsonl": [I_CEC, bad]})
    report = ingest_source(embedded_store, "ev2", folder, on_error="skip", partial=True)
    assert report.rejected == 1
    with pytest.raises(
        Exception, match=r"I_CEC.jsonl:2: instance id 'event5' has no entry in 'instances' and no 'event_type'"
    ):
        ingest_source(embedded_store, "ev2", folder, partial=True)


def test_context_is_read_from_text_only_when_it_is_all_triples(embedded_store, tmp_path):
    row = {
        "id": "3-0",
        "e0": "study",
        "rel": "Vague",
        "e1": "eat",
        "question": "?",
        "choices": ["Causes", "IsResult", "Vague"],
        "context": '"learn" has subevent "read". "study" is a result of "learn".',
    }
    free = dict(row, id="4-0", context="Ann learned, then studied.")
    ingest_source(embedded_store, "ev2", write(tmp_path / "ev2", {"S_CRR.jsonl": [row, free]}), partial=True)
    c = expect.nonzero(embedded_store.counts())
    # 2 triples read: learn HAS_SUBEVENT read, learn CAUSES study; Vague adds no edge; free text adds none
    assert c["edges"] == {"HAS_SUBEVENT": 1, "CAUSES": 1, "HAS_CONTEXT": 3, "ASKS": 4}
    stored = {q["qid"]: q.get("context_tpl") for q in embedded_store.iter_nodes("Question")}
    assert stored == {"3-0": None, "4-0": None}  # as in the source


def test_project_samples_carry_the_release_oddities(samples_dir):
    """The bundled sample keeps questions like the release's (make_samples.release_quirks)."""
    rows = [
        json.loads(line)
        for name in ("I_CEC.jsonl", "I_CRR.jsonl")
        for line in (samples_dir / "ev2" / name).read_text().splitlines()
    ]
    no_entry = [(r["id"], k) for r in rows for k in r["event_type"] if k not in r["instances"]]
    empty = [(r["id"], k) for r in rows for k, v in r["instances"].items() if not v.strip()]
    answer_missing = [r["id"] for r in rows if r["e1"] not in r["instances"]]
    assert len(no_entry) == 2 and len(empty) == 1 and len(answer_missing) == 1
    vague_no_tpl = [r for r in rows if r["rel"] == "Vague" and "context_tpl" not in r]
    assert vague_no_tpl and any(
        f'"{k}"' in r["context"] for r in vague_no_tpl for k in r["event_type"] if k not in r["instances"]
    )


def test_project_samples_count_instances_without_text(store, samples_dir):
    report = ingest_source(store, "ev2", samples_dir / "ev2")
    # by hand: the answer without entry, the empty context text, the Vague row's typed context id
    assert report.rejected == 0 and report.extra["instances_without_text"] == 3
    assert expect.ev2_instances_without_text(samples_dir / "ev2") == 3
    assert instances_without_text(store) == 3


def test_cli_summary_and_stats_say_so(tmp_path, samples_dir):
    url = str(tmp_path / "kg.lbug")
    result = runner.invoke(app, ["--store", url, "ingest", "ev2", str(samples_dir / "ev2")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "3 instance event(s) named by a question without text" in result.stdout
    stats = runner.invoke(app, ["--store", url, "stats", "--json"])
    assert stats.exit_code == 0 and json.loads(stats.stdout)["instances_without_text"] == 3
    table = runner.invoke(app, ["--store", url, "stats"], terminal_width=200)
    assert "instances without text" in table.stdout


def total(url: str) -> int:
    with open_store(url) as s:
        c = s.counts()
    return sum(c["nodes"].values()) + sum(c["edges"].values())


def test_truncated_file_one_line_nothing_written_rerun_finishes(tmp_path, samples_dir):
    """The last line of I_CRR.jsonl cut mid-JSON (a copy interrupted): one line naming file and
    line, nothing written; skip mode counts and writes the reject; a re-run on the whole file
    ends with exactly the graph of a clean ingest."""
    folder = shutil.copytree(samples_dir / "ev2", tmp_path / "ev2")
    path = folder / "I_CRR.jsonl"
    whole = path.read_text()
    lines = whole.splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    url, rejects = str(tmp_path / "kg.lbug"), tmp_path / "rejects.jsonl"

    failed = runner.invoke(app, ["--store", url, "ingest", "ev2", str(folder)])
    assert failed.exit_code != 0
    errors = [ln for ln in failed.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and f"{path}:{len(lines)}: broken JSON line" in errors[0], failed.stderr
    assert total(url) == 0

    skipped = runner.invoke(
        app, ["--store", url, "ingest", "ev2", str(folder), "--on-error", "skip", "--rejects", str(rejects), "--json"]
    )
    assert skipped.exit_code == 0, skipped.output
    assert json.loads(skipped.stdout)["rejected"] == 1
    bad = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [(b["file"], b["line"]) for b in bad] == [(str(path), len(lines))]

    path.write_text(whole)
    rerun = runner.invoke(app, ["--store", url, "ingest", "ev2", str(folder), "--json"])
    assert rerun.exit_code == 0 and json.loads(rerun.stdout)["rejected"] == 0
    with open_store(url) as s:
        assert expect.nonzero(s.counts()) == expect.ev2(samples_dir / "ev2")


def test_real_sample_ingests_with_nothing_rejected(store, shared_samples):
    report = ingest_source(store, "ev2", shared_samples / "ev2")
    lines = sum(1 for f in (shared_samples / "ev2").glob("*.jsonl") for ln in f.read_text().splitlines() if ln.strip())
    assert report.rejected == 0 and report.rows >= lines > 0
    assert expect.nonzero(store.counts()) == expect.ev2(shared_samples / "ev2")
    assert report.extra["instances_without_text"] == expect.ev2_instances_without_text(shared_samples / "ev2")
    assert instances_without_text(store) == report.extra["instances_without_text"]
