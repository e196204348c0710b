"""mkdocs hook: the task families' pages (``tasks/README.md``, ``tasks/<family>/README.md``) on the site.

Each family keeps its page beside its code, as lm-evaluation-harness keeps a README per task
folder; :func:`on_files` adds them at build time under ``tasks/`` with the same layout, so their
links to one another hold, and a link into ``docs/`` (``../docs/reproduce.md``) is pointed at the
site's page. mkdocs.yml's nav lists them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "tasks"
_INTO_DOCS = re.compile(r"\]\(((?:\.\./)+)docs/")


def pages(root: Path = TASKS) -> dict[str, str]:
    """Site path -> page text: the index and every family folder's README.md."""
    found = [root / "README.md", *sorted(root.glob("*/README.md"))]
    return {f"tasks/{p.relative_to(root).as_posix()}": _INTO_DOCS.sub(r"](\1", p.read_text(encoding="utf-8"))
            for p in found}


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """mkdocs hook: add the task pages to the site's files."""
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files
