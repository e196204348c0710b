"""A failed ingest leaves the embedded store as it was, and an ingest that did not complete is
recorded on the store so readers are told, on both backends.

"As it was" is checked by content: :func:`tests.support.bad_days.digest` hashes every node and edge with
its properties through the public read API, computed here, not by the code under test.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

from eventkg.cli.app import app
from eventkg.graphstore import Batch, open_store
from tests.support.bad_days import (
    SAMPLES,
    copy_sample,
    digest,
    error_line,
    ingest,
    lines_of,
    prefilled,
    report_of,
    runner,
)


def test_a_row_broken_after_many_batches_leaves_a_filled_store_as_it_was(tmp_path):
    store = prefilled(tmp_path)
    before = digest(store)
    ev2 = copy_sample("ev2", tmp_path / "ev2")
    crr = ev2 / "S_CRR.jsonl"
    lines = lines_of(crr)
    crr.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2] + b"\n")  # the last line cut
    line = error_line(ingest(store, "ev2", ev2, "--batch-size", 5))  # many batches went by before it
    assert f"S_CRR.jsonl:{len(lines)}" in line
    assert digest(store) == before
    with open_store(str(store), read_only=True) as s:
        assert s.unfinished_ingests() == []  # nothing changed: nothing to warn about


def test_a_bad_relation_after_the_event_nodes_were_written_leaves_a_fresh_store_empty(tmp_path):
    """ASER into an empty store writes its event nodes while it reads the relations; a bad relation
    then (fail mode) deletes them again."""
    kg = tmp_path / "KG.db"
    kg.write_bytes((SAMPLES / "aser" / "KG.db").read_bytes())
    with sqlite3.connect(kg) as conn:
        last = conn.execute("SELECT max(rowid) FROM Relations").fetchone()[0]
        conn.execute("UPDATE Relations SET Co_Occurrence = 'many' WHERE rowid = ?", (last,))
    store = tmp_path / "kg.lbug"
    empty = tmp_path / "empty.lbug"
    open_store(str(empty)).close()
    error_line(ingest(store, "aser", kg))
    assert digest(store) == digest(empty)
    with open_store(str(store), read_only=True) as s:
        assert sum(s.counts()["nodes"].values()) == 0 and s.unfinished_ingests() == []
    report = report_of(ingest(store, "aser", kg, "--on-error", "skip", "--json"))  # the rest lands in skip mode
    assert report["rejected"] == 1 and report["nodes"]["Event"] > 0


_CRASH = textwrap.dedent("""
    import os, sys
    from eventkg.graphstore.ladybug.writer import TableWriter
    from eventkg.ingest import registry
    from eventkg.graphstore import open_store
    copy = TableWriter.copy_staged
    def copy_then_die(self, name, stage, base):
        copied = copy(self, name, stage, base)
        if name != "Event":
            os._exit(9)  # like SIGKILL: no cleanup runs
        return copied
    TableWriter.copy_staged = copy_then_die
    registry.ingest_source(open_store(sys.argv[1]), "eeckg", sys.argv[2])
""")


def test_a_crash_leaves_a_mark_readers_see_and_the_re_run_clears(tmp_path):
    store = tmp_path / "kg.lbug"
    done = subprocess.run([sys.executable, "-c", _CRASH, str(store), str(SAMPLES / "eeckg")], capture_output=True)
    assert done.returncode == 9, done.stderr
    with open_store(str(store), read_only=True) as s:
        marks = s.unfinished_ingests()
    assert len(marks) == 1 and marks[0].startswith("eeckg ")
    stats = runner.invoke(app, ["--store", str(store), "stats", "--json"])
    assert stats.exit_code == 0 and "unfinished ingest (eeckg " in stats.stderr
    refused = subprocess.run([sys.executable, "-m", "eventkg", "--store", str(store), "questions", "cec", "-n", "2",
                              "--out", str(tmp_path / "q.jsonl")], capture_output=True, text=True)
    lines = [ln for ln in refused.stderr.splitlines() if ln.strip()]
    assert refused.returncode == 2 and len(lines) == 1, refused.stderr
    assert "unfinished ingest" in lines[0] and "--allow-incomplete" in lines[0]
    allowed = runner.invoke(app, ["--store", str(store), "--allow-incomplete", "export", "graphml", str(tmp_path / "g.graphml")])
    assert allowed.exit_code == 0, allowed.output
    report_of(ingest(store, "eeckg", SAMPLES / "eeckg", "--json"))  # the same ingest again completes it
    with open_store(str(store), read_only=True) as s:
        assert s.unfinished_ingests() == []
    clean = tmp_path / "clean.lbug"
    report_of(ingest(clean, "eeckg", SAMPLES / "eeckg", "--json"))
    assert digest(store) == digest(clean)


def test_marks_are_kept_per_ingest_and_cleared_only_when_done_or_nothing_changed(store):
    assert store.unfinished_ingests() == []
    store.begin_ingest("ev2 a")
    batch = Batch()
    batch.add_node("Concept", {"id": "c1", "name": "x", "sources": ["t"]})
    store.write_batch(batch)
    store.end_ingest("ev2 a", completed=False)  # it wrote, then failed: the mark stays
    assert store.unfinished_ingests() == ["ev2 a"]
    store.begin_ingest("clomo b")
    assert store.unfinished_ingests() == ["ev2 a", "clomo b"]
    store.end_ingest("clomo b", completed=False)  # failed before writing anything: nothing to warn about
    assert store.unfinished_ingests() == ["ev2 a"]
    store.begin_ingest("ev2 a")  # the re-run
    store.end_ingest("ev2 a", completed=True)
    assert store.unfinished_ingests() == []


def _user_tables(store) -> None:
    """A table of the user's own beside ours (written through the Cypher passthrough), and one joining Event."""
    store.query("CREATE NODE TABLE Note(id STRING PRIMARY KEY, text STRING)", write=True)
    store.query("CREATE (:Note {id: 'n1', text: 'mine'})", write=True)


def test_clearing_the_embedded_store_drops_and_declares_its_tables_again_and_keeps_the_users_own(tmp_path):
    """Undoing a failed fresh ingest (and ``clear``) empties the data model's tables whatever their
    size in the cost of the schema; a table of the user's own stays, rows and all, and where one
    joins ours the rows are deleted instead of the tables dropped."""
    for joined in (False, True):
        path = tmp_path / f"kg{joined}.lbug"
        with open_store(str(path)) as store:
            _user_tables(store)
            if joined:
                store.query("CREATE REL TABLE Marks(FROM Note TO Event)", write=True)
            store.write_batch(Batch(nodes={"Event": [{"id": "e1", "text": "a"}, {"id": "e2", "text": "b"}]},
                                    edges={"BEFORE": [{"src": "e1", "dst": "e2"}]}))
            store.clear()
            counts = store.counts()
            assert sum([*counts["nodes"].values(), *counts["edges"].values()]) == 0
            store.write_batch(Batch(nodes={"Event": [{"id": "e3", "text": "c"}]}))  # the tables take rows again
        with open_store(str(path), read_only=True) as store:
            assert store.query("MATCH (n:Note) RETURN n.text AS t") == [{"t": "mine"}]
            assert store.query("MATCH (e:Event) RETURN e.id AS id") == [{"id": "e3"}]
            assert store.query("MATCH ()-[r:BEFORE]->() RETURN count(r) AS n") == [{"n": 0}]
