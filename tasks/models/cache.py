"""A named, bounded on-disk cache of model responses, keyed by the request's hash.

Why: re-running an evaluation (a new metric, a new report) must not pay for the same API
calls twice. The cache lives in one documented folder, is capped in bytes (oldest files go
first) and can be cleared with ``eventkg eval --clear-cache``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from eventkg import settings

DEFAULT_MAX_BYTES = 512 * 1024 * 1024


def request_key(payload: dict[str, Any]) -> str:
    """A stable hash of everything that determines a response (model, URL, messages, params)."""
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Files ``<dir>/<k[:2]>/<k>.json``; writes are atomic; size kept under ``max_bytes``."""

    def __init__(self, directory: str | Path | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        # default: the cache root's responses/ folder, ~/.cache/eventkg/responses (eventkg.settings)
        self.directory = Path(directory) if directory else settings.cache_dir("responses")
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._writes = 0

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, ensure_ascii=False)
        os.replace(tmp, path)
        with self._lock:
            self._writes += 1
            check = self._writes % 64 == 1
        if check:
            self.prune()

    def files(self) -> list[Path]:
        return list(self.directory.glob("??/*.json")) if self.directory.is_dir() else []

    def info(self) -> dict[str, Any]:
        files = self.files()
        return {"dir": str(self.directory), "entries": len(files), "bytes": sum(f.stat().st_size for f in files),
                "max_bytes": self.max_bytes}

    def prune(self) -> int:
        """Delete the oldest entries until the cache fits ``max_bytes``; returns how many went."""
        files = sorted(self.files(), key=lambda f: f.stat().st_mtime)
        total = sum(f.stat().st_size for f in files)
        removed = 0
        for f in files:
            if total <= self.max_bytes:
                break
            total -= f.stat().st_size
            f.unlink(missing_ok=True)
            removed += 1
        return removed

    def clear(self) -> int:
        """Delete every cached response; returns how many were removed."""
        files = self.files()
        for f in files:
            f.unlink(missing_ok=True)
        for sub in self.directory.glob("??"):
            if sub.is_dir() and not any(sub.iterdir()):
                sub.rmdir()
        return len(files)
