"""Malformed input through the CLI: one-line error naming file, line/row and reason; nothing
of the batch written. With --on-error skip, good rows land and bad ones go to the rejects file."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eventkg.cli.app import app
from eventkg.graphstore import open_store

runner = CliRunner()

GOOD_CEC = {"id": "1-0", "e0": "study", "rel": "Causes", "e1": "pass_exam", "negative_chosen": ["a", "b", "c"],
            "context": "", "context_tpl": [["learn", "Before", "study"]], "question": "?", "choices": ["a", "pass_exam", "b", "c"]}


def ingest(store_path: Path, *args: str):
    return runner.invoke(app, ["--store", str(store_path), "ingest", *map(str, args)])


def total(store_path: Path) -> int:
    with open_store(str(store_path)) as s:
        c = s.counts()
    return sum(c["nodes"].values()) + sum(c["edges"].values())


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def error_line(result) -> str:
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


CASES = {
    "broken JSON line": ("ev2", "S_CEC.jsonl", [GOOD_CEC, '{"id": "2-0", "e0": ', GOOD_CEC], ":2: broken JSON line"),
    "missing field": ("ev2", "S_CEC.jsonl", [GOOD_CEC, {k: v for k, v in GOOD_CEC.items() if k != "e1"}], ":2: missing field 'e1'"),
    "unknown relation": ("ev2", "S_CEC.jsonl", [GOOD_CEC, dict(GOOD_CEC, rel="Causess")], ":2: unknown relation 'Causess'"),
    "unknown EECKG relation": ("eeckg", "t.tsv", ["head\trelation\ttail", "learn\tCauses\tpass exam", "learn\tFoo\tx"],
                               ":3: unknown relation 'Foo'"),
    # a tab-separated file has no quoting: a stray quote stays on its own line (it ran on to the end)
    "stray quote in a TSV": ("eeckg", "t.tsv", ["head\trelation\ttail", "learn\tCauses\tpass exam",
                                                "study\t\"Causes\tget good grades", "rest\tCauses\tfeel better"],
                             ":3: unknown relation '\"Causes'"),
    "unclosed quote in a CSV": ("eeckg", "t.csv", ["head,relation,tail", "learn,Causes,pass exam",
                                                   'study,"Causes,get good grades', "rest,Causes,feel better"],
                                ":3: a quote opened on line 3 is not closed on it (lines 3-4 read as one row)"),
    "AbsPyramid missing concept": ("abspyramid", "train.json", [{"event": "PersonX <eat> food", "concept": "consume", "label": 1, "type": "verb"},
                                                                 {"event": "PersonX <eat> food", "label": 1, "type": "verb"}],
                                   ":2: missing field 'concept'"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_row_fails_with_one_line_and_writes_nothing(tmp_path, case):
    source, name, rows, expected = CASES[case]
    path = write_lines(tmp_path / name, rows)
    store = tmp_path / "kg.lbug"
    result = ingest(store, source, path)
    assert result.exit_code != 0
    line = error_line(result)
    assert str(path) + expected in line
    assert total(store) == 0


@pytest.mark.parametrize("case", CASES)
def test_skip_keeps_good_rows_and_writes_rejects(tmp_path, case):
    source, name, rows, expected = CASES[case]
    path = write_lines(tmp_path / name, rows)
    store, rejects = tmp_path / "kg.lbug", tmp_path / "rejects.jsonl"
    result = ingest(store, source, path, "--on-error", "skip", "--rejects", rejects, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == 1 and report["good"] >= 1
    bad = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert len(bad) == 1 and bad[0]["file"] == str(path)
    assert f"{bad[0]['file']}:{bad[0]['line']}: {bad[0]['reason']}".startswith(str(path) + expected)
    assert bad[0]["raw"]
    assert total(store) > 0


def test_sqlite_with_wrong_tables(tmp_path):
    db = tmp_path / "KG.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE Nodes (_id PRIMARY KEY, words TEXT)")
    conn.commit()
    conn.close()
    for mode in ("fail", "skip"):
        result = ingest(tmp_path / "kg.lbug", "aser", db, "--on-error", mode)
        assert result.exit_code != 0
        line = error_line(result)
        assert str(db) in line and "no table Eventualities" in line and "Nodes" in line


def test_sqlite_with_missing_column(tmp_path, samples_dir):
    db = tmp_path / "KG.db"
    shutil.copy(samples_dir / "aser" / "KG.db", db)
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE Relations DROP COLUMN Exception")
    conn.commit()
    conn.close()
    result = ingest(tmp_path / "kg.lbug", "aser", db)
    assert result.exit_code != 0
    assert "Relations lacks columns Exception" in error_line(result)


def test_aser_relation_to_unknown_eventuality(tmp_path, samples_dir):
    db = tmp_path / "KG.db"
    shutil.copy(samples_dir / "aser" / "KG.db", db)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO Relations (_id, hid, tid, Result) SELECT 'r-bad', 'nope', tid, 1.0 FROM Relations LIMIT 1")
    conn.commit()
    conn.close()
    result = ingest(tmp_path / "a.lbug", "aser", db)
    assert result.exit_code != 0
    assert "[Relations _id=r-bad]: hid 'nope'" in error_line(result)
    rejects = tmp_path / "r.jsonl"
    result = ingest(tmp_path / "b.lbug", "aser", db, "--on-error", "skip", "--rejects", rejects, "--json")
    assert json.loads(result.stdout)["rejected"] == 1
    assert json.loads(rejects.read_text())["line"] == "Relations _id=r-bad"


def test_empty_file(tmp_path):
    path = tmp_path / "S_CRR.jsonl"
    path.write_text("")
    result = ingest(tmp_path / "kg.lbug", "ev2", path)
    assert result.exit_code != 0
    assert f"{path}:0: empty file" in error_line(result)
    clomo = tmp_path / "zero_test.json"
    clomo.write_text("  \n")
    result = ingest(tmp_path / "kg.lbug", "clomo", clomo)
    assert result.exit_code != 0
    assert f"{clomo}:0: empty file" in error_line(result)


def test_folder_without_expected_files(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    for source in ("ev2", "clomo", "abspyramid", "aser"):
        result = ingest(tmp_path / "kg.lbug", source, folder)
        assert result.exit_code != 0
        line = error_line(result)
        assert str(folder) in line and ("no" in line)
    missing = tmp_path / "nowhere"
    assert "no such file or folder" in error_line(ingest(tmp_path / "kg.lbug", "ev2", missing))


def test_non_english_conceptnet_node_is_rejected_with_reason(tmp_path):
    path = tmp_path / "assertions.csv"
    path.write_text(
        "/a/[/r/Causes/,/c/en/learn/,/c/en/know/]\t/r/Causes\t/c/en/learn\t/c/en/know\t{\"weight\": 2.0}\n"
        "/a/[/r/Causes/,/c/fr/apprendre/,/c/en/know/]\t/r/Causes\t/c/fr/apprendre\t/c/en/know\t{\"weight\": 1.0}\n"
        "/a/[/r/ExternalURL/,/c/en/learn/,http://x/]\t/r/ExternalURL\t/c/en/learn\thttp://x\t{}\n"
    )
    rejects = tmp_path / "rejects.jsonl"
    result = ingest(tmp_path / "kg.lbug", "eeckg", path, "--on-error", "skip", "--rejects", rejects, "--json")
    assert json.loads(result.stdout)["rejected"] == 2
    reasons = [json.loads(line)["reason"] for line in rejects.read_text().splitlines()]
    assert "non-English node '/c/fr/apprendre'" in reasons[0]
    assert "ExternalURL" in reasons[1]
    with open_store(str(tmp_path / "kg.lbug")) as s:
        assert s.counts()["edges"]["CAUSES"] == 1
