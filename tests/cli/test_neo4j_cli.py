"""``eventkg neo4j start`` / ``stop``: a real Neo4j server started and stopped through the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eventkg.graphstore import Batch, open_store
from eventkg.graphstore.model import event_id
from tests.support.neo4j_fixture import require_neo4j_tools


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_USER", "NEO4J_PASSWORD")}
    return {**env, "XDG_DATA_HOME": str(tmp_path / "data")}  # where start records itself and stop looks


def eventkg(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eventkg", *args], capture_output=True, text=True, timeout=180, env=env)


def _wait_for_announcement(proc: subprocess.Popen, timeout: float = 240) -> str:
    """The Bolt URL with credentials, read off what ``start`` prints once Bolt answers."""
    deadline, lines = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "export NEO4J_USER=" in line:
            text = "".join(lines)
            port = re.search(r"Bolt neo4j://127\.0\.0\.1:(\d+)", text).group(1)
            password = re.search(r"NEO4J_PASSWORD='([^']+)'", text).group(1)
            return f"neo4j://neo4j:{password}@127.0.0.1:{port}"
    proc.kill()
    raise AssertionError(f"no announcement from eventkg neo4j start: {''.join(lines)}{proc.stderr.read()}")


def _answers(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.neo4j
@pytest.mark.parametrize("how", ["eventkg neo4j stop", "Ctrl-C"])
def test_start_serves_a_store_until_stop_or_ctrl_c(tmp_path, how):
    """The server ``start`` announces takes a write and a read through ``open_store``; ``stop`` (another
    process) or Ctrl-C (SIGINT) ends ``start`` with exit code 0, the JVM gone, a throw-away home deleted
    and a ``--home`` kept with its database."""
    require_neo4j_tools()
    env = _env(tmp_path)
    home = tmp_path / "n4" if how == "Ctrl-C" else None
    cmd = [sys.executable, "-m", "eventkg", "neo4j", "start", "--port", "0", "--heap", "512m", "--pagecache", "64m"]
    proc = subprocess.Popen([*cmd, *(["--home", str(home)] if home else [])], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = _wait_for_announcement(proc)
        port = int(url.rsplit(":", 1)[1])
        records = list((tmp_path / "data" / "eventkg" / "neo4j-servers").glob("*.json"))
        assert [r.name for r in records] == [f"{port}.json"]
        with open_store(url) as store:
            b = Batch()
            b.add_node("Event", {"id": event_id("rain"), "text": "rain", "level": "schema", "sources": ["cli"]})
            store.write_batch(b)
            assert store.query("MATCH (e:Event) RETURN e.text AS t") == [{"t": "rain"}]
        served = Path(json.loads(records[0].read_text(encoding="utf-8"))["home"])
        if how == "Ctrl-C":
            proc.send_signal(signal.SIGINT)
        else:
            stopped = eventkg("neo4j", "stop", env=env)
            assert stopped.returncode == 0, stopped.stderr
            assert f"Bolt port {port} stopped" in stopped.stdout
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not _answers(port)
    assert not records[0].exists()
    if home:
        assert served == home and (home / "data" / "databases" / "neo4j").is_dir()
    else:
        assert not served.exists()


def test_stop_without_a_running_start_is_one_line_naming_where_it_looked(tmp_path):
    proc = eventkg("neo4j", "stop", env=_env(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "neo4j-servers" in proc.stderr, proc.stderr


def test_stop_clears_the_record_of_a_start_that_was_killed(tmp_path):
    """A ``start`` killed outright leaves its record; ``stop`` clears it and says so."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    folder = tmp_path / "data" / "eventkg" / "neo4j-servers"
    folder.mkdir(parents=True)
    record = folder / "7999.json"
    record.write_text(f'{{"pid": {pid}, "jvm_pid": {pid}, "bolt_port": 7999, "home": "/nowhere", "keep_home": false}}')
    proc = eventkg("neo4j", "stop", "--port", "7999", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "was gone" in proc.stdout and not record.exists()
