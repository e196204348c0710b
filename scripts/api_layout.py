"""mkdocs hook: the ``eventkg`` package laid out as it is installed, for mkdocstrings to read.

The layers keep their folders at the repository root (``graphstore/``, ``ingest/``, ...) and are
installed as ``eventkg.<layer>`` (``package-dir`` in pyproject.toml), a layout a static reader
cannot follow. Loading this hook builds ``build/api-src/eventkg/`` each build: copies of the
files of ``eventkg/`` (a linked ``__init__.py`` would lead the reader back to ``eventkg/``) and a
symbolic link per subpackage; mkdocs.yml points the handler's ``paths`` there,
so the docstrings are read from the sources, nothing imported. It is built when mkdocs loads the
hook, before any plugin's ``on_config`` (the hook has no event of its own): mkdocstrings lists its ``paths`` once, when it sets up
its handler, and a folder missing then (a fresh clone) stays missing for the whole build.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGE = ROOT / "build" / "api-src"


def stage(root: Path = ROOT, out: Path = STAGE) -> Path:
    """Link ``out/eventkg`` to the sources per pyproject.toml's ``package-dir``; returns ``out``."""
    dirs = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(out, ignore_errors=True)
    package = out / "eventkg"
    package.mkdir(parents=True)
    for entry in (root / dirs["eventkg"]).iterdir():
        if entry.is_dir() and entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry, target_is_directory=True)
        elif entry.suffix == ".py":
            shutil.copyfile(entry, package / entry.name)
    for name, folder in dirs.items():
        if name != "eventkg":
            (package / name.split(".", 1)[1]).symlink_to(root / folder, target_is_directory=True)
    return out


stage()  # on load: before mkdocstrings lists its paths (see the module docstring)
