"""How the Neo4j JVMs start (graphstore/neo4j/server/cds.py, launch.py, home.py): class-data archives, the password file.

The archive test runs real JVMs over the Maven Central jars (skips without java/mvn outside CI); the
password lines to match come from the real neo4j-admin.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from eventkg.graphstore.errors import Neo4jServerError
from eventkg.graphstore.neo4j.server import cds as neo4j_cds
from eventkg.graphstore.neo4j.server import launch as server_mod
from eventkg.graphstore.neo4j.server.home import initial_auth_line
from eventkg.graphstore.neo4j.server.jars import cache_dir
from eventkg.graphstore.neo4j.server.jvm import ADMIN_TOOL
from tests.support.neo4j_fixture import require_neo4j_tools

CLASSPATH = ["/x/neo4j-5.26.0.jar", "/x/arrow-bom-5.26.0.pom", "/x/lucene-core-9.11.1.jar"]


def test_only_jars_stay_on_the_class_path():
    # a .pom on the class path makes the JVM reject the archive (it records jars only)
    assert neo4j_cds.jars_only(CLASSPATH) == ["/x/neo4j-5.26.0.jar", "/x/lucene-core-9.11.1.jar"]


def test_each_class_path_and_role_has_its_own_archive(tmp_path):
    a = neo4j_cds.archive(tmp_path, neo4j_cds.SERVER, CLASSPATH)
    assert a != neo4j_cds.archive(tmp_path, neo4j_cds.ADMIN, CLASSPATH)
    assert a != neo4j_cds.archive(tmp_path, neo4j_cds.SERVER, [*CLASSPATH, "/x/browser.jar"])
    assert a == neo4j_cds.archive(tmp_path, neo4j_cds.SERVER, list(CLASSPATH))


def _writer(calls: list):
    def train(flags: list[str]) -> None:
        calls.append(flags)
        (flag,) = flags
        assert flag.startswith("-XX:ArchiveClassesAtExit=")
        with open(flag.split("=", 1)[1], "wb") as f:  # what the JVM does when it exits
            f.write(b"archive")
    return train


def _fine(archive) -> None:  # a check that passes every archive
    pass


def test_an_archive_no_jvm_can_map_is_not_kept(tmp_path):
    def refuse(archive) -> None:
        assert archive.read_bytes() == b"archive"  # the written file is what gets checked
        raise OSError("cut archive")

    assert neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, _writer([]), refuse) is None
    assert neo4j_cds.flags(tmp_path, neo4j_cds.SERVER, CLASSPATH) == []
    assert "cut archive" in neo4j_cds.archive(tmp_path, neo4j_cds.SERVER, CLASSPATH).with_suffix(".failed").read_text()
    assert [p.suffix for p in tmp_path.iterdir()] == [".failed"]  # the cut file is gone


def test_an_archive_is_recorded_once_then_handed_to_each_jvm(tmp_path, monkeypatch):
    monkeypatch.delenv("EVENTKG_NEO4J_CDS", raising=False)
    assert neo4j_cds.flags(tmp_path, neo4j_cds.SERVER, CLASSPATH) == []  # nothing recorded yet
    calls: list = []
    path = neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, _writer(calls), _fine)
    assert path is not None and path.read_bytes() == b"archive"
    assert neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, _writer(calls), _fine) == path
    assert len(calls) == 1
    assert neo4j_cds.flags(tmp_path, neo4j_cds.SERVER, CLASSPATH) == [f"-XX:SharedArchiveFile={path}"]
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_the_callers_own_archive_flags_or_the_switch_turn_it_off(tmp_path, monkeypatch):
    neo4j_cds.record(tmp_path, neo4j_cds.ADMIN, CLASSPATH, _writer([]), _fine)
    assert neo4j_cds.flags(tmp_path, neo4j_cds.ADMIN, CLASSPATH, ["-Xshare:off"]) == []
    assert neo4j_cds.flags(tmp_path, neo4j_cds.ADMIN, CLASSPATH, ["-XX:SharedArchiveFile=/mine.jsa"]) == []
    assert neo4j_cds.flags(tmp_path, neo4j_cds.ADMIN, CLASSPATH, ["-XX:TieredStopAtLevel=1"]) != []
    monkeypatch.setenv("EVENTKG_NEO4J_CDS", "0")
    assert neo4j_cds.flags(tmp_path, neo4j_cds.ADMIN, CLASSPATH) == []
    assert neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, _writer([]), _fine) is None


def test_a_failed_training_leaves_a_note_and_is_not_paid_for_again(tmp_path, monkeypatch):
    monkeypatch.delenv("EVENTKG_NEO4J_CDS", raising=False)
    calls: list = []

    def broken(flags: list[str]) -> None:
        calls.append(flags)
        raise OSError("no java")

    assert neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, broken, _fine) is None
    note = neo4j_cds.archive(tmp_path, neo4j_cds.SERVER, CLASSPATH).with_suffix(".failed")
    assert "no java" in note.read_text()
    assert neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, broken, _fine) is None
    assert len(calls) == 1  # the note stops a second half-minute try on every start
    assert neo4j_cds.record(tmp_path, neo4j_cds.SERVER, CLASSPATH, _writer(calls), _fine, retry=True) is not None
    assert not note.exists() and len(calls) == 2
    assert neo4j_cds.flags(tmp_path, neo4j_cds.SERVER, CLASSPATH) != []


def test_a_training_jvm_that_writes_nothing_gives_no_archive(tmp_path):
    assert neo4j_cds.record(tmp_path, neo4j_cds.ADMIN, CLASSPATH, lambda flags: None, _fine) is None
    assert neo4j_cds.flags(tmp_path, neo4j_cds.ADMIN, CLASSPATH) == []


def test_the_recorded_archives_serve_neo4j_classes_to_a_real_jvm(tmp_path):
    require_neo4j_tools()
    classpath = server_mod.prepare()  # records both archives the first time
    (tmp_path / "neo4j.conf").write_text("")
    for role in (neo4j_cds.ADMIN, neo4j_cds.SERVER):
        flags = neo4j_cds.flags(cache_dir(), role, classpath)
        assert flags, f"no {role} archive after prepare(): {list(cache_dir().glob('*.failed'))}"
        log = tmp_path / f"{role}.log"
        # -Xshare:on: the JVM refuses to start when it cannot use the archive (a class path mismatch)
        cmd = ["java", "-Xshare:on", *flags, f"-Xlog:class+load=info:file={log}", "-cp",
               os.pathsep.join(classpath), ADMIN_TOOL, "--version"]
        env = dict(os.environ, NEO4J_HOME=str(tmp_path), NEO4J_CONF=str(tmp_path))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        shared = [ln for ln in log.read_text().splitlines() if "org.neo4j." in ln and "shared objects file (top)" in ln]
        assert len(shared) > 50, f"{role}: {len(shared)} Neo4j classes came from the archive"
        server_mod.check_archive(classpath, neo4j_cds.archive(cache_dir(), role, classpath))
    # a cut archive (a JVM killed while writing it) kills every JVM that maps it: the check refuses it
    whole = neo4j_cds.archive(cache_dir(), neo4j_cds.ADMIN, classpath).read_bytes()
    cut = tmp_path / "cut.jsa"
    cut.write_bytes(whole[: len(whole) // 30])
    with pytest.raises(Neo4jServerError, match="cannot use the archive"):
        server_mod.check_archive(classpath, cut)


def test_the_initial_password_line_is_the_one_neo4j_admin_writes():
    # lines written by `neo4j-admin dbms set-initial-password` (Neo4j 5.26.0) for these passwords
    by_tool = {
        "secret123": "neo4j:SHA-256,34ffe8b4b7a3e56580323ef583476ac1659a449009dde251eb08cdc80199f705,"
                     "c1a09234a6e243d0d7390f6ffab14039b108b3ec3ecfcb004bbb666d5ff6f998,1024:\n",
        "pässwörd €x": "neo4j:SHA-256,35ccba04c3e20466b8fa1c8d2a36d6849b0c60ffae59273b0c08e81847e7d622,"
                       "0e4e44a2e92e4da1a88b31f4d140c2176afe50694c5636227dea05ce947c323c,1024:\n",
    }
    for password, line in by_tool.items():
        salt = bytes.fromhex(line.split(",")[2])
        assert initial_auth_line(password, salt) == line
