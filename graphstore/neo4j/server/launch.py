"""A local Neo4j 5 Community server's lifecycle: prepared once, started, waited for, stopped.

Owns :func:`prepare` (the jars of :mod:`~eventkg.graphstore.neo4j.server.jars`, and the first time the
JVMs' class-data archives, trained here on a real import and a real server:
:func:`record_archives`), :func:`start` (a home from :mod:`~eventkg.graphstore.neo4j.server.home`,
free ports, a random password, optionally a bulk import, the JVM, then wait until Bolt answers),
:class:`Neo4jServer` (its URLs, logs and :meth:`~Neo4jServer.stop`) and :func:`run_import`, which runs
``neo4j-admin database import full`` on the files of ``eventkg export neo4j-import``
(:mod:`eventkg.graphstore.neo4j.admin_import`) with the same jars. Invariant: a throw-away home is
deleted on stop and after a failed start, and a failed start never leaks the JVM. Users run it as
``eventkg neo4j prepare`` / ``start`` / ``stop`` (:mod:`eventkg.cli.neo4j`).

Memory: ``heap``/``pagecache`` default to :data:`HEAP`/:data:`PAGECACHE` (tests, dev); ``None``
(``--heap default --pagecache default``) is Neo4j's own: ``jvm.NEO4J_DEFAULT_HEAP`` and a page cache
Neo4j sizes itself; the transaction memory limit stays Neo4j's default, a share of the heap.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import neo4j
from neo4j.exceptions import AuthError, ServiceUnavailable

from eventkg import settings as env
from eventkg.graphstore.errors import Neo4jServerError
from eventkg.graphstore.neo4j import admin_import
from eventkg.graphstore.neo4j.server import cds, jvm
from eventkg.graphstore.neo4j.server.home import make_home, set_initial_password, write_conf
from eventkg.graphstore.neo4j.server.jars import cache_dir, resolve
from eventkg.graphstore.neo4j.store import Neo4jStore

__all__ = ["HEAP", "PAGECACHE", "Neo4jServer", "check_archive", "free_port", "prepare", "record_archives",
           "run_import", "start"]

HEAP = "1g"  # the server's heap unless the caller says (None: Neo4j's default)
PAGECACHE = "512m"  # its page cache unless the caller says (None: Neo4j sizes it)


def prepare(
    version: str | None = None, *, with_browser: bool = False, refresh: bool = False, archives: bool = True
) -> list[str]:
    """Resolve (downloading on first use) the server's jars; return the classpath entries.

    ``version`` None is ``$EVENTKG_NEO4J_VERSION`` (default 5.26.0). The classpath is cached
    per version in :func:`cache_dir`; ``refresh`` re-resolves. With ``archives`` the class-data
    archives of the server's and ``neo4j-admin``'s JVMs are recorded the first time (about half a
    minute, once per machine and version; see :func:`record_archives`).
    """
    version = version or env.neo4j_version()
    entries = resolve(version, with_browser, refresh)
    if archives and not _recording:
        record_archives(entries)
    return entries


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Neo4jServer:
    """A running server; ``url`` carries the credentials so ``open_store(server.url)`` works."""

    bolt_port: int
    http_port: int | None
    user: str | None
    password: str | None
    home: Path
    process: subprocess.Popen
    keep_home: bool = False
    #: seconds of each start step: ``prepare_s`` (import and password, side by side), ``up_s`` (JVM to Bolt)
    timings: dict[str, float] = field(default_factory=dict)
    _stopped: bool = field(default=False, repr=False)

    @property
    def bare_url(self) -> str:
        """The Bolt URL without credentials."""
        return f"neo4j://127.0.0.1:{self.bolt_port}"

    @property
    def url(self) -> str:
        """The Bolt URL with ``user:password@`` when auth is on."""
        if self.user is None:
            return self.bare_url
        return f"neo4j://{self.user}:{self.password}@127.0.0.1:{self.bolt_port}"

    @property
    def browser_url(self) -> str | None:
        return f"http://127.0.0.1:{self.http_port}/browser/" if self.http_port else None

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the console and neo4j logs (for failure messages)."""
        parts = []
        for name in ("console.log", "neo4j.log"):
            path = self.home / "logs" / name
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path}\n" + "\n".join(text))
        return "\n".join(parts) or "(no log output)"

    def stop(self, timeout: float = 30) -> None:
        """Stop the JVM and delete the temporary home.

        A throw-away home is killed outright (its data is deleted next, so a clean
        checkpoint is wasted time); a kept home gets SIGTERM and a clean shutdown.
        """
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            if self.keep_home:
                self.process.terminate()
            else:
                self.process.kill()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self.keep_home:
            shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> Neo4jServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _launch(home: Path, classpath: Sequence[str], heap: str | None, jvm_flags: Sequence[str], quiet: bool) -> subprocess.Popen:
    """Start the server's JVM (:func:`jvm.server_command`, in its own session) with output to
    ``logs/console.log`` when ``quiet``."""
    cmd = jvm.server_command(home, classpath, heap, jvm_flags)
    with open(home / "logs" / "console.log", "ab") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            cmd,
            env=jvm.java_env(home, home / "conf"),
            cwd=home,
            stdout=log if quiet else None,
            stderr=subprocess.STDOUT if quiet else None,
            start_new_session=True,
        )


