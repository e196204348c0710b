"""The folder an ingest read is recorded by the store, never written into the graph's data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.ingest.errors import IngestError
from tests.support.bad_days import SAMPLES, copy_sample, digest


def test_the_same_ev2_files_from_two_folders_give_the_same_graph_and_the_last_folder(tmp_path: Path) -> None:
    first = copy_sample("ev2", tmp_path / "one" / "data")
    second = copy_sample("ev2", tmp_path / "two" / "data")
    with open_store(str(tmp_path / "one.lbug")) as store:
        ingest_source(store, "ev2", first)
        once = store.counts()
        assert store.ingest_origin("ev2") == str(first)
    with open_store(str(tmp_path / "two.lbug")) as store:
        ingest_source(store, "ev2", second)
        assert store.counts() == once
    assert digest(tmp_path / "one.lbug") == digest(tmp_path / "two.lbug")  # no folder in any row
    with open_store(str(tmp_path / "one.lbug")) as store:
        ingest_source(store, "ev2", second)  # a re-ingest from another copy adds nothing
        assert store.counts() == once
        assert store.ingest_origin("ev2") == str(second)
        sources = {s for label in ("Question", "Event") for n in store.iter_nodes(label) for s in n["sources"]}
    assert sources == {"ev2"}
    assert digest(tmp_path / "one.lbug") == digest(tmp_path / "two.lbug")


def test_the_origin_is_the_absolute_folder_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative path is made absolute, a symbolic link stays the link, a file gives its folder."""
    copy_sample("ev2", tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    with open_store(str(tmp_path / "kg.lbug")) as store:
        ingest_source(store, "ev2", "link")
        assert store.ingest_origin("ev2") == os.path.join(str(tmp_path), "link")
        ingest_source(store, "clomo", SAMPLES / "clomo" / "zero_test.json", partial=True)
        assert store.ingest_origin("clomo") == str(SAMPLES / "clomo")
        assert store.ingest_origin("ev2") == os.path.join(str(tmp_path), "link")  # one record per source


def test_a_failed_ingest_keeps_the_folder_before_it(tmp_path: Path) -> None:
    good = copy_sample("ev2", tmp_path / "good")
    bad = copy_sample("ev2", tmp_path / "bad")
    lines = (bad / "S_CEC.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (bad / "S_CEC.jsonl").write_text("".join(lines[:-1]) + "{broken\n", encoding="utf-8")
    with open_store(str(tmp_path / "kg.lbug")) as store:
        ingest_source(store, "ev2", good)
        with pytest.raises(IngestError, match="broken JSON line"):
            ingest_source(store, "ev2", bad)
        assert store.ingest_origin("ev2") == str(good)
