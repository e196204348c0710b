"""Fixtures shared by the query-layer tests."""

from __future__ import annotations

import pytest

from eventkg.queries.vectors import index as vx
from tests.support.worlds import write_world


@pytest.fixture
def world(embedded_store):
    """The small typed world of :mod:`tests.support.worlds` in an embedded store, with no vector
    index loaded before or after (each test builds or loads its own)."""
    write_world(embedded_store)
    vx.forget_loaded()
    yield embedded_store
    vx.forget_loaded()
