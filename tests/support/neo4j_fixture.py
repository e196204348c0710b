"""The session-wide real Neo4j 5 server the Neo4j half of the test suite runs against.

Started once from Maven Central jars (graphstore/neo4j/server/launch.py) with authentication on
and a random password; ``server.url`` carries the credentials. Outside CI it skips when
``java`` or ``mvn`` is missing; with ``CI`` set it never skips: a missing tool or a
server that does not start fails the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from eventkg.graphstore import open_store
from eventkg.graphstore.neo4j.server.jars import missing_tools
from eventkg.graphstore.neo4j.server.launch import Neo4jServer, start


def require_neo4j_tools() -> None:
    """Skip the calling test when java or mvn is missing; with ``CI`` set, fail it instead."""
    missing = missing_tools()
    if missing:
        reason = f"Neo4j test server needs {' and '.join(missing)} on PATH"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so this does not skip)", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Neo4jServer]:
    """A running Neo4j server on 127.0.0.1 (auth on), stopped after the session."""
    require_neo4j_tools()
    # EVENTKG_NEO4J_AUTH=0 runs the suite against a server without authentication
    auth = os.environ.get("EVENTKG_NEO4J_AUTH", "1") != "0"
    # C1-only JIT: a short-lived server warms up in half the time (peak speed matters less)
    server = start(auth=auth, heap="1g", pagecache="256m", jvm_flags=["-XX:TieredStopAtLevel=1"])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def n4(neo4j_server: Neo4jServer):
    """An empty :class:`Neo4jStore` on the session's server, closed after the test."""
    store = open_store(neo4j_server.url)
    store.clear()
    yield store
    store.close()
