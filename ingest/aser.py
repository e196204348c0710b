"""ASER: an eventuality KG in the toolkit's SQLite layout (``KG.db``), streamed, never loaded whole.

Tables read (``formats.md``): ``Eventualities(_id, frequency, pattern, verbs,
skeleton_words, words, info)`` and ``Relations(_id, hid, tid, <15 REAL sense columns>)``;
optionally a concept database (``--concepts concept.db``) with ``Concepts(_id, pattern,
info)`` and ``ConceptInstancePairs(_id, cid, eid, pattern, score)``.

Choices
-------
* **Level ``schema``.** An eventuality (``i be hungry``, ``personx drink milk``) is a
  lemmatised, de-contextualised event pattern, not a mention in a story, so it sits with the
  event types. AbsPyramid heads use the same level, so a head with the same words as an
  eventuality is the same node (the design's requirement). ``text`` = ``words`` normalised;
  ``frequency`` and ``pattern`` are kept. Two eids with the same words are one node (the
  last row read sets its frequency and the counts of its edges).
* **Relations** stream as a SQL ``JOIN`` of ``Relations`` to a temporary keyed table
  ``eid -> our id`` filled while the eventualities stream (a private SQLite temp database,
  deleted when the connection closes, with a bounded page cache), so each id is hashed once
  and memory stays flat however big the file. One edge per non-zero sense column, typed
  ``model.upper_snake(sense)`` with property ``count``. A relation whose ``hid``/``tid`` is
  not an eventuality is rejected with a reason.
* **``map_events``** (``--map-events``) adds event-relation edges (``weight`` = the count):

  ===============  ==========================  =======================================
  ASER sense        stored                      why
  ===============  ==========================  =======================================
  Result(a, b)      a ``CAUSES`` b              "a, so b"
  Reason(a, b)      b ``CAUSES`` a              "a because b"
  Precedence(a, b)  a ``BEFORE`` b              "a before b"
  Succession(a, b)  b ``BEFORE`` a              "a after b"
  Synchronous       not mapped                  "at the same time" is neither order
  Condition(a, b)   not mapped                  "a if b" is a condition, not a cause
  ===============  ==========================  =======================================
* **Concepts**: ``Concept`` nodes (``name`` = the concept's words from ``info``) and
  ``ABSTRACTS_TO`` (``relation`` = ``"ASER"``) from the eventuality to the concept, for
  each ``ConceptInstancePairs`` row (the score is not stored).

Source rows (for ``--limit`` and the report) are counted in the order read:
eventualities, relations, concepts, concept-instance pairs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphstore.model import ASER_RELATIONS, upper_snake
from ingest.errors import MissingFilesError, WrongSchemaError
from ingest.nodes import edge_row, event_row, fast_event_id, node_row
from ingest.pipeline import DEFAULT_BATCH_SIZE, IngestReport, Progress, Reject, Row, run

SOURCE = "aser"
LEVEL = "schema"
CHUNK = 10_000  # rows fetched from SQLite at a time
MAP_CACHE_KIB = 131_072  # page cache of the temporary eid -> id table (bounded; the rest stays on disk)
REL_TYPES = tuple(upper_snake(s) for s in ASER_RELATIONS)
# sense -> (stored type, forward?) for --map-events; see the table in the module docstring.
EVENT_MAPPING: dict[str, tuple[str, bool]] = {
    "Result": ("CAUSES", True),
    "Reason": ("CAUSES", False),
    "Precedence": ("BEFORE", True),
    "Succession": ("BEFORE", False),
}
KG_TABLES = {
    "Eventualities": ("_id", "frequency", "pattern", "words"),
    "Relations": ("_id", "hid", "tid", *ASER_RELATIONS),
}
CONCEPT_TABLES = {
    "Concepts": ("_id", "pattern", "info"),
    "ConceptInstancePairs": ("_id", "cid", "eid", "pattern", "score"),
}


def find_files(path: str | Path) -> list[Path]:
    """``path`` if a file, else the folder's ``KG.db`` (or its one other non-concept ``.db``)."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.exists():
        raise MissingFilesError(str(p), None, "no such file or folder for ASER")
    if (p / "KG.db").is_file():
        return [p / "KG.db"]
    dbs = sorted(f for f in p.glob("*.db") if not f.stem.lower().startswith("concept"))
    if len(dbs) != 1:
        found = ", ".join(f.name for f in dbs) or "none"
        raise MissingFilesError(str(p), None, f"folder holds no single ASER KG.db (found: {found})")
    return dbs


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise WrongSchemaError(str(path), None, f"not an SQLite database ({exc})") from None
    return conn


