"""Fast generator of big ASER-schema ``KG.db`` files, for benchmarks and crash tests.

Same tables and column types as the ASER toolkit writes (sha1 ids, REAL counts, BLOB info),
with small ``info`` blobs. Deterministic for a seed. Eventuality ``i`` has the words
``w<i> verb<i % 997> object<i % 101>``, so every eventuality is a distinct event node.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

from eventkg.graphstore.model import ASER_RELATIONS

PATTERNS = ("s-v-o", "s-v", "s-be-a", "s-v-o-o", "spass-v")


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def make_aser_kg(path: str | Path, eventualities: int, relations: int, *, seed: int = 11, chunk: int = 100_000) -> Path:
    """Write a KG.db with ``eventualities`` rows and ``relations`` distinct (hid, tid) rows."""
    path = Path(path)
    path.unlink(missing_ok=True)
    rng = random.Random(seed)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute(
        "CREATE TABLE Eventualities (_id PRIMARY KEY,frequency REAL,pattern TEXT,verbs TEXT,"
        "skeleton_words TEXT,words TEXT,info BLOB)"
    )
    conn.execute("CREATE TABLE Relations (_id PRIMARY KEY,hid TEXT,tid TEXT," + ",".join(f"{s} REAL" for s in ASER_RELATIONS) + ")")
    eids: list[str] = []
    for start in range(0, eventualities, chunk):
        rows = []
        for i in range(start, min(start + chunk, eventualities)):
            words = f"w{i} verb{i % 997} object{i % 101}"
            eid = _sha1(words)
            eids.append(eid)
            info = b'{"words": ["w", "v", "o"], "pos_tags": ["NN", "VB", "NN"], "_dependencies": [[1, "nsubj", 0], [1, "dobj", 2]]}'
            rows.append((eid, float(1 + i % 7), PATTERNS[i % len(PATTERNS)], f"verb{i % 997}", words, words, info))
        conn.executemany("INSERT INTO Eventualities VALUES (?,?,?,?,?,?,?)", rows)
    n = len(eids)
    seen: set[int] = set()
    made = 0
    zeros = [0.0] * len(ASER_RELATIONS)
    while made < relations:
        rows = []
        while len(rows) < chunk and made + len(rows) < relations:
            h, t = rng.randrange(n), rng.randrange(n)
            if h * n + t in seen:
                continue
            seen.add(h * n + t)
            counts = list(zeros)
            counts[rng.randrange(len(counts))] = float(rng.randint(1, 5))
            if rng.random() < 0.3:
                counts[rng.randrange(len(counts))] = 0.5
            hid, tid = eids[h], eids[t]
            rows.append((_sha1(f"{hid}${tid}"), hid, tid, *counts))
        conn.executemany(f"INSERT INTO Relations VALUES ({','.join('?' * (3 + len(ASER_RELATIONS)))})", rows)
        made += len(rows)
    conn.commit()
    conn.close()
    return path
