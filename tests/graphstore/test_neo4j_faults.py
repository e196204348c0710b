"""The Neo4j server killed in the middle of an ASER ingest over Bolt: the ingest
fails with one line saying so, the store records the unfinished ingest, and once the server is
back a re-run gives the graph a clean ingest gives (compared by content, computed here).

A server of its own (a kept home, so it can be killed and started again on the same data), not
the session's: killing that one would fail every later Neo4j test.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from eventkg.graphstore import open_store
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from eventkg.graphstore.neo4j.server import launch as server_mod
from tests.support.aser_shape import make_aser_shape_kg
from tests.support.neo4j_fixture import require_neo4j_tools


def _content(store) -> str:
    """sha256 over every node and edge with its properties (sorted JSON), through the public API."""
    h = hashlib.sha256()
    for label in sorted(NODE_TYPES):
        for row in sorted(json.dumps(r, sort_keys=True, default=str) for r in store.iter_nodes(label)):
            h.update(f"{label} {row}\n".encode())
    for rtype in sorted(REL_TYPES):
        for row in sorted(json.dumps(r, sort_keys=True, default=str) for r in store.iter_edges(rtype)):
            h.update(f"{rtype} {row}\n".encode())
    return h.hexdigest()


def _ingest(url: str, kg: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "eventkg", "--store", url, "ingest", "aser", str(kg), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _events(url: str) -> int:
    try:
        with open_store(url) as s:
            return s.counts()["nodes"]["Event"]
    except Exception:  # noqa: BLE001 - not up yet
        return 0


def test_a_server_killed_mid_ingest_is_one_line_and_a_rerun_gives_the_clean_graph(tmp_path):
    require_neo4j_tools()
    kg = make_aser_shape_kg(tmp_path / "KG.db", 20_000, 60_000, seed=3)
    home = tmp_path / "n4"
    server = server_mod.start(home=home, password="faults-test-pw", heap="512m", pagecache="128m")
    server.keep_home = True
    port = server.bolt_port
    try:
        run = _ingest(server.url, kg)
        deadline = time.monotonic() + 120
        while _events(server.url) == 0 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if run.poll() is not None:
            out, err = run.communicate()
            raise AssertionError(f"the ingest ended (exit {run.returncode}) before the server could be killed: {err}")
        server.process.kill()  # like a crash of the server: no clean shutdown
        server.process.wait()
        _, err = run.communicate(timeout=120)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert run.returncode == 2 and len(lines) == 1, err
        assert lines[0].startswith("error: ") and "Neo4j" in lines[0] and "unfinished" in lines[0], lines[0]

        server = server_mod.start(home=home, port=port, password="faults-test-pw", heap="512m", pagecache="128m")
        server.keep_home = True
        with open_store(server.url) as s:
            assert [m.split(" ")[0] for m in s.unfinished_ingests()] == ["aser"]  # readers are told
        rerun = _ingest(server.url, kg)
        out, err = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, err
        with open_store(server.url) as s:
            assert s.unfinished_ingests() == []
            after_rerun = _content(s)
            s.clear()
        clean = _ingest(server.url, kg)
        assert clean.wait(timeout=300) == 0
        with open_store(server.url) as s:
            assert _content(s) == after_rerun
    finally:
        server.keep_home = False
        server.stop()
