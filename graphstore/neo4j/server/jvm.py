"""The ``java`` command lines of Neo4j's two JVMs: the server and ``neo4j-admin database import full``.

Owns the entry points, the heaps, the flags the official launcher puts on the JVM
(:data:`JVM_FLAGS`, from ``server.jvm.additional`` of the 5.26 distribution's ``neo4j.conf``, minus
the profiling-only ones) and what each JVM adds: the class-data archive
(:mod:`eventkg.graphstore.neo4j.server.cds`), and for the importer transparent huge pages
(:mod:`eventkg.graphstore.neo4j.server.huge_pages`) and its off-heap budget
(``$EVENTKG_NEO4J_IMPORT_MEMORY``). Both JVMs run the parallel (throughput) collector
(:data:`GC_FLAG`), not the G1 Neo4j's launcher picks: its concurrent work competes with the Bolt
worker, and its write barriers cost the importer on every record (figures: ``docs/performance.md``,
"Figures moved from docstrings (Neo4j)"). Invariant: flags of the caller's own come last, and a
collector the caller picks replaces :data:`GC_FLAG` (the JVM refuses two).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from eventkg import settings as env
from eventkg.graphstore.neo4j.server import cds, huge_pages
from eventkg.graphstore.neo4j.server.jars import cache_dir

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"  # neo4j-admin: database import full
NEO4J_DEFAULT_HEAP = "512m"  # server.memory.heap.*_size in the neo4j.conf Neo4j ships
# the importer's JVM heap; its big arrays live off heap ($EVENTKG_NEO4J_IMPORT_MEMORY, passed as
# --max-off-heap-memory, whose own default is most of the RAM)
IMPORT_HEAP = "1g"
GC_FLAG = "-XX:+UseParallelGC"
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


def java_env(home: Path, conf: Path) -> dict[str, str]:
    """The environment of a Neo4j JVM: this process's, with ``NEO4J_HOME`` and ``NEO4J_CONF``."""
    return dict(os.environ, NEO4J_HOME=str(home), NEO4J_CONF=str(conf))


def server_command(home: Path, classpath: Sequence[str], heap: str | None, jvm_flags: Sequence[str]) -> list[str]:
    """The server's java command: ``heap`` (None: :data:`NEO4J_DEFAULT_HEAP`), then the caller's
    ``jvm_flags`` and ``$EVENTKG_NEO4J_JVM_FLAGS``; their own collector replaces :data:`GC_FLAG`."""
    heap = heap or NEO4J_DEFAULT_HEAP
    extra = [*jvm_flags, *env.neo4j_jvm_flags()]
    own_gc = any(f.startswith("-XX:+Use") and f.endswith("GC") for f in extra)
    flags = [f for f in JVM_FLAGS if not (own_gc and f == GC_FLAG)]
    flags += cds.flags(cache_dir(), cds.SERVER, classpath, extra)
    cmd = ["java", f"-Xms{heap}", f"-Xmx{heap}", *flags, *extra, "-cp", os.pathsep.join(classpath), ENTRY_POINT]
    return [*cmd, f"--home-dir={home}", f"--config-dir={home / 'conf'}"]


def import_command(home: Path, classpath: Sequence[str], args: Sequence[str],
                   jvm_flags: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The java command and environment of ``neo4j-admin database import full`` with ``args``,
    its report in ``home/logs/import.report``; huge pages where the kernel offers them."""
    report = home / "logs" / "import.report"
    archive = cds.flags(cache_dir(), cds.ADMIN, classpath, jvm_flags)
    huge = huge_pages.offered()
    thp = [huge_pages.JVM_FLAG] if huge else []
    cmd = ["java", f"-Xmx{IMPORT_HEAP}", *JVM_FLAGS, *thp, *archive, *jvm_flags, "-cp", os.pathsep.join(classpath),
           ADMIN_TOOL]
    cmd += ["database", "import", "full", f"--max-off-heap-memory={env.neo4j_import_memory()}", f"--report-file={report}"]
    base = java_env(home, home / "conf")
    return [*cmd, *args], huge_pages.with_malloc_huge_pages(base) if huge else base
