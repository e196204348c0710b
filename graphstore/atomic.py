"""Files and folders written whole or not at all, and the free space they need.

Every file eventkg writes for a user (questions, exports, predictions, metrics, reports, plots,
audit findings) and every sidecar of a store goes through :func:`atomic_file` or
:func:`atomic_path`: the bytes go to a temporary name beside the target (same folder, so the same
file system), are fsynced, and the temporary file is renamed over the target; whatever fails on the
way (a full disk, a kill, a bug) removes the temporary file, so the target is the old file or the
whole new one, never a cut one. :func:`atomic_folder` does the same for a folder of outputs: it is
built beside the target and renamed into place (into an existing folder its files are moved in by
renames, which need no space, its marker file last).

The failures of the file system become one-line :class:`~eventkg.errors.OutputError`\\ s
(:func:`output_error`): a full disk says where and how much was free. It lives in the bottom layer
because the store's own sidecars use it; every layer above may.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from eventkg.errors import DiskFullError, OutputError

__all__ = [
    "atomic_file",
    "atomic_folder",
    "atomic_path",
    "check_output_file",
    "disk_full_message",
    "ensure_free",
    "free_bytes",
    "human_bytes",
    "is_disk_full",
    "output_error",
    "read_only_fs",
]

#: what marks a temporary name (``.STEM.tmp-TOKEN.SUFFIX``): hidden, and never a name eventkg writes
TMP_MARK = ".tmp-"


def human_bytes(n: float) -> str:
    """``n`` bytes as a short figure (``512 B``, ``3.1 MiB``, ``2.0 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns


def _existing(path: Path) -> Path:
    """``path`` or its nearest folder that exists (what ``statvfs`` can be asked of)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: str | Path) -> int | None:
    """Bytes free to this user on the file system that holds (or would hold) ``path``; None if unknown."""
    try:
        return shutil.disk_usage(_existing(Path(path))).free
    except OSError:
        return None


def disk_full_message(action: str, where: Path) -> str:
    """``disk full: ACTION (N free on the file system of FOLDER)``."""
    free = free_bytes(where)
    folder = _existing(where.parent if not where.is_dir() else where)
    left = "unknown space" if free is None else human_bytes(free)
    return f"disk full: {action} ({left} free on the file system of {folder})"


#: free bytes under which an engine's failed read or write on a file system is taken for a full disk
#: (the engine's messages do not always say so: "Cannot read from file")
LOW_SPACE = 1 << 20


def is_disk_full(exc: BaseException, where: str | Path | None = None) -> bool:
    """Whether ``exc`` (an OSError, pyarrow's or the engine's RuntimeError) comes of a full disk:
    its errno says so, or its message does, or the file system of ``where`` has under
    :data:`LOW_SPACE` free now."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    if "no space left" in text or "errno 28" in text or "disk quota" in text:
        return True
    free = free_bytes(where) if where is not None else None
    return free is not None and free < LOW_SPACE


def output_error(exc: OSError, target: str | Path, action: str | None = None) -> OutputError:
    """A file system refusal as one line naming ``target`` and the cause.

    Args:
        exc: What the file system raised.
        target: The file or folder being written.
        action: What was being done (default ``cannot write TARGET``).

    Returns:
        A :class:`~eventkg.errors.DiskFullError` for a full disk or quota, else an
        :class:`~eventkg.errors.OutputError`; the caller raises it (``from None``).
    """
    target = Path(target)
    action = action or f"cannot write {target}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(disk_full_message(action, target))
    reasons = {
        errno.EROFS: "the file system is mounted read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "it is a folder",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.ENOENT: f"folder {target.parent} does not exist",
    }
    reason = reasons.get(exc.errno or 0) or exc.strerror or str(exc)
    return OutputError(f"{action}: {reason}")


def check_output_file(path: str | Path, what: str = "output file") -> Path:
    """Refuse, before any work, a file target that cannot be written: a folder, a missing or
    unwritable parent folder, a read-only file system.

    Args:
        path: The file to be written (replaced if it exists).
        what: How the message names it (``--out``, ``--json``...).

    Returns:
        ``path`` as a Path.

    Raises:
        OutputError: One line naming ``path`` and why.
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{what} {path}: it is a folder; give a file name")
    parent = path.parent
    if not parent.is_dir():
        raise OutputError(f"{what} {path}: folder {parent} does not exist" if not parent.exists()
                          else f"{what} {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK):
        reason = ("the file system is mounted read-only" if read_only_fs(parent)
                  else f"folder {parent} is not writable")
        raise OutputError(f"{what} {path}: {reason}")
    return path


def read_only_fs(path: str | Path) -> bool:
    """True when the file system holding ``path`` (or its nearest existing folder) is mounted read-only."""
    try:
        return bool(os.statvfs(_existing(Path(path))).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def ensure_free(where: str | Path, need: int, what: str, *, detail: str = "") -> None:
    """Refuse work that needs ``need`` bytes on the file system of ``where`` when fewer are free.

    Args:
        where: A file or folder on the file system to be written (need not exist yet).
        need: The bytes the work is estimated to write there.
        what: The work, for the message (``ingest aser into STORE``).
        detail: What the estimate is made of, shown beside it (``its spool and the store's growth``).

    Raises:
        DiskFullError: Fewer than ``need`` bytes are free; nothing has been written.
    """
    free = free_bytes(where)
    if free is not None and free < need:
        folder = _existing(Path(where))
        made_of = f" ({detail})" if detail else ""
        raise DiskFullError(f"disk full: {what} needs about {human_bytes(need)}{made_of} and the file system of "
                            f"{folder if folder.is_dir() else folder.parent} has {human_bytes(free)} free; "
                            "free some space or write elsewhere (nothing was written)")


def _tmp_name(target: Path, suffix: str = "") -> Path:
    """``.STEM.tmp-TOKEN.SUFFIX`` beside ``target``: hidden, and with the target's suffix, for writers
    that choose the format by it (matplotlib's ``savefig``)."""
    return target.with_name(f".{target.stem}{TMP_MARK}{secrets.token_hex(4)}{suffix or target.suffix}")


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(target: str | Path, *, durable: bool = True, what: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``target`` for a writer that takes a path (``savefig``, a JSON
    dumper); renamed over ``target`` when the block ends, removed when it raises.

    Args:
        target: The file to write (replaced whole if it exists).
        durable: fsync the file before the rename and the folder after (off only for a sidecar
            whose loss in a crash is harmless, the store's digest book).
        what: How a failure names the target (default ``cannot write TARGET``).

    Yields:
        The temporary path (the block writes it; nothing there yet).

    Raises:
        OutputError: The file system refused (a full disk as :class:`~eventkg.errors.DiskFullError`).
    """
    target = Path(target)
    tmp = _tmp_name(target)
    try:
        yield tmp
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
        if durable:
            _fsync_folder(target.parent)
    except OSError as exc:
        _remove(tmp)  # first: the free space the message gives is what is left without it
        raise output_error(exc, target, what) from None
    finally:
        _remove(tmp)


@contextmanager
def atomic_file(target: str | Path, mode: str = "w", *, encoding: str | None = "utf-8", durable: bool = True,
                what: str | None = None) -> Iterator[IO[Any]]:
    """An open file that appears at ``target`` whole when the block ends, or not at all.

    Args:
        target: The file to write (replaced whole if it exists).
        mode: ``"w"`` (text, ``encoding``) or ``"wb"``.
        encoding: The text encoding (ignored for ``"wb"``).
        durable: As :func:`atomic_path`.
        what: As :func:`atomic_path`.

    Yields:
        The file object, open for writing.

    Raises:
        OutputError: The file system refused (a full disk as :class:`~eventkg.errors.DiskFullError`).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file mode {mode!r}: 'w' or 'wb'")
    with atomic_path(target, durable=durable, what=what) as tmp:
        try:
            fh = open(tmp, mode, encoding=None if "b" in mode else encoding)  # noqa: SIM115 - closed below
        except OSError as exc:
            raise output_error(exc, target, what) from None
        with fh:
            yield fh
            fh.flush()  # atomic_path fsyncs it before the rename


@contextmanager
def atomic_folder(target: str | Path, *, last: Sequence[str] = (), what: str | None = None) -> Iterator[Path]:
    """A folder of outputs that appears complete or not at all.

    The block writes its files into a temporary folder beside ``target`` (every byte written
    there, where a full disk would stop it). At the end, a ``target`` that does not exist (or is
    empty) is replaced by the temporary folder in one rename; into an existing folder the files are
    moved one rename each (no space needed), the names in ``last`` after the others, so a reader
    that trusts the marker file finds the rest in place. A block that raises leaves ``target`` as
    it was and the temporary folder removed.

    Args:
        target: The folder to fill.
        last: Names moved last (a manifest that says the folder is complete).
        what: How a failure names the target.

    Yields:
        The temporary folder to write into.

    Raises:
        OutputError: The folder cannot be made or filled (a full disk as
            :class:`~eventkg.errors.DiskFullError`).
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{what or 'cannot write'} {target}: it is a file, not a folder")
    tmp = _tmp_name(target)
    made = [p for p in [target.parent, *target.parent.parents] if not p.exists()]  # removed on failure
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as exc:
        _remove_folders(made)
        raise output_error(exc, target, what) from None
    try:
        yield tmp
        _fsync_tree(tmp)
        if target.is_dir() and not any(target.iterdir()):
            target.rmdir()
        if not target.exists():
            os.replace(tmp, target)
        else:
            names = sorted(p.name for p in tmp.iterdir())
            for name in [*(n for n in names if n not in last), *(n for n in names if n in last)]:
                _replace_entry(tmp / name, target / name)
        _fsync_folder(target)
        _fsync_folder(target.parent)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_folders(made)
        raise output_error(exc, target, what) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_folders(made)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_folders(folders: Sequence[Path]) -> None:
    """Remove the folders :func:`atomic_folder` made on the way to its target (deepest first), if empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _replace_entry(src: Path, dst: Path) -> None:
    """Move ``src`` over ``dst`` (a folder over a folder: the old one removed after the rename)."""
    if src.is_dir() and dst.is_dir():
        old = _tmp_name(dst, ".old")
        os.replace(dst, old)
        os.replace(src, dst)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb+") as fh:
                os.fsync(fh.fileno())
        _fsync_folder(path if path.is_dir() else path.parent)


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
