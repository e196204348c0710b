"""A dataset folder lacking parts, paths an ingest cannot write
to, CLoMo's per-type subset folders, and the smaller messages (JSON columns, a locked or folder
KG.db, ``--batch-size``). Expected values are worked out from the files the tests write."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest

from eventkg.graphstore import open_store
from eventkg.tasks.clomo.tasks import ClomoTask
from tests.support.bad_days import (
    SAMPLES,
    copy_sample,
    digest,
    edit_json_line,
    error_line,
    ingest,
    lines_of,
    nodes,
    prefilled,
    report_of,
    runner,
    set_line,
)

# --- point 7: missing parts of a dataset folder ----------------------------------------------


def test_ev2_folder_without_i_crr(tmp_path):
    folder = copy_sample("ev2", tmp_path / "ev2")
    (folder / "I_CRR.jsonl").unlink()
    store = prefilled(tmp_path)
    before = digest(store)
    line = error_line(ingest(store, "ev2", folder))
    assert f"{folder}: a EV² folder holds S_CEC.jsonl, S_CRR.jsonl, I_CEC.jsonl, I_CRR.jsonl, clustering.json" in line
    assert "this one lacks I_CRR.jsonl " in line and digest(store) == before
    result = ingest(store, "ev2", folder, "--partial")
    assert result.exit_code == 0 and "left out (--partial): I_CRR.jsonl" in result.stdout
    assert report_of(ingest(store, "ev2", folder, "--partial", "--json"))["left_out"] == ["I_CRR.jsonl"]


def test_ev2_s_cec_that_is_a_folder(tmp_path):
    folder = copy_sample("ev2", tmp_path / "ev2")
    (folder / "S_CEC.jsonl").unlink()
    (folder / "S_CEC.jsonl").mkdir()
    line = error_line(ingest(tmp_path / "kg.lbug", "ev2", folder))
    assert "lacks S_CEC.jsonl (a folder, not a file)" in line


def test_clomo_without_its_dev_split(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    for prompt in ("zero", "few", "cot"):  # a release: train, dev, test; here dev is lost
        shutil.copy(SAMPLES / "clomo" / f"{prompt}_dev.json", folder / f"{prompt}_train.json")
        shutil.copy(SAMPLES / "clomo" / f"{prompt}_test.json", folder / f"{prompt}_test.json")
    line = error_line(ingest(tmp_path / "kg.lbug", "clomo", folder))
    assert "lacks zero_dev.json, few_dev.json, cot_dev.json " in line
    report = report_of(ingest(tmp_path / "kg.lbug", "clomo", folder, "--partial", "--json"))
    assert report["left_out"] == ["zero_dev.json", "few_dev.json", "cot_dev.json"]


def test_clomo_split_lacking_a_prompt_setting(tmp_path):
    folder = copy_sample("clomo", tmp_path / "clomo")
    (folder / "few_test.json").unlink()
    assert "lacks few_test.json " in error_line(ingest(tmp_path / "kg.lbug", "clomo", folder))


def test_the_bundled_samples_are_whole(tmp_path):
    for source in ("ev2", "clomo"):
        assert report_of(ingest(tmp_path / f"{source}.lbug", source, SAMPLES / source, "--json"))["left_out"] == []


# --- point 9: environment errors before anything is written ----------------------------------

def test_rejects_naming_a_folder(tmp_path):
    store = tmp_path / "kg.lbug"
    line = error_line(ingest(store, "ev2", SAMPLES / "ev2", "--on-error", "skip", "--rejects", tmp_path))
    assert "the rejects path is a folder" in line and line.endswith("(--rejects)") and not store.exists()


def test_store_whose_folder_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    line = error_line(ingest(tmp_path / "afile" / "kg.lbug", "ev2", SAMPLES / "ev2"))
    assert "is a file, not a folder" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_store_folder_not_writable(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        line = error_line(ingest(folder / "kg.lbug", "ev2", SAMPLES / "ev2"))
    finally:
        folder.chmod(0o755)
    assert "not writable" in line and not (folder / "kg.lbug").exists()


# --- point 10: CLoMo's type_picked / type_excluded subsets -------------------------------------

def _release_shaped(tmp_path):
    """data/{zero,few,cot}_{dev,test}.json + type_picked/<p>_o<rel>_test.json (the test items of
    one relation) + type_excluded/<p>_x<rel>_dev.json (the dev items of the other relations)."""
    data = copy_sample("clomo", tmp_path / "data")
    codes = {0: "na", 1: "sa", 2: "s", 3: "w"}
    test = json.loads((data / "zero_test.json").read_text())
    dev = json.loads((data / "zero_dev.json").read_text())
    expected: dict[str, set[str]] = {}
    for sub, split, items, keep in (("type_picked", "test", test, lambda q, c: q == c),
                                    ("type_excluded", "dev", dev, lambda q, c: q != c)):
        (data / sub).mkdir()
        for code, name in codes.items():
            chosen = [it for it in items if keep(it["qtype"], code)]
            if not chosen:
                continue
            tag = f"{'o' if sub == 'type_picked' else 'x'}{name}_{split}"
            expected[tag] = {it["id_string"] for it in chosen}
            for prompt in ("zero", "few", "cot"):
                (data / sub / f"{prompt}_{tag}.json").write_text(json.dumps(chosen))
    return data, {it["id_string"] for it in test + dev}, expected


def test_clomo_subsets_are_recorded_not_new_items(tmp_path):
    data, ids, expected = _release_shaped(tmp_path)
    store = tmp_path / "kg.lbug"
    report = report_of(ingest(store, "clomo", data, "--json"))
    args = nodes(store, "Argument")
    assert len(args) == 2 * len(ids) and {a["id_string"] for a in args} == ids
    for tag, members in expected.items():
        assert {a["id_string"] for a in args if f"clomo:{tag}" in a["sources"]} == members, tag
    assert report["rejected"] == 0
    with open_store(str(store), read_only=True) as s:
        for tag, members in expected.items():
            assert {it.id for it in ClomoTask().build(s, split=tag)} == members
        assert {it.id for it in ClomoTask().build(s, split="test")} == {
            it["id_string"] for it in json.loads((data / "zero_test.json").read_text())}


def test_eval_clomo_split_selects_a_subset(tmp_path):
    data, _, expected = _release_shaped(tmp_path)
    store = tmp_path / "kg.lbug"
    report_of(ingest(store, "clomo", data, "--json"))
    tag = next(iter(expected))
    out = tmp_path / "out"
    result = runner.invoke(app_cli(), ["--store", str(store), "eval", "clomo", "--model", "random", "--split", tag,
                                       "--out", str(out), "--no-cache", "--json"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["random"]["n"] == len(expected[tag])


def app_cli():
    from eventkg.cli.app import app

    return app


def test_clomo_subset_item_of_other_content_is_refused(tmp_path):
    data, _, expected = _release_shaped(tmp_path)
    target = next((data / "type_picked").glob("few_*.json"))
    items = json.loads(target.read_text())
    items[0]["output"] = items[0]["output"] + " Changed."
    target.write_text(json.dumps(items))
    line = error_line(ingest(tmp_path / "kg.lbug", "clomo", data))
    assert f"{target} [item 0]: repeats id_string" in line


# --- point 12: the smaller ones ------------------------------------------------------------------

def test_json_error_says_at_column_once(tmp_path):
    folder = copy_sample("ev2", tmp_path / "ev2")
    target = folder / "S_CRR.jsonl"
    set_line(target, 2, lines_of(target)[1].replace(b'"question": "', b'"question": "\x01', 1))
    line = error_line(ingest(tmp_path / "kg.lbug", "ev2", folder))
    assert f"{target}:2: broken JSON line: Invalid control character at column" in line and "at at" not in line


def test_locked_aser_file_says_it_is_locked(tmp_path):
    kg = tmp_path / "KG.db"
    shutil.copy(SAMPLES / "aser" / "KG.db", kg)
    writer = sqlite3.connect(kg, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        line = error_line(ingest(tmp_path / "kg.lbug", "aser", kg))
    finally:
        writer.close()
    assert f"{kg}: the database is locked" in line and "not an SQLite database" not in line


def test_folder_named_kg_db(tmp_path):
    (tmp_path / "aser" / "KG.db").mkdir(parents=True)
    for path in (tmp_path / "aser", tmp_path / "aser" / "KG.db"):
        line = error_line(ingest(tmp_path / "kg.lbug", "aser", path))
        assert "KG.db: is a folder, not an SQLite file" in line


def test_batch_size_help_and_bound(tmp_path):
    text = runner.invoke(app_cli(), ["ingest", "--help"], terminal_width=200).stdout
    assert "trades memory for speed and store size" in " ".join(text.replace("│", " ").split())
    line = error_line(ingest(tmp_path / "kg.lbug", "ev2", SAMPLES / "ev2", "--batch-size", "0"))
    assert "batch_size: must be at least 1" in line and line.endswith("(--batch-size)")


def test_ev2_vague_row_repeated_with_other_text_is_refused(tmp_path):
    folder = copy_sample("ev2", tmp_path / "ev2")
    target = folder / "S_CRR.jsonl"
    vague = next(i for i, x in enumerate(lines_of(target), 1) if json.loads(x)["rel"] == "Vague")
    row = edit_json_line(target, vague)
    target.write_bytes(target.read_bytes() + (json.dumps(dict(row, question=str(row["question"]) + "?")) + "\n").encode())
    line = error_line(ingest(tmp_path / "kg.lbug", "ev2", folder))
    assert f":{len(lines_of(target))}: repeats question" in line and f"{target}:{vague} with different content" in line
