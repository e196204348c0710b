"""Where a store's vector indexes live, and reading and writing them (see :mod:`eventkg.queries.vectors.index`).

One folder per store: ``X.faiss/`` beside a LadybugDB file ``X``, else a folder of the shared
cache (``$EVENTKG_CACHE/indexes/<url without credentials>-<hash>/``) of which at most
:data:`MAX_CACHED_STORES` are kept, least recently used removed. Inside, the model's vectors file
(:mod:`eventkg.queries.vectors.store`) and per level a manifest (``<level>.json``) naming its FAISS
file (``index-<kind>-<fingerprint>.faiss``; none for ``flat``, built from the vectors file when
opened). Levels with the same events share one file.
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
from eventkg.queries.errors import VectorIndexError

if TYPE_CHECKING:
    import faiss

FORMAT = 2  # level manifest format; format 1 indexes are read for their vectors (vector_store.harvest_old), then rebuilt
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


def read_manifest(folder: Path, stem: str) -> dict[str, Any] | None:
    try:
        found = json.loads(manifest_path(folder, stem).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def level_manifests(folder: Path) -> dict[str, dict[str, Any]]:
    """Every readable level manifest in ``folder`` (any format), by level stem."""
    out = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if not path.stem.startswith("vectors-"):
            found = read_manifest(folder, path.stem)
            if found is not None:
                out[path.stem] = found
    return out


def read_level_index(folder: Path, manifest: dict[str, Any]) -> faiss.Index | None:
    """The FAISS file a level manifest names (None when unreadable)."""
    import faiss

    try:
        return faiss.read_index(str(folder / manifest["file"]))
    except (OSError, RuntimeError, ValueError, KeyError):
        return None


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


def write_level(folder: Path, stem: str, index: Any, manifest: dict[str, Any]) -> None:
    """Write a level's index file (when ``index`` is not None; named by ``manifest["file"]``) and
    its manifest, atomically, the manifest last; files no manifest names any more are removed."""
    import faiss

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VectorIndexError(f"cannot create index folder {folder}: {exc.strerror}") from exc
    bound_cache(folder)
    manifest_path(folder, stem).unlink(missing_ok=True)  # a half-replaced set is never read as valid
    for leftover in folder.glob(".tmp-*"):
        leftover.unlink(missing_ok=True)
    try:
        if index is not None:
            atomic_write(folder, folder / manifest["file"], lambda tmp: faiss.write_index(index, tmp))
        atomic_write(folder, manifest_path(folder, stem), lambda tmp: Path(tmp).write_text(json.dumps(manifest, indent=2)))
    except OSError as exc:
        raise VectorIndexError(f"cannot write vector index in {folder}: {exc.strerror}") from exc
    (folder / f"{stem}.ids.npy").unlink(missing_ok=True)  # format 1 kept its ids beside the index
    prune_index_files(folder)


def prune_index_files(folder: Path) -> None:
    """Remove ``*.faiss`` files no manifest names (a format-1 manifest names ``<level>.faiss``)."""
    named = {m.get("file") if m.get("format") != 1 else f"{stem}.faiss" for stem, m in level_manifests(folder).items()}
    for path in folder.glob("*.faiss"):
        if path.name not in named:
            path.unlink(missing_ok=True)
