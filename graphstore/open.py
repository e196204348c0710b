"""Choosing a backend from a store URL."""

from __future__ import annotations

import os
from pathlib import Path

from eventkg import settings
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.errors import StoreError

NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")


def resolve_store_url(url: str | None = None) -> str:
    """``url``, else ``$EVENTKG_STORE``, else ``$XDG_DATA_HOME/eventkg/store.lbug`` (read now)."""
    return url or settings.store_url() or settings.default_store()


def open_store(url: str | None = None, *, read_only: bool = False) -> GraphStore:
    """Open (and if needed create) the store at ``url``.

    Args:
        url: ``neo4j://`` / ``bolt://`` URLs (credentials in the URL or ``NEO4J_USER`` /
            ``NEO4J_PASSWORD``) open Neo4j 5; anything else is a LadybugDB path (``ladybug://``
            prefix optional). None: ``$EVENTKG_STORE``, else the default store
            (:func:`resolve_store_url`).
        read_only: Read a store that exists; the embedded file is opened read-only.

    Returns:
        The store (a context manager that closes it).

    Raises:
        StoreError: An unknown URL scheme; with ``read_only``, a LadybugDB path with no file (not
            a new empty store: a mistyped ``--store`` would answer every read with zeros); a server
            that cannot be reached or a file that cannot be opened.
    """
    url = resolve_store_url(url)
    if url.startswith(NEO4J_SCHEMES):
        from eventkg.graphstore.neo4j.store import Neo4jStore

        return Neo4jStore(url)
    if "://" in url and not url.startswith("ladybug://"):
        raise StoreError(f"store URL {url!r}: unknown scheme (use a path, ladybug://PATH, neo4j:// or bolt://)")
    path = url.removeprefix("ladybug://")
    if read_only and not _exists(Path(path).expanduser()):
        raise StoreError(
            f"no store at {path}: nothing has been ingested there (check --store / EVENTKG_STORE, "
            "or fill it with `eventkg ingest SOURCE PATH` or `eventkg demo`)"
        )
    from eventkg.graphstore.ladybug.store import LadybugStore

    return LadybugStore(path, read_only=read_only)


def _exists(path: Path) -> bool:
    """Whether the store file exists; a folder on the way this user may not enter is a one-line error."""
    try:
        return path.exists()
    except PermissionError:
        folder = next((p for p in reversed(path.parents) if not os.access(p, os.X_OK)), path.parent)
        raise StoreError(f"cannot open store {path}: permission denied on folder {folder} (this user may not "
                         "enter it)") from None