def start(
    *,
    port: int | None = None,
    http_port: int | None = None,
    auth: bool = True,
    password: str | None = None,
    with_browser: bool = False,
    home: Path | None = None,
    heap: str | None = HEAP,
    pagecache: str | None = PAGECACHE,
    timeout: float = 120,
    version: str | None = None,
    quiet: bool = True,
    jvm_flags: Sequence[str] = (),
    import_dir: Path | None = None,
    settings: Mapping[str, str] | None = None,
    classpath: Sequence[str] | None = None,
) -> Neo4jServer:
    """Start a Neo4j 5 Community server on 127.0.0.1 and wait until Bolt answers.

    ``home`` keeps the data in that folder across runs (otherwise a temp dir, deleted on
    stop). With ``auth`` a random password is set unless one is given; the HTTP connector
    (and Browser with ``with_browser``) is enabled when ``with_browser`` or ``http_port``.
    ``version`` None is ``$EVENTKG_NEO4J_VERSION`` (default 5.26.0).
    ``jvm_flags`` (and ``$EVENTKG_NEO4J_JVM_FLAGS``, space-separated) go on the java command.
    ``heap=None`` is Neo4j's default heap (``jvm.NEO4J_DEFAULT_HEAP``), ``pagecache=None`` its default page cache.
    ``import_dir``: first bulk-import the CSV files of ``eventkg export neo4j-import`` into
    the (empty) database with ``neo4j-admin database import full`` (see :func:`run_import`).
    ``settings`` are extra ``neo4j.conf`` lines (e.g. ``{"db.memory.transaction.max": "64m"}``).
    ``classpath`` (the jars to run) is :func:`prepare`'s for ``version`` unless given.
    """
    classpath = classpath or prepare(version, with_browser=with_browser)
    home, keep = make_home(home)
    bolt_port = port or free_port()
    if with_browser and not http_port:
        http_port = free_port()
    write_conf(home / "conf", bolt_port=bolt_port, http_port=http_port, auth=auth, pagecache=pagecache, settings=settings)
    if auth:
        password = password or "ek" + secrets.token_hex(10)
    t0 = time.perf_counter()
    try:
        _fill_home(home, classpath, import_dir, password if auth else None, quiet)
    except BaseException:
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
        raise
    t1 = time.perf_counter()
    proc = _launch(home, classpath, heap, jvm_flags, quiet)
    server = Neo4jServer(bolt_port, http_port, "neo4j" if auth else None, password, home, proc, keep_home=keep)
    try:
        _wait_for_bolt(server, timeout)
    except BaseException:  # the error already carries the log tail; don't leak the JVM
        server.stop()
        raise
    server.timings = {"prepare_s": t1 - t0, "up_s": time.perf_counter() - t1}
    return server


