"""The store the task tests build items from: the embedded store with the bundled AbsPyramid, CLoMo and
EV² samples, the three families a task reads. It stands in for the backend-parametrised ``store`` of
``tests/conftest.py`` here: the tasks read the store through the interface the contract suite checks on
both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventkg import ingest_source


@pytest.fixture
def store(embedded_store, samples_dir: Path):
    for source in ("abspyramid", "clomo", "ev2"):
        ingest_source(embedded_store, source, samples_dir / source)
    return embedded_store
