"""Checks every loader shares: keys repeated within one ingest, the files a dataset folder should
hold, and the paths an ingest will write to (checked before anything is written).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eventkg.graphstore.atomic import ensure_free, read_only_fs
from eventkg.ingest.errors import IngestError, MissingFilesError, RowError, where

MIN_BATCH_SIZE = 1


class Keys:
    """The keys one ingest has read, each with where it was first read and a digest of its content.

    A key read again with the same content is an identical repeat: counted (``repeated``) and not
    stored again. With other content it is refused, naming both places: two rows must never be
    merged into one node or edge without a word. Kept per key (a dict of small tuples), so only
    for sources of up to a few million rows; ASER's primary keys are unique by construction.
    """

    def __init__(self) -> None:
        self._seen: dict[Any, tuple[bytes, int, int | str | None]] = {}
        self._files: dict[str, int] = {}
        self._names: list[str] = []
        self.repeated = 0

    def check(self, key: Any, content: Any, file: str, line: int | str | None) -> bool:
        """True if ``key`` was read before with this content; False the first time.

        Raises :class:`RowError` naming the first place when the content differs.
        """
        digest = hashlib.blake2b(json.dumps(content, sort_keys=True, default=str).encode(), digest_size=12).digest()
        old = self._seen.get(key)
        if old is None:
            fid = self._files.setdefault(file, len(self._names))
            if fid == len(self._names):
                self._names.append(file)
            self._seen[key] = (digest, fid, line)
            return False
        if old[0] != digest:
            first = where(self._names[old[1]], old[2])
            raise RowError(f"repeats {describe_key(key)} of {first} with different content (not merged)")
        return True

    def admit(self, row: Any, file: str, line: int | str | None) -> Any:
        """``row`` if any of its keys is new; an empty row (a counted repeat) if all were read before
        with the same content; :class:`RowError` if one was read with other content."""
        if not row.keys:
            return row
        if all([self.check(k, c, file, line) for k, c in row.keys]):
            self.repeated += 1
            return type(row)([], [])
        return row


def describe_key(key: Any) -> str:
    """A key for a message: ``question ('CEC', 'schema', '1-0')`` from ``("question", ...)``."""
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        rest = key[1:]
        return f"{key[0]} {rest[0]!r}" if len(rest) == 1 else f"{key[0]} {rest!r}"
    return repr(key)


def check_rejects_path(path: str | Path | None) -> None:
    """Refuse, in one line and before anything is written, a rejects path that cannot be appended to."""
    if not path:
        return
    p = Path(path)
    if p.is_dir():
        raise IngestError(str(p), None, "the rejects path is a folder; give a file to append the rejected rows to",
                          option="rejects")
    parent = next((a for a in [p.parent, *p.parent.parents] if a.exists()), Path("."))
    if not parent.is_dir():
        raise IngestError(str(p), None, f"the rejects path's {parent} is a file, not a folder", option="rejects")
    target = p if p.exists() else parent
    if not os.access(target, os.W_OK):
        raise IngestError(str(p), None, f"the rejects path's {target} is not writable", option="rejects")


def check_batch_size(batch_size: int) -> None:
    if batch_size < MIN_BATCH_SIZE:
        raise IngestError("batch_size", None, f"must be at least {MIN_BATCH_SIZE:,} (got {batch_size:,}); "
                          "smaller batches only make more, slower writes", option="batch_size")


def missing_parts(folder: str | Path, source: str, required: Iterable[str], files: Iterable[Path], *,
                  partial: bool, hint: str = "") -> list[str]:
    """The ``required`` file names that none of ``files`` (found under ``folder``) carries.

    Missing parts are an error listing what a folder of ``source`` should hold and lacks
    (:class:`MissingFilesError`), unless ``partial``: then they are returned for the report to
    name. A required name that is there as a folder is missing, and said to be a folder.
    """
    root = Path(folder)
    if not root.is_dir():
        return []  # one file given: the user chose it
    have = {f.name for f in files}
    required = list(required)
    lacking = [name for name in required if name not in have]
    if not lacking:
        return []
    folders = {d.name for d in root.rglob("*") if d.is_dir()}
    shown = [f"{name} (a folder, not a file)" if name in folders else name for name in lacking]
    if partial:
        return shown
    raise MissingFilesError(
        str(root), None,
        f"a {source} folder holds {', '.join(required)}{hint}; this one lacks {', '.join(shown)} "
        "(a partial ingest takes what is there and names what was left out)", option="partial",
    )


def check_store_folder(path: str | Path) -> None:
    """Refuse, in one line and before anything is written, an embedded store the user cannot write:
    the store file itself, or the folder that holds it and its side files (``.digests``, ``.wal``)."""
    p = Path(path).expanduser()
    if read_only_fs(p):
        raise IngestError(str(p), None, "the file system holding the store is mounted read-only; "
                          "nothing was written (ingest into a store on a writable disk)")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise IngestError(str(p), None, "the store is not writable (permission denied); nothing was written")
        if p.is_dir() and not any(p.iterdir()):
            raise IngestError(str(p), None, "the store path is an empty folder; give a file path such as kg.lbug")
    folder = next((a for a in p.parents if a.exists()), Path("."))
    if not folder.is_dir():
        raise IngestError(str(p), None, f"{folder} is a file, not a folder: the store cannot be made there")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise IngestError(str(p), None, f"the store's folder {folder} is not writable (permission denied); "
                          "nothing was written")


#: the disk an ingest takes at its peak per byte of its input, per source: its spool (the rows held,
#: then the staged tables the engine copies) beside the store's growth and the engine's own files;
#: each rate covers the largest measured at two sizes (docs/scale.md, "The disk an ingest takes")
PEAK_BYTES_PER_INPUT_BYTE = {"aser": 0.40, "ev2": 4.0, "clomo": 0.6, "abspyramid": 2.0, "eeckg": 6.0}
#: a source not measured: the highest rate above
DEFAULT_PEAK_BYTES_PER_INPUT_BYTE = max(PEAK_BYTES_PER_INPUT_BYTE.values())
#: what an ingest into a stored graph takes beside, per byte the store holds (the engine rewrites
#: much of a stored rel table it copies into, beside the old pages until its checkpoint)
PEAK_BYTES_PER_STORE_BYTE = 0.20
#: what a store's first rows take whatever their number (each table's first pages)
FIRST_ROWS_BYTES = 4 << 20


def input_bytes(path: str | Path) -> int:
    """The bytes of ``path``: a file's size, or the sum over a folder's files (0 when unreadable)."""
    p = Path(path)
    try:
        if p.is_file():
            return p.stat().st_size
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    except OSError:
        return 0


def ingest_need(source: str, input_size: int, store_size: int, *, limit: int | None = None) -> int:
    """The bytes an ingest of ``input_size`` bytes of ``source`` into a store of ``store_size`` bytes
    takes on the store's disk at its peak: :data:`PEAK_BYTES_PER_INPUT_BYTE` of the input (spool,
    staged tables, store growth), :data:`PEAK_BYTES_PER_STORE_BYTE` of the store it goes into, and
    :data:`FIRST_ROWS_BYTES` for a store that holds no rows yet. With a row ``limit`` the share of
    the input read is not known: only the last two parts count (a floor)."""
    rate = PEAK_BYTES_PER_INPUT_BYTE.get(source, DEFAULT_PEAK_BYTES_PER_INPUT_BYTE)
    need = 0 if limit is not None else int(input_size * rate)
    if store_size < FIRST_ROWS_BYTES:
        return need + FIRST_ROWS_BYTES
    return need + int(store_size * PEAK_BYTES_PER_STORE_BYTE)


def check_disk_room(store_url: str, path: str | Path, source: str, *, limit: int | None = None) -> None:
    """Refuse, before anything is written, an ingest into an embedded store whose disk cannot hold
    what the ingest takes at its peak (:func:`ingest_need`); a Neo4j store is not checked (its disk
    is the server's).

    Args:
        store_url: The store (``ladybug://PATH`` or a path; ``bolt://``, ``neo4j://`` are skipped).
        path: The source's file or folder (its bytes are the input's size).
        source: The loader's name (its rate).
        limit: The ingest's row limit, if any.

    Raises:
        DiskFullError: One line: what the ingest needs, and what the store's file system has free.
    """
    from eventkg.graphstore.open import NEO4J_SCHEMES

    if store_url.startswith(NEO4J_SCHEMES):
        return
    store = Path(store_url.removeprefix("ladybug://")).expanduser()
    try:
        store_size = store.stat().st_size if store.is_file() else 0
    except OSError:
        store_size = 0
    need = ingest_need(source, input_bytes(path), store_size, limit=limit)
    ensure_free(store, need, f"ingest {source} {path} into {store}",
                detail="its spool, staged tables and the store's growth")