def check_tables(conn: sqlite3.Connection, path: Path, tables: dict[str, tuple[str, ...]], schema: str = "main") -> None:
    """Raise a one-line :class:`WrongSchemaError` naming the file unless every table/column is there."""
    for table, cols in tables.items():
        have = {r[1] for r in conn.execute(f"PRAGMA {schema}.table_info({table})")}
        if not have:
            found = sorted(r[0] for r in conn.execute(f"SELECT name FROM {schema}.sqlite_master WHERE type='table'"))
            raise WrongSchemaError(
                str(path), None,
                f"no table {table} (has: {', '.join(found) or 'no tables'}); expected ASER tables {', '.join(tables)}",
            )
        missing = [c for c in cols if c not in have]
        if missing:
            raise WrongSchemaError(str(path), None, f"table {table} lacks columns {', '.join(missing)}")


def _stream(conn: sqlite3.Connection, sql: str) -> Iterator[tuple]:
    cur = conn.execute(sql)
    try:
        while chunk := cur.fetchmany(CHUNK):
            yield from chunk
    finally:
        cur.close()


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    raise ValueError(value)


def _eventualities(conn: sqlite3.Connection, file: str) -> Iterator[Row | Reject]:
    """Event nodes; also fills the temporary ``m.Map(eid -> our id)`` the relation join uses."""
    empty = True
    pending: list[tuple[str, str]] = []
    for eid, freq, pattern, words in _stream(conn, "SELECT _id, frequency, pattern, words FROM Eventualities"):
        empty = False
        if not isinstance(words, str) or not words.strip():
            yield Reject(file, f"Eventualities _id={eid}", "missing field 'words'", {"_id": eid, "words": words})
            continue
        try:
            f = _number(freq)
        except ValueError:
            yield Reject(file, f"Eventualities _id={eid}", f"frequency {freq!r} is not a number", {"_id": eid})
            continue
        row = event_row(words, LEVEL, SOURCE, frequency=f, pattern=pattern)
        pending.append((eid, row["id"]))
        if len(pending) >= CHUNK:
            conn.executemany("INSERT OR REPLACE INTO m.Map VALUES (?, ?)", pending)
            pending.clear()
        yield Row([("Event", row)], [])
    if pending:
        conn.executemany("INSERT OR REPLACE INTO m.Map VALUES (?, ?)", pending)
    if empty:
        yield Reject(file, "Eventualities", "empty table: no eventualities")


def _relations(conn: sqlite3.Connection, file: str, map_events: bool) -> Iterator[Row | Reject]:
    """One Row per relation, its ends resolved through ``m.Map`` (a keyed temp table on disk)."""
    senses = ", ".join(f"r.{s}" for s in ASER_RELATIONS)
    sql = (
        f"SELECT h.oid, t.oid, r._id, r.hid, r.tid, {senses} FROM Relations r "
        "LEFT JOIN m.Map h ON h.eid = r.hid LEFT JOIN m.Map t ON t.eid = r.tid"
    )
    mapping = [(i, *EVENT_MAPPING[s]) for i, s in enumerate(ASER_RELATIONS) if s in EVENT_MAPPING] if map_events else []
    sources = [SOURCE]
    types = REL_TYPES
    for src, dst, rid, hid, tid, *counts in _stream(conn, sql):
        if src is None or dst is None:
            end, eid = ("hid", hid) if src is None else ("tid", tid)
            yield Reject(file, f"Relations _id={rid}", f"{end} {eid!r} is not a (valid) row of Eventualities",
                         {"_id": rid, "hid": hid, "tid": tid})
            continue
        try:
            edges = [(types[i], {"src": src, "dst": dst, "sources": sources, "count": float(c)})
                     for i, c in enumerate(counts) if c]
            for i, rtype, forward in mapping:
                c = counts[i]
                if c:
                    a, b = (src, dst) if forward else (dst, src)
                    edges.append((rtype, {"src": a, "dst": b, "sources": sources, "weight": float(c)}))
        except (TypeError, ValueError):
            bad = next(c for c in counts if c and not isinstance(c, int | float))
            yield Reject(file, f"Relations _id={rid}", f"count {bad!r} is not a number", {"_id": rid})
            continue
        yield Row([], edges)


