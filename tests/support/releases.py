"""The three releases in the shared folder (:data:`tests.support.paths.SHARED`), the independent
reference the release tests compare with, and a release's own module imported as its scripts import it."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import types
from pathlib import Path

import pytest

from tests.support.paths import SHARED

RELEASES = SHARED / "data" / "releases"
EV2 = RELEASES / "ev2"
CLOMO = RELEASES / "clomo"
ABSPYRAMID = RELEASES / "abspyramid"
needs_releases = pytest.mark.skipif(not (EV2 / "src" / "data.py").is_file() or not (CLOMO / "SES").is_dir(),
                                    reason=f"the releases are not at {RELEASES} (put ../shared beside the checkout)")


def import_release(path: Path, name: str, extra_path: Path) -> types.ModuleType:
    """The release file imported the ordinary way (its folder on sys.path while it loads, its prints
    swallowed)."""
    sys.path.insert(0, str(extra_path))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(extra_path))
