"""The running ingest's lock beside an embedded store: what tells a running ingest from an unfinished one.

An ingest marks the store (``<store>.ingests``) before its first write and clears the mark when it
completes, so a reader that finds a mark cannot tell from it alone whether that ingest is still
writing or was killed. While it runs, the ingesting process also holds ``<store>.ingesting`` locked
(``flock``, released by the kernel when the process dies, however it dies); the file holds its pid
and what it ingests. A reader whose shared lock is refused knows the ingest is alive.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

__all__ = ["hold_ingest_lock", "ingest_lock_holder", "lock_path", "release_ingest_lock"]


def lock_path(store: Path) -> Path:
    """``<store>.ingesting``, beside the database file."""
    return store.with_name(store.name + ".ingesting")


def hold_ingest_lock(store: Path, what: str) -> IO[str] | None:
    """Lock ``<store>.ingesting`` for this process and write its pid and ``what`` into it.

    Returns:
        The open file (keep it until :func:`release_ingest_lock`), or None when the file cannot be
        made or locked: the lock only informs readers, and the engine's own lock keeps a second
        writer out.
    """
    try:
        fh = open(lock_path(store), "a+", encoding="utf-8")  # noqa: SIM115 - held until release_ingest_lock
    except OSError:
        return None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}: {what}\n")
        fh.flush()
    except OSError:
        fh.close()
        return None
    return fh


def release_ingest_lock(fh: IO[str]) -> None:
    """Remove the lock file and let the lock go (the ingest ended, completed or not)."""
    try:
        Path(fh.name).unlink(missing_ok=True)
    except OSError:
        pass
    finally:
        fh.close()


def ingest_lock_holder(store: Path) -> str | None:
    """``pid N: SOURCE FILES`` of the process ingesting into ``store`` now, or None when none is
    (no lock file, or one left by a process that is gone: its lock went with it)."""
    try:
        fh = open(lock_path(store), encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return fh.read().strip() or "another process"
        except OSError:
            return None
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return None