def _fill_home(home: Path, classpath: Sequence[str], import_dir: Path | None, password: str | None, quiet: bool) -> None:
    """Set the initial ``password`` (if any), then bulk-import ``import_dir`` (if any)."""
    if password is not None:
        set_initial_password(home, password)
    if import_dir is not None:
        run_import(import_dir, home=home, classpath=classpath, quiet=quiet)


def run_import(
    import_dir: Path,
    *,
    home: Path,
    classpath: Sequence[str] | None = None,
    database: str = "neo4j",
    quiet: bool = True,
    version: str | None = None,
    jvm_flags: Sequence[str] = (),
) -> None:
    """``neo4j-admin database import full`` of an ``eventkg export neo4j-import`` folder into ``home``.

    The folder's ``import.json`` (written by :mod:`eventkg.graphstore.neo4j.admin_import`) names the node and
    relationship files and the CSV options; the database must not exist yet (the importer
    only fills empty databases, and this never passes ``--overwrite-destination``).
    """
    import_dir = Path(import_dir)
    args = admin_import.admin_arguments(import_dir, database=database)  # raises StoreError on a bad folder
    if (home / "data" / "databases" / database).exists():
        raise Neo4jServerError(
            f"cannot import {import_dir} into {home}: database {database!r} exists there already "
            "(the importer only fills a new database; use a fresh --home)"
        )
    classpath = classpath or prepare(version)
    conf = home / "conf"
    for sub in ("conf", "logs", "data", "run"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    if not (conf / "neo4j.conf").exists():
        (conf / "neo4j.conf").write_text("")
    cmd, java_env = jvm.import_command(home, classpath, args, jvm_flags)
    proc = subprocess.run(cmd, env=java_env, cwd=import_dir, capture_output=quiet, text=True)
    if proc.returncode != 0:
        out = ((proc.stdout or "") + (proc.stderr or "")).strip().splitlines()
        why = next((ln.strip() for ln in reversed(out) if ln.strip() and not ln.startswith("\t")), "see the output above")
        raise Neo4jServerError(f"neo4j-admin database import of {import_dir} failed (exit {proc.returncode}): {why}")


_recording = False  # True while record_archives trains: its own start() must not train again


def record_archives(classpath: Sequence[str], *, retry: bool = False) -> dict[str, Path | None]:
    """Record the class-data archives (:mod:`eventkg.graphstore.neo4j.server.cds`) of ``neo4j-admin``'s
    JVMs (trained on an import of a two-node export) and of the server's (trained on a server
    over that database answering the store's schema, a write and a read, then stopped cleanly),
    unless they exist. A failed training leaves no archive: JVMs then start the usual way."""
    global _recording
    if _recording:
        return {}
    folder = cache_dir()
    if any(cds.pending(folder, role, classpath, retry=retry) for role in (cds.ADMIN, cds.SERVER)):
        print("eventkg: recording the Neo4j JVMs' class-data archives (once per JDK and Neo4j version, "
              "about half a minute)", file=sys.stderr, flush=True)
    _recording = True
    try:
        def check(archive: Path) -> None:
            check_archive(classpath, archive)

        admin = cds.record(folder, cds.ADMIN, classpath, lambda flags: _train_admin(classpath, flags), check,
                           retry=retry)
        server = cds.record(folder, cds.SERVER, classpath, lambda flags: _train_server(classpath, flags), check,
                            retry=retry)
        return {cds.ADMIN: admin, cds.SERVER: server}
    finally:
        _recording = False


def check_archive(classpath: Sequence[str], archive: Path) -> None:
    """Raise unless a JVM maps ``archive`` with ``classpath`` and runs (``-Xshare:on``: no archive, no start)."""
    with tempfile.TemporaryDirectory(prefix="eventkg-cds-") as tmp:
        (Path(tmp) / "neo4j.conf").write_text("")
        cmd = ["java", "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", os.pathsep.join(classpath),
               jvm.ADMIN_TOOL, "--version"]
        proc = subprocess.run(cmd, env=jvm.java_env(Path(tmp), Path(tmp)), cwd=tmp, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        why = (proc.stdout + proc.stderr).strip().splitlines()
        raise Neo4jServerError(f"a JVM cannot use the archive {archive} (exit {proc.returncode}): "
                               f"{why[0] if why else 'no output'}")


def _training_export(folder: Path) -> Path:
    """A two-event, one-edge folder in the shape ``eventkg export neo4j-import`` writes."""
    folder.mkdir(parents=True)
    nodes = [",".join(admin_import.node_header("Event")), "0,e1,aser,it rains,1,2.0,s-v,3", "1,e2,aser,we stay,1,1.0,s-v,3"]
    rels = [",".join(admin_import.rel_header("CAUSES")), "0,1,aser,1.5"]
    (folder / "nodes-Event.csv").write_text("\n".join(nodes) + "\n")
    (folder / "rels-CAUSES.csv").write_text("\n".join(rels) + "\n")
    manifest = admin_import.build_manifest({"Event": "nodes-Event.csv"}, {"CAUSES": "rels-CAUSES.csv"},
                                           counts={"Event": 2, "CAUSES": 1})
    admin_import.write_manifest(folder, manifest)
    return folder


def _train_admin(classpath: Sequence[str], flags: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="eventkg-cds-") as tmp:
        csv = _training_export(Path(tmp) / "csv")
        run_import(csv, home=Path(tmp) / "home", classpath=classpath, jvm_flags=flags)


def _train_server(classpath: Sequence[str], flags: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="eventkg-cds-") as tmp:
        csv = _training_export(Path(tmp) / "csv")
        server = start(home=Path(tmp) / "home", import_dir=csv, heap=None, pagecache=None, jvm_flags=flags,
                       classpath=classpath)
        try:
            store = Neo4jStore(server.url)  # the schema statements, then a write and a read
            store.query("MATCH (a:Event {id: 'e1'}) MERGE (a)-[r:BEFORE]->(b:Event {id: 'e3'}) SET r.count = 1.0",
                        write=True)
            store.query("MATCH (a:Event)-[r]->(b) RETURN a.id, type(r), b.id, count(*) ORDER BY a.id")
            store.close()
        finally:
            server.stop(timeout=180)  # a kept home: SIGTERM, a clean exit, and the JVM writes the archive


def _wait_for_bolt(server: Neo4jServer, timeout: float) -> None:
    """Poll until a Bolt session can run a query, the JVM dies, or ``timeout`` passes."""
    auth = (server.user, server.password) if server.user else None
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise Neo4jServerError(
                f"Neo4j exited with code {server.process.returncode} while starting:\n{server.log_tail()}"
            )
        try:
            # bolt:// and a plain session: no routing table, no driver-side retries
            probe = f"bolt://127.0.0.1:{server.bolt_port}"
            with neo4j.GraphDatabase.driver(probe, auth=auth, connection_timeout=2) as drv, drv.session() as s:
                s.run("RETURN 1").consume()
                return
        except (ServiceUnavailable, OSError) as e:
            last = e
        except AuthError as e:
            raise Neo4jServerError(f"Neo4j refused the test credentials: {e}") from None
        except neo4j.exceptions.Neo4jError as e:  # e.g. database still starting
            last = e
        time.sleep(0.1)  # a probe is cheap; a coarser poll only adds to every start
    raise Neo4jServerError(f"Neo4j Bolt did not answer within {timeout:.0f}s ({last}):\n{server.log_tail()}")
