"""A loader's defaults come from its registry entry: the batch size a user leaves unset."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from eventkg import open_store
from eventkg.ingest import registry

SAMPLES = Path(__file__).resolve().parents[2] / "ingest" / "samples"


def _batches(tmp_path: Path, name: str, **options) -> int:
    store = open_store(str(tmp_path / f"{name}.lbug"))
    try:
        return registry.ingest_source(store, "eeckg", SAMPLES / "eeckg", on_error="skip",
                             rejects=tmp_path / f"{name}.rejects.jsonl", **options).batches
    finally:
        store.close()


def test_entry_batch_size_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _batches(tmp_path, "whole")
    small = dataclasses.replace(registry.LOADERS["eeckg"], batch_size=3)
    monkeypatch.setitem(registry.LOADERS, "eeckg", small)
    assert _batches(tmp_path, "small") > whole  # the entry's default reached the pipeline
    assert _batches(tmp_path, "given", batch_size=registry.DEFAULT_BATCH_SIZE) == whole  # a given size wins


def test_aser_declares_its_own_default() -> None:
    info = registry.get_loader("aser")
    assert info.batch_size != registry.DEFAULT_BATCH_SIZE
    assert info.to_dict()["batch_size"] == info.batch_size
    assert not hasattr(info.load_module(), "BATCH_SIZE")  # one place for a loader's defaults


def test_entries_are_loader_specs_and_the_old_name_warns() -> None:
    assert type(registry.get_loader("ev2")).__name__ == "LoaderSpec"  # one word for a registry entry, as TaskSpec
    with pytest.warns(DeprecationWarning, match="use LoaderSpec"):
        old = registry.LoaderInfo
    assert old is registry.LoaderSpec
    with pytest.raises(AttributeError):
        registry.NoSuchName  # noqa: B018
