"""Shared fixtures: one contract suite, every backend.

Backends are chosen like networkx's ``--backend`` switch: ``pytest --backends=ladybug`` or
``EVENTKG_TEST_BACKENDS=ladybug,neo4j`` (default: all; the Neo4j half skips outside CI
when Java/Maven are missing, and never skips in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eventkg.graphstore import open_store
from tests.support.neo4j_fixture import n4, neo4j_server  # noqa: F401  (the Neo4j test server)
from tests.support.paths import SHARED
from tests.support.small_disk import small_disk  # noqa: F401  (a tmpfs for the bad-day tests)

ALL_BACKENDS = ("ladybug", "neo4j")
PROJECT_SAMPLES = Path(__file__).resolve().parent.parent / "ingest" / "samples"
CHECKOUT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backends",
        default=os.environ.get("EVENTKG_TEST_BACKENDS", ",".join(ALL_BACKENDS)),
        help="comma-separated store backends for the contract suite (ladybug,neo4j)",
    )


def selected_backends(config: pytest.Config) -> list[str]:
    chosen = [b.strip() for b in config.getoption("--backends").split(",") if b.strip()]
    unknown = set(chosen) - set(ALL_BACKENDS)
    if unknown:
        raise pytest.UsageError(f"unknown backends {sorted(unknown)}; choose from {ALL_BACKENDS}")
    return chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", selected_backends(metafunc.config), scope="session")


@pytest.fixture
def embedded_store(tmp_path: Path):
    """A fresh, empty LadybugDB store in a temporary folder."""
    store = open_store(str(tmp_path / "store.lbug"))
    yield store
    store.close()


@pytest.fixture
def store(backend: str, request: pytest.FixtureRequest, tmp_path: Path):
    """A fresh, empty store on each selected backend (the contract-suite fixture)."""
    if backend == "ladybug":
        s = open_store(str(tmp_path / "store.lbug"))
    else:
        server = request.getfixturevalue("neo4j_server")
        s = open_store(server.url)
        s.clear()
    yield s
    s.close()


@pytest.fixture
def samples_dir() -> Path:
    """The project's own sample files (ingest/samples/<source>/...)."""
    return PROJECT_SAMPLES


def shared_samples_dir() -> Path:
    """Where the real samples are: ``$EVENTKG_SHARED`` (the shared folder, or its
    ``data/samples``) if set, else ``../shared/data/samples`` beside the checkout."""
    return SHARED if (SHARED / "ev2").is_dir() else SHARED / "data" / "samples"


@pytest.fixture
def shared_samples() -> Path:
    """The real samples beside the project (../shared, or $EVENTKG_SHARED). Absent, the test
    skips with the reason; with ``CI`` set it fails instead: in CI these tests must run."""
    path = shared_samples_dir()
    if not path.is_dir():
        reason = f"real samples not found at {path} (put ../shared beside the checkout or set EVENTKG_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so this does not skip", pytrace=False)
        pytest.skip(reason)
    return path
