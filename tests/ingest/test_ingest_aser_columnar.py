"""The columnar ASER loader: chunking, --limit, rejects found in Arrow, ids, and the eid map's
SQLite fallback all give what the row-at-a-time reading of the file says they should."""

from __future__ import annotations

import json
import shutil
import sqlite3
from base64 import urlsafe_b64encode
from hashlib import blake2b

import numpy as np
import pyarrow as pa
import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.model import event_id
from eventkg.ingest import aser
from eventkg.ingest.errors import BadRowError
from tests.support import expected_counts as expect
from tests.support.expected_counts import fingerprint
from tests.support.synthetic import make_aser_kg


@pytest.fixture
def kg(tmp_path):
    return make_aser_kg(tmp_path / "KG.db", 500, 1500, seed=3)


def test_small_chunks_and_the_sqlite_fallback_give_the_same_graph(tmp_path, kg, monkeypatch):
    with open_store(str(tmp_path / "a.lbug")) as a:
        report = ingest_source(a, "aser", kg, map_events=True)
        assert report.rows == 2000 and report.rejected == 0
        assert expect.nonzero(a.counts()) == expect.aser(kg, map_events=True)
        want = fingerprint(a)
    monkeypatch.setattr(aser, "EID_MAP_MAX", 300)  # eventualities past 300 resolve through SQLite
    with open_store(str(tmp_path / "b.lbug")) as b:
        report = ingest_source(b, "aser", kg, map_events=True, batch_size=170)
        assert report.batches > 10
        assert fingerprint(b) == want


def test_limit_stops_inside_the_relations(tmp_path, kg):
    with open_store(str(tmp_path / "s.lbug")) as s:
        report = ingest_source(s, "aser", kg, limit=503, batch_size=100)
        assert report.rows == 503 and report.limited
        assert s.counts()["nodes"]["Event"] == 500
        conn = sqlite3.connect(kg)
        first = conn.execute(f"SELECT {', '.join(aser.ASER_RELATIONS)} FROM Relations LIMIT 3").fetchall()
        assert sum(s.counts()["edges"].values()) == sum(bool(c) for row in first for c in row)


def test_words_that_need_normalising_get_the_model_id(tmp_path, samples_dir):
    db = tmp_path / "KG.db"
    shutil.copy(samples_dir / "aser" / "KG.db", db)
    conn = sqlite3.connect(db)
    odd = ["PersonX  eat_Cake", " i be  hungry ", "café au lait", "personx  go home"]
    conn.executemany("INSERT INTO Eventualities (_id, frequency, pattern, words) VALUES (?, 1.0, 's-v', ?)",
                     [(f"odd{i}", w) for i, w in enumerate(odd)])
    conn.commit()
    conn.close()
    with open_store(str(tmp_path / "s.lbug")) as s:
        ingest_source(s, "aser", db)
        got = s.get_nodes("Event", [event_id(w) for w in odd])
        assert len(got) == len(odd)
        assert got[event_id(odd[0])]["text"] == "PersonX eat cake"


def _broken_kg(tmp_path, samples_dir):
    db = tmp_path / "KG.db"
    shutil.copy(samples_dir / "aser" / "KG.db", db)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO Eventualities (_id, frequency, words) VALUES ('e-blank', 1.0, '   ')")
    conn.execute("INSERT INTO Eventualities (_id, frequency, words) VALUES ('e-freq', 'often', 'go out')")
    conn.execute("INSERT INTO Relations (_id, hid, tid, Result) SELECT 'r-count', hid, tid, 'lots' FROM Relations LIMIT 1")
    conn.execute("INSERT INTO Relations (_id, hid, tid, Reason) SELECT 'r-blank', 'e-blank', tid, 1.0 FROM Relations LIMIT 1")
    conn.commit()
    conn.close()
    return db


def test_bad_rows_fail_with_their_id(tmp_path, samples_dir):
    db = _broken_kg(tmp_path, samples_dir)
    with open_store(str(tmp_path / "s.lbug")) as s, pytest.raises(BadRowError, match=r"\[Eventualities _id=e-blank\]: missing field 'words'"):
        ingest_source(s, "aser", db)


def test_bad_rows_skipped_with_reasons(tmp_path, samples_dir):
    db = _broken_kg(tmp_path, samples_dir)
    rejects = tmp_path / "r.jsonl"
    with open_store(str(tmp_path / "s.lbug")) as s:
        report = ingest_source(s, "aser", db, on_error="skip", rejects=rejects)
        assert report.rejected == 4
        lines = rejects.read_text().splitlines()
        reasons = {rec["line"]: rec["reason"] for rec in map(json.loads, lines)}
        assert reasons["Eventualities _id=e-freq"] == "frequency 'often' is not a number"
        assert reasons["Relations _id=r-count"] == "count 'lots' is not a number"
        assert reasons["Relations _id=r-blank"] == "hid 'e-blank' is not a (valid) row of Eventualities"
        good = expect.aser(samples_dir / "aser" / "KG.db")
        assert expect.nonzero(s.counts()) == good


