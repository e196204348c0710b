"""The reference site: ``mkdocs build --strict`` passes, fails on a broken reference, and its CLI page
is generated from every command's ``--help`` (scripts/gen_cli_docs.py, an mkdocs hook)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from eventkg.cli.app import app

ROOT = Path(__file__).resolve().parent.parent


def _mkdocs() -> list[str]:
    """The mkdocs command; skip without it (``pip install -e '.[docs]'``), fail under CI."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        reason = "mkdocs and mkdocstrings are not installed (pip install -e '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so this does not skip", pytrace=False)
        pytest.skip(reason)
    return [sys.executable, "-m", "mkdocs"]


def _build(root: Path, site: Path) -> subprocess.CompletedProcess:
    # run outside the checkout: ``python -m`` puts the working folder first on sys.path, where the
    # ``eventkg/`` folder (without its layers) could be found instead of the staged package
    # no -q: mkdocs counts for --strict only the warnings it logs, and -q logs none
    return subprocess.run([*_mkdocs(), "build", "--strict", "-f", str(root / "mkdocs.yml"), "-d", str(site)],
                          cwd=site.parent, capture_output=True, text=True, timeout=300)


def _gen_cli_docs():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_in_strict_mode_with_the_api_and_every_command(tmp_path):
    # as in a fresh clone: the staged package (scripts/api_layout.py) not there yet
    shutil.rmtree(ROOT / "build" / "api-src", ignore_errors=True)
    proc = _build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("open_store", "GraphStore", "retrieve", "ingest", "make_questions", "evaluate"):
        assert name in api, name
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "eventkg neo4j start" in cli and "--import" in cli
    for family in ("ev2", "clomo", "abspyramid"):  # each family's README.md, from its folder (scripts/task_pages.py)
        page = (tmp_path / "site" / "tasks" / family / "index.html").read_text(encoding="utf-8")
        assert "How to cite" in page and f'href="{family}/"' in (tmp_path / "site" / "tasks" / "index.html").read_text(encoding="utf-8")


def test_the_cli_page_has_a_section_with_the_help_of_every_command():
    gen = _gen_cli_docs()
    page = gen.render()
    names = [" ".join(("eventkg", *path)) for path, _ in gen.commands(typer.main.get_command(app))]
    assert len(names) > 15 and "eventkg neo4j stop" in names
    for name in names:
        assert f"## {name}\n" in page, name
    assert "Usage: eventkg neo4j start" in page and "Ctrl-C" in page


@pytest.mark.parametrize(("page", "broken", "named"), [
    ("reference/api.md", "\n::: eventkg.graphstore.open.no_such_function\n", "no_such_function"),
    ("index.md", "\nSee [the missing page](no_such_page.md).\n", "no_such_page.md"),
])
def test_a_broken_reference_or_link_fails_the_build(tmp_path, page, broken, named):
    """The same site, a page naming an object that does not exist or linking a missing page, must not build."""
    import yaml

    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    doc = tmp_path / "docs" / page
    doc.write_text(doc.read_text(encoding="utf-8") + broken, encoding="utf-8")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(tmp_path / "docs")
    config["hooks"] = [str(ROOT / hook) for hook in config["hooks"]]
    handler = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    handler["handlers"]["python"]["paths"] = [str(ROOT / path) for path in handler["handlers"]["python"]["paths"]]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    proc = subprocess.run([*_mkdocs(), "build", "--strict", "-f", str(tmp_path / "mkdocs.yml"), "-d",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert named in proc.stderr, proc.stderr[-2000:]
