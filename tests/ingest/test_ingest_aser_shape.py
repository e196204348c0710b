"""The ASER-shape generator looks like a toolkit-written KG.db, and the real loader ingests it exactly.

Expected counts come from the file through plain ``sqlite3`` and the documented
normalisation (lower-case, ``_`` to space, whitespace collapsed: the generator's words are
already in that form, which the test checks), never from the loader.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.model import ASER_RELATIONS, upper_snake
from tests.support.aser_shape import make_aser_shape_kg
from tests.support.paths import CHECKOUT

ROOT = CHECKOUT
N_EV, N_REL = 12_000, 36_000


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> Path:
    return make_aser_shape_kg(tmp_path_factory.mktemp("shape") / "KG.db", N_EV, N_REL, seed=3)


def _senses(conn: sqlite3.Connection) -> np.ndarray:
    return np.array(conn.execute(f"SELECT {', '.join(ASER_RELATIONS)} FROM Relations ORDER BY rowid").fetchall())


def test_the_file_has_the_toolkit_shape(kg):
    conn = sqlite3.connect(kg)
    rows = conn.execute("SELECT rowid, _id, words, info FROM Eventualities").fetchall()
    assert len(rows) == N_EV
    texts: dict[str, list[int]] = {}
    for rowid, _, words, _ in rows:
        texts.setdefault(words, []).append(rowid)
    repeated = N_EV - len(texts)
    assert 0.025 * N_EV <= repeated <= 0.045 * N_EV  # ~3.5% of the rows repeat another's words
    spread = [max(r) - min(r) for r in texts.values() if len(r) > 1]
    assert sum(s > N_EV // 4 for s in spread) > len(spread) // 3  # repeats lie far apart in the file
    assert len({eid for _, eid, _, _ in rows}) == N_EV  # under distinct eids
    infos = [json.loads(info) for *_, info in rows[:500]]
    keys = {
        "_dependencies",
        "words",
        "pos_tags",
        "_ners",
        "_mentions",
        "_verb_indices",
        "_skeleton_indices",
        "_skeleton_dependency_indices",
    }
    assert all(
        set(i) == keys and " ".join(i["words"]) == words for i, (_, _, words, _) in zip(infos, rows, strict=False)
    )
    assert np.mean([len(info) for *_, info in rows]) > 250  # the full parsed eventuality, hundreds of bytes

    counts = _senses(conn)
    per_row = (counts != 0).sum(axis=1)
    share = [np.mean(per_row == k) for k in (1, 2, 3)]
    assert abs(share[0] - 0.6) < 0.03 and abs(share[1] - 0.3) < 0.03 and abs(share[2] - 0.1) < 0.02
    nonzero = counts[counts != 0]
    assert 0.4 < np.mean(nonzero != np.floor(nonzero)) < 0.6  # about half the counts fractional
    per_sense = dict(zip(ASER_RELATIONS, (counts != 0).sum(axis=0), strict=True))
    assert per_sense["Co_Occurrence"] == max(per_sense.values())
    assert per_sense["Co_Occurrence"] > 50 * per_sense["Exception"] > 0  # skewed senses

    degree: dict[str, int] = {}
    for rid, hid, tid in conn.execute("SELECT _id, hid, tid FROM Relations"):
        assert rid == hashlib.sha1(f"{hid}${tid}".encode()).hexdigest()
        degree[hid], degree[tid] = degree.get(hid, 0) + 1, degree.get(tid, 0) + 1
    deg = np.array(list(degree.values()) + [0] * (N_EV - len(degree)))
    assert 3 <= np.percentile(deg, 50) <= 8 and 15 <= np.percentile(deg, 99) <= 35
    assert deg.max() > 20 * np.percentile(deg, 50)  # hubs
    hids = [r[0] for r in conn.execute("SELECT hid FROM Relations ORDER BY rowid LIMIT 1000")]
    assert hids != sorted(hids)  # rows in no particular order, as the toolkit inserts them


def test_same_seed_same_file(tmp_path):
    a = make_aser_shape_kg(tmp_path / "a.db", 500, 1500, seed=9)
    b = make_aser_shape_kg(tmp_path / "b.db", 500, 1500, seed=9)
    dump = [list(sqlite3.connect(p).iterdump()) for p in (a, b)]
    assert dump[0] == dump[1]


def _expected(kg: Path) -> tuple[int, dict[str, int]]:
    """Nodes and edges per type, straight from the file: one node per distinct text, one edge
    per distinct (head text, tail text) pair with a non-zero count of a sense."""
    conn = sqlite3.connect(kg)
    bad = conn.execute(
        "SELECT count(*) FROM Eventualities WHERE words != lower(words) OR words LIKE '%  %' "
        "OR words LIKE '% ' OR words LIKE ' %' OR words LIKE '%\\_%' ESCAPE '\\'"
    ).fetchone()[0]
    assert bad == 0  # already normal: the distinct words are the distinct normalised texts
    nodes = conn.execute("SELECT count(DISTINCT words) FROM Eventualities").fetchone()[0]
    edges = {}
    for sense in ASER_RELATIONS:
        n = conn.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT h.words, t.words FROM Relations r "
            f"JOIN Eventualities h ON h._id = r.hid JOIN Eventualities t ON t._id = r.tid WHERE r.{sense} != 0)"
        ).fetchone()[0]
        if n:
            edges[upper_snake(sense)] = n
    return nodes, edges


def test_the_loader_ingests_it_exactly_with_repeats_across_batches(kg, tmp_path):
    nodes, edges = _expected(kg)
    assert nodes < N_EV  # repeated texts are one node each
    with open_store(str(tmp_path / "s.lbug")) as store:
        report = ingest_source(store, "aser", kg, batch_size=2_000)  # repeats fall into different batches
        counts = store.counts()
    assert report.rejected == 0
    assert counts["nodes"]["Event"] == nodes
    assert {t: n for t, n in counts["edges"].items() if n} == edges


def test_a_truncated_file_is_one_line_and_a_rerun_on_the_repaired_file_finishes(kg, tmp_path):
    cut = tmp_path / "cut" / "KG.db"
    cut.parent.mkdir()
    data = kg.read_bytes()
    cut.write_bytes(data[: len(data) * 3 // 5 + 123])
    store = tmp_path / "s.lbug"
    cli = [sys.executable, "-m", "eventkg", "--store", str(store), "ingest", "aser", str(cut)]
    run = subprocess.run(cli, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(cut) in lines[0] and "truncated SQLite file" in lines[0], run.stderr
    assert "Traceback" not in run.stderr
    with open_store(str(store), read_only=True) as s:  # nothing half-written
        assert sum(s.counts()["nodes"].values()) == 0 and sum(s.counts()["edges"].values()) == 0
    cut.write_bytes(data)  # repaired
    assert subprocess.run(cli, capture_output=True, text=True, cwd=ROOT).returncode == 0
    nodes, edges = _expected(kg)
    with open_store(str(store), read_only=True) as s:
        counts = s.counts()
    assert counts["nodes"]["Event"] == nodes
    assert {t: n for t, n in counts["edges"].items() if n} == edges
