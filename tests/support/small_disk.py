"""A small real file system for the bad-day tests: a tmpfs mounted in the test's folder.

A full disk is made, not faked: ``mount -t tmpfs -o size=N`` (root only), filled by the code under
test or by :func:`fill`. Where mounting is not allowed the test skips with the reason; with ``CI``
set it fails instead (CI runs as root, so these tests must run there). Every mount is unmounted when
the test ends, failed or not (a lazy unmount, so a file still open does not keep it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def _refuse(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so this does not skip", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """``small_disk(mib, name="disk", read_only=False)``: a new tmpfs of ``mib`` MiB at
    ``tmp_path/name`` (remounted read-only when asked), unmounted after the test."""
    mounted: list[Path] = []

    def mount(mib: float, name: str = "disk", *, read_only: bool = False) -> Path:
        if shutil.which("mount") is None:
            _refuse("no mount command")
        folder = tmp_path / name
        folder.mkdir(exist_ok=True)
        size = f"{int(mib * 1024)}k"
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            _refuse(f"cannot mount a tmpfs here ({proc.stderr.strip() or 'mount failed'}; it needs root)")
        mounted.append(folder)
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, capture_output=True)
        return folder

    yield mount
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def grow(folder: Path, mib: float) -> None:
    """Give the tmpfs at ``folder`` ``mib`` MiB in all (the disk freed, as a user would)."""
    subprocess.run(["mount", "-o", f"remount,size={int(mib * 1024)}k", str(folder)], check=True, capture_output=True)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the file system of ``folder`` with one file until ``leave`` bytes are free; the file."""
    filler = folder / "filler"
    free = shutil.disk_usage(folder).free
    with open(filler, "wb") as fh:
        chunk = b"\0" * (1 << 16)
        todo = free - leave
        while todo > 0:
            try:
                fh.write(chunk[: min(len(chunk), todo)])
                fh.flush()
            except OSError:
                break
            todo -= min(len(chunk), todo)
    return filler


def entries(folder: Path) -> list[str]:
    """Every name in ``folder``, hidden ones included, sorted (what a failure must not leave)."""
    return sorted(p.name for p in folder.iterdir())
