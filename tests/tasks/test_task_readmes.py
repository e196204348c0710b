"""One page per task family, its folder's README.md (as lm-evaluation-harness keeps a README per task folder):
every registered task and each of its styles is on its family's page, which the index links and
which says how to cite the paper and where its release is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eventkg.tasks.registry import list_tasks

TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
SECTIONS = ("## What it measures", "## Data", "## Metric", "## Styles", "## How to cite")


def _family(name: str) -> str:
    return name.split("-")[0]


@pytest.mark.parametrize("spec", list_tasks(), ids=lambda s: s.name)
def test_every_task_and_style_is_on_its_family_page(spec) -> None:
    page = TASKS_DIR / _family(spec.name) / "README.md"
    assert page.is_file(), f"no page {page} for task {spec.name}"
    text = page.read_text(encoding="utf-8")
    assert f"`{spec.name}`" in text
    for style in spec.styles:
        assert re.search(rf"`{re.escape(style)}`", text), f"{page}: style {style!r} of {spec.name} not described"
    release = re.search(r"\(([\w.-]+/[\w.-]+)\)", spec.source).group(1)  # the registry's release, e.g. TZWwww/EV2
    assert f"<https://github.com/{release}>" in text.split("## How to cite", 1)[1]


def test_the_index_links_every_family_page_with_all_sections() -> None:
    index = (TASKS_DIR / "README.md").read_text(encoding="utf-8")
    families = sorted({_family(s.name) for s in list_tasks()})
    for family in families:
        assert f"]({family}/README.md)" in index
        text = (TASKS_DIR / family / "README.md").read_text(encoding="utf-8")
        assert [s for s in SECTIONS if s in text] == list(SECTIONS), family
