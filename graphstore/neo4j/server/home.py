"""A local server's home folder: its sub-folders, its ``neo4j.conf`` and its initial password.

Owns what is written before a JVM starts: :func:`make_home` (a kept folder, or a temporary one
the server deletes on stop), :func:`write_conf` (loopback only, the ports, auth on or off, the page
cache, a short transaction-log retention, extra settings) and :func:`set_initial_password`, which
writes the ``data/dbms/auth.ini`` line ``neo4j-admin dbms set-initial-password`` would write
(:func:`initial_auth_line`) instead of starting a JVM of its own for one line of a file.
Invariant: an existing auth file is never overwritten (a kept home keeps its password).
"""

from __future__ import annotations

import hashlib
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path

AUTH_ITERATIONS = 1024  # the hash rounds of the line neo4j-admin dbms set-initial-password writes
SUBFOLDERS = ("conf", "logs", "data", "plugins", "import", "run")


def make_home(home: Path | None) -> tuple[Path, bool]:
    """The server's home (``home``, kept; else a new temp folder, deleted on stop) with its sub-folders."""
    keep = home is not None
    home = Path(home) if home else Path(tempfile.mkdtemp(prefix="eventkg-neo4j-"))
    for sub in SUBFOLDERS:
        (home / sub).mkdir(parents=True, exist_ok=True)
    return home, keep


def write_conf(
    conf_dir: Path, *, bolt_port: int, http_port: int | None, auth: bool, pagecache: str | None,
    settings: Mapping[str, str] | None = None,
) -> None:
    """``conf_dir/neo4j.conf``: Bolt (and HTTP when ``http_port``) on 127.0.0.1, then ``settings``."""
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


def initial_auth_line(password: str, salt: bytes) -> str:
    """The ``data/dbms/auth.ini`` line ``neo4j-admin dbms set-initial-password`` writes for user
    ``neo4j``: SHA-256 of salt + UTF-8 password, hashed again until :data:`AUTH_ITERATIONS`
    rounds, salt and hash in hex. The server makes the user from it at its first start."""
    digest = hashlib.sha256(salt + password.encode("utf-8")).digest()
    for _ in range(AUTH_ITERATIONS - 1):
        digest = hashlib.sha256(digest).digest()
    return f"neo4j:SHA-256,{digest.hex()},{salt.hex()},{AUTH_ITERATIONS}:\n"


def set_initial_password(home: Path, password: str) -> None:
    """What ``neo4j-admin dbms set-initial-password`` does, unless the home's auth file exists already.

    Why not run it: it is a JVM of its own (seconds of start-up, a core beside a bulk import)
    for one line of a file.
    """
    path = home / "data" / "dbms" / "auth.ini"
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(initial_auth_line(password, secrets.token_bytes(32)))
    tmp.replace(path)
