"""Class-data-sharing archives for the Neo4j JVMs: the server and ``neo4j-admin`` start faster.

Why: a Neo4j JVM spends seconds of its start loading and verifying thousands of classes from
hundreds of jars; a JDK 13+ *dynamic archive* holds them parsed and verified, and a JVM started
with ``-XX:SharedArchiveFile`` maps it instead (figures: ``docs/performance.md``, "Figures moved
from docstrings (Neo4j)"). Owns the mechanics: :func:`record` runs a training JVM with
``-XX:ArchiveClassesAtExit`` and moves the file into place only once it was written and a JVM
with ``-Xshare:on`` mapped it (a cut archive kills every JVM that maps it); :func:`flags` hands
it to later JVMs. Archives are named by role, class path and the ``java`` executable, so a new
JDK or Neo4j version gets its own; a stale one costs speed, never correctness (``-Xshare:auto``).
The class path must hold jars only (:func:`jars_only`: Maven lists a ``.pom``, which the JVM
would count as a mismatch). ``$EVENTKG_NEO4J_CDS=0``, or flags of the caller's own naming an
archive, turn archives off. What trains them is ``launch.record_archives``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from eventkg import settings as env

SERVER = "server"  # the server's JVM (org.neo4j.server.CommunityEntryPoint)
ADMIN = "admin"  # neo4j-admin's JVM: database import full
_OWN_FLAGS = ("-Xshare", "-XX:SharedArchiveFile", "-XX:ArchiveClassesAtExit")


def enabled() -> bool:
    """False when ``$EVENTKG_NEO4J_CDS`` is ``0``."""
    return env.neo4j_cds()


def jars_only(classpath: Sequence[str]) -> list[str]:
    """The class path entries a JVM can load classes from: jars and folders (not Maven's ``.pom``)."""
    return [p for p in classpath if p.endswith(".jar") or os.path.isdir(p)]


def _java_key() -> str:
    java = shutil.which("java")
    if java is None:
        return "no-java"
    real = os.path.realpath(java)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def archive(folder: Path, role: str, classpath: Sequence[str]) -> Path:
    """Where the archive of ``role`` JVMs with ``classpath`` lives in ``folder`` (it may not exist yet)."""
    digest = hashlib.sha256("\n".join([_java_key(), *classpath]).encode()).hexdigest()[:16]
    return Path(folder) / f"cds-{role}-{digest}.jsa"


def _own_choice(jvm_flags: Sequence[str]) -> bool:
    return any(f.startswith(_OWN_FLAGS) for f in jvm_flags)


def flags(folder: Path, role: str, classpath: Sequence[str], jvm_flags: Sequence[str] = ()) -> list[str]:
    """The flag that hands a recorded archive to a JVM, or none (no archive yet, off, or the caller's own)."""
    if not enabled() or _own_choice(jvm_flags):
        return []
    path = archive(folder, role, classpath)
    return [f"-XX:SharedArchiveFile={path}"] if path.is_file() else []


def pending(folder: Path, role: str, classpath: Sequence[str], *, retry: bool = False) -> bool:
    """True when :func:`record` would train: archives on, none recorded, no failed try (unless ``retry``)."""
    path = archive(folder, role, classpath)
    return enabled() and not path.is_file() and (retry or not path.with_suffix(".failed").is_file())


def record(folder: Path, role: str, classpath: Sequence[str], train: Callable[[list[str]], None],
           check: Callable[[Path], None], *, retry: bool = False) -> Path | None:
    """Record ``role``'s archive unless it exists: ``train(flags)`` runs the JVM(s) to learn from,
    putting ``flags`` on the one to record; ``check(file)`` raises unless a JVM can map the file
    written (a JVM killed while writing it leaves a cut file, and a cut archive crashes every
    JVM that maps it, SIGBUS). Returns the archive, or None (off, or no archive).

    A training that fails leaves a ``.failed`` note beside where the archive would be (its
    reason inside), so later calls do not pay for it again; ``retry`` tries once more.
    """
    path = archive(folder, role, classpath)
    failed = path.with_suffix(".failed")
    if not pending(folder, role, classpath, retry=retry):
        return path if path.is_file() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        train([f"-XX:ArchiveClassesAtExit={tmp}"])
        if not tmp.is_file() or not tmp.stat().st_size:
            raise OSError("the training JVM wrote no archive")
        check(tmp)
        os.replace(tmp, path)
        failed.unlink(missing_ok=True)
        return path
    except Exception as exc:  # noqa: BLE001 - an archive only makes starts faster: never fail a start for it
        failed.write_text(f"{type(exc).__name__}: {exc}\n")
        return None
    finally:
        tmp.unlink(missing_ok=True)
