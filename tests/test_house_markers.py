"""Tracked files read as references, not as a work diary.

Fails on the markers a diary leaves: numbered work periods ("session 12"), a work period called
"this session" in prose, tracker numbers ("issue 22", "#22 point 5"), in-house names for the
papers ("seed 001"), and folders outside the repository (absolute ``/data/...``, ``/work/...``,
``/tmp/h12``). In Python "this session" is left alone: there it names a bulk or driver session.
Upstream references (``owner/repo#123``) are not tracker numbers of this project.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: (what it is, pattern) checked in every tracked text file.
MARKERS: list[tuple[str, re.Pattern[str]]] = [
    ("a numbered work period", re.compile(r"\bsessions?\s+(?:h\d+|\d+)\b", re.IGNORECASE)),
    ("a tracker number", re.compile(r"\bissues?\s+#?\d+\b|(?<![\w/.-])#\d+\s+points?\b", re.IGNORECASE)),
    ("an in-house name for a paper", re.compile(r"\bseeds?[\s_-]*0\d\d\b", re.IGNORECASE)),
    ("a folder outside the repository", re.compile(r"(?<![\w.~/-])/(?:data|work)/|(?<![\w.~/-])/tmp/h\d+")),
]
#: only in prose (documentation), where "this session" can only mean a work period.
PROSE_MARKERS: list[tuple[str, re.Pattern[str]]] = [
    ("a work period", re.compile(r"\b(?:this|last|earlier|previous|next) session\b", re.IGNORECASE)),
]
PROSE_SUFFIXES = {".md", ".rst", ".txt"}


def tracked_files() -> list[Path]:
    """The repository's tracked files (``git ls-files``), this test excepted."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"not a git checkout ({exc}): no tracked files to read")
    return [ROOT / name for name in out.decode().split("\0") if name and name != THIS]


def markers_in(text: str, prose: bool) -> list[tuple[int, str, str]]:
    """(line number, what, the matched text) of each marker in ``text``."""
    checks = MARKERS + (PROSE_MARKERS if prose else [])
    hits = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in checks:
            hits += [(number, what, m.group(0)) for m in pattern.finditer(line)]
    return hits


@pytest.mark.parametrize(
    ("line", "prose"),
    [
        ("Same machine as session 14, bench files kept.", False),
        ("## Session 21 (2026-11-29, afternoon)", True),
        ("sessions 11-12 measured it", False),
        ("checked in session h5", False),
        ("Measured by this session's helpers on 2026-11-26.", True),
        ("Target (issue 22, point 8): every saved query within 1 s", False),
        ("the move of issue 24", False),
        ("cold and warm (#22 point 5)", False),
        ("the Table 1 of seed 001", False),
        ("Seed 004's CLoMo data", False),
        ("--workdir /data/bench --seed 11", False),
        ("stores under /work/main/tests", False),
        ("a sitecustomize on PYTHONPATH (/tmp/h22site)", False),
    ],
)
def test_each_kind_of_marker_is_found(line: str, prose: bool) -> None:
    assert markers_in(line, prose), line


@pytest.mark.parametrize(
    ("line", "prose"),
    [
        ("rows of node keys this session added, merged before their COPY", False),
        ("An ingest into LadybugDB is a bulk session: it holds new rows", True),
        ("one Neo4j session per worker", True),
        ("the same class of engine bug is reported upstream (kuzudb/kuzu#2916)", True),
        ("eventkg questions cec -n 100 --seed 1", True),
        ("bench files written with seed 11", True),
        ("tests read ../shared/data/samples beside the checkout", True),
        ("a release's data/ folder, e.g. ev2/data/cec.jsonl", True),
        ("python -m bench.ingest_bench --workdir $WORKDIR", True),
        ("tempfile.mkdtemp() under /tmp/eventkg-bench", True),
    ],
)
def test_what_is_not_a_marker_passes(line: str, prose: bool) -> None:
    assert not markers_in(line, prose), line


def test_tracked_files_hold_no_work_diary_markers() -> None:
    found = []
    for path in tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary files (samples, images)
        rel = path.relative_to(ROOT).as_posix()
        found += [f"{rel}:{n}: {what}: {hit!r}" for n, what, hit in markers_in(text, path.suffix in PROSE_SUFFIXES)]
    assert not found, f"{len(found)} work-diary markers in tracked files:\n" + "\n".join(found)