def test_counts_keep_every_bit(tmp_path, samples_dir):
    """Counts travel from SQLite as text; they must read back as the very same doubles."""
    db = tmp_path / "KG.db"
    shutil.copy(samples_dir / "aser" / "KG.db", db)
    conn = sqlite3.connect(db)
    hid, tid = conn.execute("SELECT hid, tid FROM Relations LIMIT 1").fetchone()
    conn.execute("DELETE FROM Relations WHERE hid = ? AND tid = ?", (hid, tid))
    values = [1 / 3, 0.1, 1e-300, 123456789.123456789, 2.0 ** 60 + 3.5e3, 7]
    senses = aser.ASER_RELATIONS[: len(values)]
    conn.execute(f"INSERT INTO Relations (_id, hid, tid, {', '.join(senses)}) VALUES ('r-x', ?, ?{', ?' * len(values)})",
                 (hid, tid, *values))
    conn.commit()
    words = dict(conn.execute("SELECT _id, words FROM Eventualities"))
    conn.close()
    with open_store(str(tmp_path / "s.lbug")) as s:
        ingest_source(s, "aser", db)
        src, dst = event_id(words[hid]), event_id(words[tid])
        got = [[e["count"] for e in s.iter_edges(t) if (e["src"], e["dst"]) == (src, dst)] for t in aser.REL_TYPES[: len(values)]]
        assert got == [[v] for v in values]


def test_a_corrupt_file_fails_on_one_line_naming_where(tmp_path):
    kg = make_aser_kg(tmp_path / "KG.db", 2_000, 6_000, seed=5)
    size = kg.stat().st_size
    with open(kg, "r+b") as fh:  # scribble over the second half of the pages
        fh.seek(size // 2)
        fh.write(b"\xa5" * (size // 4))
    with open_store(str(tmp_path / "s.lbug")) as s, pytest.raises(BadRowError, match=r"unreadable SQLite data \(.*malformed"):
        ingest_source(s, "aser", kg)


def test_eid_map_resolves_by_fingerprint_and_leaves_unknown_eids_to_sqlite(kg):
    conn = sqlite3.connect(kg)
    try:
        eids = [r[0] for r in conn.execute("SELECT _id FROM Eventualities ORDER BY rowid LIMIT 200")]
        eid_map = aser.EidMap(conn)
        eid_map.add(pa.array(eids[:100]), pa.array([f"id{i}" for i in range(100)]))
        eid_map.add(pa.array(eids[100:150]), pa.array([f"id{i}" for i in range(100, 150)]))
        eid_map.freeze()
        assert eid_map.nbytes < 45 * 150  # fingerprints and ids only, not the eid strings
        got = eid_map.resolve(pa.array([eids[120], eids[3], None, "no such eid", eids[170]])).to_pylist()
        assert got[:4] == ["id120", "id3", None, None]
        words = conn.execute("SELECT words FROM Eventualities WHERE _id = ?", (eids[170],)).fetchone()[0]
        assert got[4] == aser.event_ids(aser.normal_texts([words]))[0].as_py()  # not in the map: read from SQLite
    finally:
        conn.close()


def test_eid_map_keeps_stable_event_ids_as_bytes_and_gives_the_same_strings_back(kg):
    conn = sqlite3.connect(kg)
    try:
        rows = conn.execute("SELECT _id, words FROM Eventualities ORDER BY rowid LIMIT 150").fetchall()
        eids = [r[0] for r in rows]
        ids = [urlsafe_b64encode(blake2b(f"Event\x1fschema\x1f{w}".encode(), digest_size=9).digest()).decode()
               for _, w in rows]
        eid_map = aser.EidMap(conn)
        eid_map.add(pa.array(eids[:100]), pa.array(ids[:100]))
        eid_map.add(pa.array(eids[100:]), pa.array(ids[100:]))
        eid_map.freeze()
        # two 8-byte hashes and the id's 9 digest bytes per eventuality, and the hashes' bucket
        # directory: 4 bytes a bucket, at least 4 eventualities a bucket on average
        assert 25 * 150 < eid_map.nbytes <= 26 * 150 + 4
        got = eid_map.resolve(pa.array([eids[120], None, eids[3], "no such eid", eids[0]])).to_pylist()
        assert got == [ids[120], None, ids[3], None, ids[0]]
    finally:
        conn.close()


def test_eids_sharing_a_first_hash_resolve_through_sqlite_and_give_the_same_graph(tmp_path, kg, monkeypatch):
    with open_store(str(tmp_path / "a.lbug")) as a:
        ingest_source(a, "aser", kg, map_events=True)
        want = fingerprint(a)
    real = aser.fingerprints

    def clashing(values):  # every eid gets the same first hash: only one can be told apart by the arrays
        h1, h2 = real(values)
        return h1 & np.uint64(0), h2

    monkeypatch.setattr(aser, "fingerprints", clashing)
    asked = []
    from_sqlite = aser.EidMap._from_sqlite
    monkeypatch.setattr(aser.EidMap, "_from_sqlite", lambda self, e, o: asked.append(len(e)) or from_sqlite(self, e, o))
    with open_store(str(tmp_path / "b.lbug")) as b:
        ingest_source(b, "aser", kg, map_events=True)
        assert asked and fingerprint(b) == want


def test_only_stable_ids_are_packed_and_they_unpack_to_the_same_strings():
    ids = [event_id(f"event {i}") for i in range(300)] + ["-_AZaz09-_AZ"]
    packed = aser._id_bytes(pa.array(ids))
    assert packed.shape == (301, 9) and aser._id_strings(packed).to_pylist() == ids
    assert packed[0].tobytes() == blake2b(b"Event\x1fschema\x1fevent 0", digest_size=9).digest()
    for odd in (["abcdefghijk"], ["abcdefghijklm"], ["abcdefghijk="], ["abcdefghijk+"], ["abcdefghijk/"],
                ["0123456789abcdef0123"], [ids[0], None]):
        assert aser._id_bytes(pa.array(odd, pa.string())) is None, odd
