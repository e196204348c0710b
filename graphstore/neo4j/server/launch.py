"""A real Neo4j 5 Community server on loopback, from Maven Central jars (tests, local dev).

Why not Docker: CI machines and laptops without Docker can still run the Neo4j half of the
contract suite. The jars of ``org.neo4j:neo4j`` (and optionally ``neo4j-browser``) are
resolved once with Maven (:func:`prepare`, cached under ``~/.cache/eventkg/neo4j``, i.e. the
``neo4j/`` folder of ``$EVENTKG_CACHE``); each
server gets a throw-away home with its own ``neo4j.conf``, free ports, a random password
written as ``neo4j-admin dbms set-initial-password`` writes it, and is deleted again by
:meth:`Neo4jServer.stop`.

    python -m eventkg.graphstore.neo4j.server.launch --prepare        # resolve the jars, record the JVM archives
    python -m eventkg.graphstore.neo4j.server.launch --port 7687 --browser   # run one in the foreground
    python -m eventkg.graphstore.neo4j.server.launch --import ./neo4j-csv --home ./n4   # bulk import, then serve

``--import DIR`` (``start(import_dir=...)``) runs ``neo4j-admin database import full`` on the
CSV files ``eventkg export neo4j-import DIR`` wrote, with the same jars (the importer is
``org.neo4j:neo4j-import-tool``, a dependency of ``org.neo4j:neo4j``, behind the admin entry
point ``org.neo4j.cli.AdminTool``), into the server's still empty home, then starts it.

Memory: ``heap``/``pagecache`` default to 1 GB / 512 MB (tests, dev); pass ``None``
(``--heap default --pagecache default``) for Neo4j's own defaults: a 512 MB heap, as in the
``neo4j.conf`` Neo4j ships, and a page cache Neo4j sizes itself; the transaction memory
limit (``dbms.memory.transaction.total.max``) stays Neo4j's default, 70% of the heap.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eventkg import settings as env
from eventkg.errors import EventKGError
from eventkg.graphstore.base import StoreError
from eventkg.graphstore.neo4j.server import cds as neo4j_cds
from eventkg.graphstore.neo4j.server import huge_pages

POM = Path(__file__).with_name("pom.xml")
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"  # neo4j-admin: database import full
NEO4J_DEFAULT_HEAP = "512m"  # server.memory.heap.*_size in the neo4j.conf Neo4j ships
# the importer's JVM heap; its big arrays live off heap ($EVENTKG_NEO4J_IMPORT_MEMORY, default 2g,
# passed as --max-off-heap-memory, whose own default is 90% of the RAM)
IMPORT_HEAP = "1g"

# The collector of both JVMs (server and importer): the parallel (throughput) collector, not the
# G1 Neo4j's launcher picks. Measured on 2 cores:
# * server, ASER 100K/300K through Bolt into a 512 MB heap, same file and code: server CPU 29.8 s
#   and GC pauses 3.5 s with ParallelGC, 37.2 s and 7.1 s with G1 (G1's concurrent work competes
#   with the one Bolt worker for the second core);
# * importer, 1M events / 4.5M edges, best of 4-5 interleaved runs each: 14.2 s wall / 25.0 s CPU
#   vs 16.6 s / 29.7 s with G1, whose write barriers it pays on every record it builds (the spread
#   under other load is wide: up to 22 s / 36-40 s for both).
GC_FLAG = "-XX:+UseParallelGC"

# The module openings and flags the official launcher puts on the JVM (conf/neo4j.conf of
# the 5.26 distribution, ``server.jvm.additional``), minus the profiling-only ones, with
# :data:`GC_FLAG` for its collector.
JVM_FLAGS = (
    GC_FLAG,
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
)


class Neo4jServerError(StoreError):
    """The test server could not be prepared or started (missing tool, failed start...)."""


def missing_tools() -> list[str]:
    """The external programs this module needs that are not on PATH."""
    return [t for t in ("java", "mvn") if shutil.which(t) is None]


def cache_dir() -> Path:
    """Where resolved classpaths are cached: ``<cache root>/neo4j`` (see :mod:`eventkg.settings`)."""
    return env.cache_dir("neo4j")


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
    entries = _resolve(version, with_browser, refresh)
    if archives and not _recording:
        record_archives(entries)
    return entries


def _resolve(version: str, with_browser: bool, refresh: bool) -> list[str]:
    """The class path of ``org.neo4j:neo4j`` (and Browser), jars only, resolved by Maven once and cached."""
    name = f"classpath-{version}{'-browser' if with_browser else ''}.txt"
    cached = cache_dir() / name
    if cached.exists() and not refresh:
        entries = [p for p in cached.read_text().strip().split(os.pathsep) if p]
        if entries and all(Path(p).exists() for p in entries):
            return neo4j_cds.jars_only(entries)
    if missing_tools():
        raise Neo4jServerError(f"cannot prepare the Neo4j test server: {', '.join(missing_tools())} not on PATH")
    cached.parent.mkdir(parents=True, exist_ok=True)
    out = cached.with_suffix(".tmp")
    cmd = ["mvn", "-q", "-B", "-f", str(POM), f"-Dneo4j.version={version}"]
    cmd += ["-Pbrowser"] if with_browser else []
    cmd += ["dependency:build-classpath", f"-Dmdep.outputFile={out}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise Neo4jServerError(f"mvn could not resolve org.neo4j:neo4j:{version} (exit {proc.returncode}):\n{tail}")
    out.replace(cached)
    return neo4j_cds.jars_only([p for p in cached.read_text().strip().split(os.pathsep) if p])


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


def _write_conf(
    conf_dir: Path, *, bolt_port: int, http_port: int | None, auth: bool, pagecache: str | None,
    settings: Mapping[str, str] | None = None,
) -> None:
    lines = [
        "server.default_listen_address=127.0.0.1",
        "server.bolt.enabled=true",
        f"server.bolt.listen_address=127.0.0.1:{bolt_port}",
        "server.https.enabled=false",
        f"server.http.enabled={'true' if http_port else 'false'}",
        f"dbms.security.auth_enabled={'true' if auth else 'false'}",
        "dbms.usage_report.enabled=false",
        "db.tx_log.rotation.retention_policy=1 files",
    ]
    if http_port:
        lines.append(f"server.http.listen_address=127.0.0.1:{http_port}")
    if pagecache:
        lines.append(f"server.memory.pagecache.size={pagecache}")
    lines += [f"{k}={v}" for k, v in (settings or {}).items()]
    (conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")


def _java_env(home: Path, conf: Path) -> dict[str, str]:
    return dict(os.environ, NEO4J_HOME=str(home), NEO4J_CONF=str(conf))


def _make_home(home: Path | None) -> tuple[Path, bool]:
    """The server's home (``home``, kept; else a new temp folder, deleted on stop) with its sub-folders."""
    keep = home is not None
    home = Path(home) if home else Path(tempfile.mkdtemp(prefix="eventkg-neo4j-"))
    for sub in ("conf", "logs", "data", "plugins", "import", "run"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    return home, keep


AUTH_ITERATIONS = 1024  # the hash rounds of the line neo4j-admin dbms set-initial-password writes


def initial_auth_line(password: str, salt: bytes) -> str:
    """The ``data/dbms/auth.ini`` line ``neo4j-admin dbms set-initial-password`` writes for user
    ``neo4j``: SHA-256 of salt + UTF-8 password, hashed again until :data:`AUTH_ITERATIONS`
    rounds, salt and hash in hex. The server makes the user from it at its first start."""
    digest = hashlib.sha256(salt + password.encode("utf-8")).digest()
    for _ in range(AUTH_ITERATIONS - 1):
        digest = hashlib.sha256(digest).digest()
    return f"neo4j:SHA-256,{digest.hex()},{salt.hex()},{AUTH_ITERATIONS}:\n"


def _set_initial_password(home: Path, password: str) -> None:
    """What ``neo4j-admin dbms set-initial-password`` does, unless the home's auth file exists already.

    Why not run it: it is a JVM of its own (0.6-2 s of start-up, a core of the two beside a
    bulk import) for one line of a file.
    """
    path = home / "data" / "dbms" / "auth.ini"
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(initial_auth_line(password, secrets.token_bytes(32)))
    tmp.replace(path)


def _launch(home: Path, classpath: Sequence[str], heap: str | None, jvm_flags: Sequence[str], quiet: bool) -> subprocess.Popen:
    """Start the server's JVM (in its own session) with output to ``logs/console.log`` when ``quiet``.

    The server runs :data:`GC_FLAG`'s collector unless the caller's flags pick one themselves
    (the JVM refuses two).
    """
    conf = home / "conf"
    heap = heap or NEO4J_DEFAULT_HEAP
    extra = [*jvm_flags, *env.neo4j_jvm_flags()]
    own_gc = any(f.startswith("-XX:+Use") and f.endswith("GC") for f in extra)
    flags = [f for f in JVM_FLAGS if not (own_gc and f == GC_FLAG)]
    flags += neo4j_cds.flags(cache_dir(), neo4j_cds.SERVER, classpath, extra)
    cmd = ["java", f"-Xms{heap}", f"-Xmx{heap}", *flags, *extra, "-cp", os.pathsep.join(classpath), ENTRY_POINT]
    cmd += [f"--home-dir={home}", f"--config-dir={conf}"]
    with open(home / "logs" / "console.log", "ab") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            cmd,
            env=_java_env(home, conf),
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
    heap: str | None = "1g",
    pagecache: str | None = "512m",
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
    ``heap=None`` is Neo4j's default heap (512 MB), ``pagecache=None`` its default page cache.
    ``import_dir``: first bulk-import the CSV files of ``eventkg export neo4j-import`` into
    the (empty) database with ``neo4j-admin database import full`` (see :func:`run_import`).
    ``settings`` are extra ``neo4j.conf`` lines (e.g. ``{"db.memory.transaction.max": "64m"}``).
    ``classpath`` (the jars to run) is :func:`prepare`'s for ``version`` unless given.
    """
    classpath = classpath or prepare(version, with_browser=with_browser)
    home, keep = _make_home(home)
    bolt_port = port or free_port()
    if with_browser and not http_port:
        http_port = free_port()
    _write_conf(home / "conf", bolt_port=bolt_port, http_port=http_port, auth=auth, pagecache=pagecache, settings=settings)
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
        _set_initial_password(home, password)
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
    from eventkg.graphstore.neo4j.admin_import import admin_arguments

    import_dir = Path(import_dir)
    args = admin_arguments(import_dir, database=database)  # raises StoreError on a bad folder
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
    report = home / "logs" / "import.report"
    cds = neo4j_cds.flags(cache_dir(), neo4j_cds.ADMIN, classpath, jvm_flags)
    huge = huge_pages.offered()
    thp = [huge_pages.JVM_FLAG] if huge else []
    cmd = ["java", f"-Xmx{IMPORT_HEAP}", *JVM_FLAGS, *thp, *cds, *jvm_flags, "-cp", os.pathsep.join(classpath), ADMIN_TOOL]
    cmd += ["database", "import", "full", f"--max-off-heap-memory={env.neo4j_import_memory()}", f"--report-file={report}"]
    cmd += [*args]
    java_env = huge_pages.with_malloc_huge_pages(_java_env(home, conf)) if huge else _java_env(home, conf)
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
    if any(neo4j_cds.pending(folder, role, classpath, retry=retry) for role in (neo4j_cds.ADMIN, neo4j_cds.SERVER)):
        print("eventkg: recording the Neo4j JVMs' class-data archives (once per JDK and Neo4j version, "
              "about half a minute)", file=sys.stderr, flush=True)
    _recording = True
    try:
        def check(archive: Path) -> None:
            check_archive(classpath, archive)

        admin = neo4j_cds.record(folder, neo4j_cds.ADMIN, classpath, lambda flags: _train_admin(classpath, flags),
                                 check, retry=retry)
        server = neo4j_cds.record(folder, neo4j_cds.SERVER, classpath, lambda flags: _train_server(classpath, flags),
                                  check, retry=retry)
        return {neo4j_cds.ADMIN: admin, neo4j_cds.SERVER: server}
    finally:
        _recording = False


def check_archive(classpath: Sequence[str], archive: Path) -> None:
    """Raise unless a JVM maps ``archive`` with ``classpath`` and runs (``-Xshare:on``: no archive, no start)."""
    with tempfile.TemporaryDirectory(prefix="eventkg-cds-") as tmp:
        (Path(tmp) / "neo4j.conf").write_text("")
        cmd = ["java", "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", os.pathsep.join(classpath),
               ADMIN_TOOL, "--version"]
        env_ = dict(os.environ, NEO4J_HOME=tmp, NEO4J_CONF=tmp)
        proc = subprocess.run(cmd, env=env_, cwd=tmp, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        why = (proc.stdout + proc.stderr).strip().splitlines()
        raise Neo4jServerError(f"a JVM cannot use the archive {archive} (exit {proc.returncode}): "
                               f"{why[0] if why else 'no output'}")


def _training_export(folder: Path) -> Path:
    """A two-event, one-edge folder in the shape ``eventkg export neo4j-import`` writes."""
    from eventkg.graphstore.neo4j import admin_import as ni

    folder.mkdir(parents=True)
    nodes = [",".join(ni.node_header("Event")), "0,e1,aser,it rains,1,2.0,s-v,3", "1,e2,aser,we stay,1,1.0,s-v,3"]
    rels = [",".join(ni.rel_header("CAUSES")), "0,1,aser,1.5"]
    (folder / "nodes-Event.csv").write_text("\n".join(nodes) + "\n")
    (folder / "rels-CAUSES.csv").write_text("\n".join(rels) + "\n")
    ni.write_manifest(folder, ni.build_manifest({"Event": "nodes-Event.csv"}, {"CAUSES": "rels-CAUSES.csv"},
                                                counts={"Event": 2, "CAUSES": 1}))
    return folder


def _train_admin(classpath: Sequence[str], flags: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="eventkg-cds-") as tmp:
        csv = _training_export(Path(tmp) / "csv")
        run_import(csv, home=Path(tmp) / "home", classpath=classpath, jvm_flags=flags)


def _train_server(classpath: Sequence[str], flags: list[str]) -> None:
    from eventkg.graphstore.neo4j.store import Neo4jStore

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
    import neo4j
    from neo4j.exceptions import AuthError, ServiceUnavailable

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


def main(argv: list[str] | None = None) -> int:
    """Start a server in the foreground until Ctrl-C (or only resolve the jars)."""
    ap = argparse.ArgumentParser(prog="python -m eventkg.graphstore.neo4j.server.launch", description=main.__doc__)
    ap.add_argument("--prepare", action="store_true", help="only resolve/download the jars and record the JVMs' class-data archives, then exit")
    ap.add_argument("--port", type=int, default=7687, help="Bolt port (default 7687; 0 = any free port)")
    ap.add_argument("--http-port", type=int, default=None, help="HTTP port (default 7474 with --browser)")
    ap.add_argument("--browser", action="store_true", help="serve Neo4j Browser on the HTTP port")
    ap.add_argument("--home", type=Path, default=None, help="keep data in this folder (default: temp, deleted)")
    ap.add_argument("--no-auth", action="store_true", help="disable authentication")
    ap.add_argument("--version", default=None, help="org.neo4j:neo4j version (default $EVENTKG_NEO4J_VERSION, else 5.26.0)")
    ap.add_argument("--heap", default="1g", help="JVM heap, e.g. 2g ('default': Neo4j's default, 512m; default 1g)")
    ap.add_argument("--pagecache", default="512m", help="page cache size ('default': Neo4j sizes it; default 512m)")
    ap.add_argument(
        "--import", dest="import_dir", type=Path, default=None, metavar="DIR",
        help="first bulk-import the CSV folder written by 'eventkg export neo4j-import DIR' (needs an empty --home)",
    )
    args = ap.parse_args(argv)
    try:
        args.version = args.version or env.neo4j_version()
        if args.prepare:
            cp = prepare(args.version, with_browser=args.browser, archives=False)
            print(f"Neo4j {args.version}: {len(cp)} jars resolved (cached in {cache_dir()})")
            for role, path in record_archives(cp, retry=True).items():
                print(f"  {role} JVM class-data archive: {path or 'none (see its .failed note; JVMs start the usual way)'}")
            return 0
        http_port = args.http_port or (7474 if args.browser else None)
        server = start(
            port=args.port or None,
            http_port=http_port,
            auth=not args.no_auth,
            password=env.neo4j_credentials()[1],  # else a random one, printed below
            with_browser=args.browser,
            home=args.home,
            version=args.version,
            heap=None if args.heap == "default" else args.heap,
            pagecache=None if args.pagecache == "default" else args.pagecache,
            import_dir=args.import_dir,
        )
    except EventKGError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"Neo4j {args.version} running; Bolt {server.bare_url}")
    if server.user:
        print(f"  user {server.user}, password {server.password}")
        print(f"  export NEO4J_USER={server.user} NEO4J_PASSWORD='{server.password}'")
    if server.browser_url:
        print(f"  Browser: {server.browser_url}")
    print(f"  home {server.home}; Ctrl-C stops it")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.process.wait()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
