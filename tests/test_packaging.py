"""One import name: the layers install as ``eventkg.<layer>`` and nothing else is top level.

Run from a folder outside the checkout, so that the repository root is not on ``sys.path``
(which would make its folders importable whatever the installation does).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LAYERS = ("graphstore", "ingest", "queries", "tasks")


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_layers_import_under_eventkg_from_outside_the_checkout(tmp_path: Path) -> None:
    proc = run_python("import eventkg.graphstore, eventkg.ingest, eventkg.queries, eventkg.tasks, eventkg.tasks.models", tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_is_not_a_top_level_name(tmp_path: Path, layer: str) -> None:
    proc = run_python(f"import {layer}", tmp_path)
    assert proc.returncode != 0 and f"No module named '{layer}'" in proc.stderr, proc.stderr


def test_installed_layers_are_the_checkout_folders(tmp_path: Path) -> None:
    """``eventkg.graphstore`` is ``./graphstore`` (package-dir), not a copy elsewhere."""
    root = Path(__file__).resolve().parent.parent
    proc = run_python("import eventkg.graphstore as g, eventkg.queries as q; print(g.__file__); print(q.__file__)", tmp_path)
    assert proc.returncode == 0, proc.stderr
    files = [Path(line).resolve() for line in proc.stdout.split()]
    assert files == [root / "graphstore" / "__init__.py", root / "queries" / "__init__.py"]


def test_public_api_from_eventkg(tmp_path: Path) -> None:
    code = (
        "import sys, eventkg\n"
        "assert 'eventkg.queries.retrieval.retrieve' not in sys.modules  # lazy: nothing loaded before use\n"
        "from eventkg import open_store, ingest_source, retrieve, induce, evaluate, make_questions, EventKGError\n"
        "from eventkg.graphstore import StoreError\n"
        "assert issubclass(StoreError, EventKGError)\n"
        "print(induce(['Before', 'Causes']))\n"
    )
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Before"  # Table 1: Before then Causes induces Before
    bad = run_python("import eventkg; eventkg.no_such_name", tmp_path)
    assert "module 'eventkg' has no attribute 'no_such_name'" in bad.stderr


def test_wheel_holds_the_bundled_files(tmp_path: Path) -> None:
    """The files found through importlib.resources are in the wheel, where the package expects them."""
    import zipfile

    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(root)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    names = set(zipfile.ZipFile(next((tmp_path / "dist").glob("eventkg-*.whl"))).namelist())
    for name in ("eventkg/graphstore/saved.cypher", "eventkg/graphstore/browser_style.grass",
                 "eventkg/graphstore/neo4j/server/pom.xml", "eventkg/tasks/ev2/prompts/plain.txt",
                 "eventkg/tasks/ev2/tasks.py", "eventkg/tasks/clomo/ses.py", "eventkg/tasks/clomo/prompts/judge.txt",
                 "eventkg/tasks/abspyramid/release.py", "eventkg/tasks/abspyramid/prompts/generation.txt",
                 "eventkg/ingest/samples/ev2/S_CEC.jsonl", "eventkg/ingest/samples/aser/KG.db",
                 "eventkg/ingest/samples/clomo/zero_test.json"):
        assert name in names, name
    assert not any(n.split("/")[0] in LAYERS for n in names)  # one import name
