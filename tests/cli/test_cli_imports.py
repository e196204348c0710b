
"""``eventkg --help``, ``eventkg ingest --help`` and ``eventkg stats`` load no heavy library; a broken command module stops the app.

Each runs in its own process under ``python -X importtime``, whose stderr names every module
the process imported; none of the heavy ones (torch, sentence-transformers, FAISS,
scikit-learn, NLTK, matplotlib, rdflib, transformers) may appear. A command module that
imports a library module at its top (instead of inside the command) fails here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from eventkg import ingest_source
from tests.support.paths import SAMPLES

HEAVY = ("torch", "sentence_transformers", "faiss", "sklearn", "nltk", "matplotlib", "rdflib", "transformers")


def imported_modules(*args: str, cwd: Path) -> set[str]:
    """The top-level names of every module ``python -X importtime -m eventkg ARGS`` imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "eventkg", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+([\w.]+)\s*$", proc.stderr, flags=re.M)
    assert "eventkg.cli.app" in names  # the importtime output was read as meant
    return {name.split(".")[0] for name in names}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small store with rows in it, so that ``stats`` really counts."""
    from eventkg.graphstore import open_store

    path = tmp_path_factory.mktemp("imports") / "kg.lbug"
    with open_store(str(path)) as store:
        ingest_source(store, "clomo", SAMPLES / "clomo")
    return path


@pytest.mark.parametrize("args", [("--help",), ("ingest", "--help"), ("eval", "--help"), ("stats",), ("stats", "--json")],
                         ids=" ".join)
def test_no_heavy_import(args: tuple[str, ...], store_path: Path, tmp_path: Path) -> None:
    loaded = imported_modules("--store", str(store_path), *args, cwd=tmp_path)
    assert not loaded & set(HEAVY), f"eventkg {' '.join(args)} imported {sorted(loaded & set(HEAVY))}"


def test_the_check_sees_a_heavy_import(tmp_path: Path) -> None:
    """The same reading of importtime does find a heavy module when one is imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import eventkg.cli.app, sklearn.metrics"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "sklearn" in {n.split(".")[0] for n in re.findall(r"\|\s+([\w.]+)\s*$", proc.stderr, flags=re.M)}


#: a command module planted broken in a fresh process, then ``eventkg --help`` run: ``None`` in
#: sys.modules makes its import fail as a missing module does, the finder as a module raising does
PLANTS = {
    "missing": "sys.modules[{name!r}] = None",
    "raising": ("class Broken(importlib.abc.MetaPathFinder):\n"
                "    def find_spec(self, fullname, path=None, target=None):\n"
                "        if fullname == {name!r}:\n"
                "            raise RuntimeError('planted: this module is broken')\n"
                "sys.meta_path.insert(0, Broken())"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("name", ["eventkg.cli.eval", "eventkg.cli.saved"])
def test_a_broken_command_module_fails_loudly(plant: str, name: str, tmp_path: Path) -> None:
    """``eventkg --help`` exits non-zero with a last line naming the module, not a help without its commands."""
    code = ("import importlib.abc, sys\n" + PLANTS[plant].format(name=name) +
            "\nsys.argv = ['eventkg', '--help']\nfrom eventkg.cli.app import main\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, f"eventkg --help ran without {name}:\n{proc.stdout[-1500:]}"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("eventkg.errors.CommandModuleError: ") and f"command module {name} failed to import" in last, last