def concept_name(info: Any) -> str | None:
    """The words of an ASER concept from its ``info`` JSON (a list joined by spaces)."""
    try:
        data = json.loads(info.decode("utf-8") if isinstance(info, bytes) else info)
    except (TypeError, ValueError, UnicodeDecodeError):
        return None
    words = data.get("words") if isinstance(data, dict) else None
    if isinstance(words, list) and words and all(isinstance(w, str) for w in words):
        return " ".join(words)
    if isinstance(words, str) and words.strip():
        return words
    return None


def _concepts(conn: sqlite3.Connection, file: str) -> Iterator[Row | Reject]:
    for cid, pattern, info in _stream(conn, "SELECT _id, pattern, info FROM c.Concepts"):
        name = concept_name(info)
        if name is None:
            yield Reject(file, f"Concepts _id={cid}", "info has no concept 'words'", {"_id": cid, "pattern": pattern})
            continue
        yield Row([("Concept", node_row("Concept", name, SOURCE, name=name))], [])
    sql = (
        "SELECT p._id, p.cid, p.eid, co.info, e.words FROM c.ConceptInstancePairs p "
        "LEFT JOIN c.Concepts co ON co._id = p.cid LEFT JOIN Eventualities e ON e._id = p.eid"
    )
    for pid, cid, eid, info, words in _stream(conn, sql):
        where = f"ConceptInstancePairs _id={pid}"
        raw = {"_id": pid, "cid": cid, "eid": eid}
        if info is None:
            yield Reject(file, where, f"cid {cid!r} is not in Concepts", raw)
            continue
        if words is None:
            yield Reject(file, where, f"eid {eid!r} is not in the KG's Eventualities", raw)
            continue
        name = concept_name(info)
        if name is None:
            yield Reject(file, where, "concept info has no 'words'", raw)
            continue
        concept = node_row("Concept", name, SOURCE, name=name)
        yield Row(
            [("Concept", concept)],
            [("ABSTRACTS_TO", edge_row(fast_event_id(words, LEVEL), concept["id"], SOURCE, relation="ASER"))],
        )


def iter_rows(kg: Path, *, map_events: bool = False, concepts: Path | None = None) -> Iterator[Row | Reject]:
    """Rows of one KG.db (and its concept db): checks the tables first, then streams."""
    conn = _connect(kg)
    try:
        check_tables(conn, kg, KG_TABLES)
        if concepts is not None:
            if not concepts.is_file():
                raise MissingFilesError(str(concepts), None, "no such ASER concept database")
            _connect(concepts).close()
            conn.execute("ATTACH DATABASE ? AS c", (f"file:{concepts}?mode=ro",))
            check_tables(conn, concepts, CONCEPT_TABLES, schema="c")
        conn.execute("ATTACH DATABASE '' AS m")  # private temp db: SQLite deletes it on close
        conn.execute(f"PRAGMA m.cache_size = -{MAP_CACHE_KIB}")
        conn.execute("CREATE TABLE m.Map (eid TEXT PRIMARY KEY, oid TEXT NOT NULL) WITHOUT ROWID")
        yield from _eventualities(conn, str(kg))
        yield from _relations(conn, str(kg), map_events)
        if concepts is not None:
            yield from _concepts(conn, str(concepts))
    finally:
        conn.close()


def load(
    store,
    path: str | Path,
    *,
    on_error: str = "fail",
    rejects: str | Path | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    map_events: bool = False,
    concepts: str | Path | None = None,
) -> IngestReport:
    """Ingest an ASER ``KG.db`` (file or its folder) into ``store``, streaming it."""
    files = find_files(path)
    kg = files[0]
    cpath = Path(concepts) if concepts else None
    items = iter_rows(kg, map_events=map_events, concepts=cpath)
    # Open and check the database now, so a wrong file fails before anything else happens.
    first = next(items, None)
    return run(store, SOURCE, files + ([cpath] if cpath else []), _prepend(first, items), on_error=on_error,
               rejects=rejects, limit=limit, batch_size=batch_size, progress=progress)


def _prepend(first: Row | Reject | None, rest: Iterator[Row | Reject]) -> Iterator[Row | Reject]:
    if first is not None:
        yield first
    yield from rest
