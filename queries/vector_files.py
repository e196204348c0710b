"""Where a store's vector indexes live, and reading and writing them (see :mod:`eventkg.queries.vector_index`).

One folder per store: ``X.faiss/`` beside a LadybugDB file ``X``, else a folder of the shared
cache (``$EVENTKG_CACHE/indexes/<url without credentials>-<hash>/``) of which at most
:data:`MAX_CACHED_STORES` are kept, least recently used removed. Inside, per level, the index
(``<level>.faiss``), its event ids (``<level>.ids.npy``) and the manifest (``<level>.json``).
Every file is written through a temp file and a rename, the manifest last, so a reader never
sees a half-written index as valid.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eventkg import settings
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.open import NEO4J_SCHEMES
from eventkg.queries.vector_faiss import IndexError_, set_search_params

if TYPE_CHECKING:
    import faiss

FORMAT = 1  # manifest format; an index of another format is rebuilt
MAX_CACHED_STORES = 8


def _strip_credentials(url: str) -> str:
    return re.sub(r"//[^/@]*@", "//", url)


def index_dir(store: GraphStore) -> Path:
    """The folder holding the store's vector indexes (see the module docstring)."""
    url = str(store.url)
    if url.startswith(NEO4J_SCHEMES) or url in ("", ":memory:"):
        clean = _strip_credentials(url)
        slug = re.sub(r"[^A-Za-z0-9]+", "_", clean).strip("_")[:60] or "memory"
        return settings.cache_dir("indexes") / f"{slug}-{hashlib.blake2b(clean.encode(), digest_size=4).hexdigest()}"
    return Path(url.removeprefix("ladybug://") + ".faiss")


def bound_cache(keep: Path) -> None:
    """Keep at most MAX_CACHED_STORES store folders in the shared cache (LRU by mtime)."""
    root = keep.parent
    if root != settings.cache_dir("indexes") or not root.is_dir():
        return
    folders = sorted((p for p in root.iterdir() if p.is_dir() and p != keep), key=lambda p: p.stat().st_mtime)
    for old in folders[: max(0, len(folders) - (MAX_CACHED_STORES - 1))]:
        shutil.rmtree(old, ignore_errors=True)



def manifest_path(folder: Path, stem: str) -> Path:
    return folder / f"{stem}.json"


def read_index(folder: Path, stem: str, model: str, fp: dict[str, Any]) -> tuple[faiss.Index, np.ndarray, dict] | None:
    """The persisted index, its ids and manifest (search parameters set) when the manifest matches
    ``model`` and the fingerprint ``fp``, else None."""
    import faiss

    try:
        manifest = json.loads(manifest_path(folder, stem).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("format") != FORMAT or manifest.get("model") != model or manifest.get("fingerprint") != fp:
        return None
    try:
        index = faiss.read_index(str(folder / f"{stem}.faiss"))
        ids = np.load(folder / f"{stem}.ids.npy", allow_pickle=False)
    except (OSError, RuntimeError, ValueError):
        return None
    if index.ntotal != len(ids):
        return None
    set_search_params(index, manifest)
    os.utime(folder)  # marks recent use for the shared cache's LRU bound
    return index, ids, manifest


def save_npy(tmp: str, arr: np.ndarray) -> None:
    with open(tmp, "wb") as fh:
        np.save(fh, arr, allow_pickle=False)


def new_temp_file(folder: Path) -> str:
    """A new empty ``.tmp-*`` file in ``folder`` with the mode ``open()`` gives (0666 less the umask).

    Why not ``tempfile.mkstemp``: its files are 0600, so an index shared through a group
    folder became unreadable to the others; reading the umask to chmod them meant changing
    it (``os.umask``), process-wide, at import. ``os.open`` applies the umask itself.
    """
    while True:
        tmp = folder / f".tmp-{secrets.token_hex(8)}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return str(tmp)


def atomic_write(folder: Path, target: Path, write: Callable[[str], None]) -> None:
    """Write ``target`` through a temp file in ``folder`` and a rename (never half-written)."""
    tmp = new_temp_file(folder)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_index(folder: Path, stem: str, index: faiss.Index, ids: np.ndarray, manifest: dict[str, Any]) -> None:
    """Write atomically (temp file + rename in the same folder); the manifest goes last."""
    import faiss

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexError_(f"cannot create index folder {folder}: {exc.strerror}") from exc
    bound_cache(folder)
    manifest_path(folder, stem).unlink(missing_ok=True)  # a half-replaced set is never read as valid
    for leftover in folder.glob(".tmp-*"):
        leftover.unlink(missing_ok=True)
    try:
        atomic_write(folder, folder / f"{stem}.faiss", lambda tmp: faiss.write_index(index, tmp))
        atomic_write(folder, folder / f"{stem}.ids.npy", lambda tmp: save_npy(tmp, ids))
        atomic_write(folder, manifest_path(folder, stem), lambda tmp: Path(tmp).write_text(json.dumps(manifest, indent=2)))
    except OSError as exc:
        raise IndexError_(f"cannot write vector index in {folder}: {exc.strerror}") from exc

