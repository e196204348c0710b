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
* **Columnar.** Both tables are read in chunks (``CHUNK`` rows, fewer with a small
  ``--batch-size``) and become Arrow tables (``pipeline.Chunk``) the store COPYs as they
  are: no Python dict per node or edge. Ids are computed once per eventuality (the texts
  ``normalise_text`` could change are found in Arrow; the rest are hashed as they are).
* **Relations** resolve ``hid``/``tid`` through an in-memory :class:`EidMap` (eid -> our id
  in sorted fingerprint arrays, ~90 bytes per eventuality) filled while the eventualities
  stream: an SQL join to ``Eventualities`` costs ~10 µs per relation (two B-tree searches on
  40-character keys), ten times the rest of the loader. The sense counts come from SQLite
  as one short text per relation (``"4:2.0 9:0.5 "``, only non-zero cells), parsed in Arrow.
  One edge per non-zero sense column, typed ``model.upper_snake(sense)`` with property
  ``count``. A relation whose ``hid``/``tid`` is not a (valid) eventuality, or with a count
  that is not a number, is rejected with its ``_id`` and the reason.
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
from collections.abc import Iterator, Sequence
from hashlib import blake2b
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphstore.keyset import fingerprints
from graphstore.model import ASER_RELATIONS, normalise_text, upper_snake
from ingest.errors import MissingFilesError, WrongSchemaError
from ingest.nodes import edge_row, fast_event_id, node_row
from ingest.pipeline import Chunk, IngestReport, Progress, Reject, Row, run

SOURCE = "aser"
LEVEL = "schema"
BATCH_SIZE = 200_000  # table rows per store write: ~15% faster than the pipeline's 50,000 on LadybugDB
CHUNK = 500_000  # most source rows read from SQLite per chunk (fewer when --batch-size is smaller)
CONCEPT_CHUNK = 10_000  # concept rows fetched at a time (row path: concept files are small)
EID_MAP_MAX = 20_000_000  # eventualities whose ids are kept in memory (~90 bytes each)
# texts that normalise_text could change (the rest are already normal; checked in Arrow)
_NEEDS_NORMALISING = r"[A-Z_\t\n\r\x0b\x0c\x1c-\x1f]|  |^ | $|person"
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
        while chunk := cur.fetchmany(CONCEPT_CHUNK):
            yield from chunk
    finally:
        cur.close()


def _chunks(conn: sqlite3.Connection, sql: str, size: int, budget: list[int | None]) -> Iterator[list[tuple]]:
    """Lists of at most ``size`` rows, never more in all than ``budget[0]`` (the --limit left)."""
    cur = conn.execute(sql)
    try:
        while True:
            n = size if budget[0] is None else min(size, budget[0])
            rows = cur.fetchmany(n) if n > 0 else []
            if not rows:
                return
            if budget[0] is not None:
                budget[0] -= len(rows)
            yield rows
    finally:
        cur.close()


def _strings(values: Sequence[Any]) -> pa.Array:
    """Text values as an Arrow string array (ids stored as numbers become their text)."""
    try:
        return pa.array(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pa.array([v if v is None or isinstance(v, str) else _text(v) for v in values], pa.string())


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def normal_texts(words: Sequence[str]) -> list[str]:
    """``normalise_text`` of each string, running the regexes only where they can change it."""
    arr = pa.array(words, pa.string())
    slow = pc.or_(pc.invert(pc.string_is_ascii(arr)), pc.match_substring_regex(arr, _NEEDS_NORMALISING))
    out = list(words)
    for i in np.flatnonzero(slow.to_numpy(zero_copy_only=False)):
        out[i] = normalise_text(words[i])
    return out


def event_ids(texts: Sequence[str]) -> list[str]:
    """``model.event_id(text, LEVEL)`` of already normalised texts (no second normalisation)."""
    prefix = f"Event\x1f{LEVEL}\x1f"
    return [blake2b((prefix + t).encode("utf-8"), digest_size=10).hexdigest() for t in texts]


class EidMap:
    """ASER eid -> our event id, for every valid eventuality read.

    Kept as sorted 64-bit fingerprints beside the eid and id strings (~90 bytes per
    eventuality, no Python object per entry); a lookup is a vectorised binary search plus a
    string comparison, so a relation chunk resolves in milliseconds where an SQL join
    costs ~10 µs per relation. Past ``EID_MAP_MAX`` eventualities (or on a rare
    fingerprint clash) ids are looked up in SQLite instead: slower, never wrong.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._parts: list[tuple[np.ndarray, pa.Array, pa.Array]] = []
        self.size = 0
        self.full = False
        self._fp = np.empty(0, np.uint64)
        self._eids = self._oids = pa.array([], pa.string())

    def add(self, eids: pa.Array, oids: pa.Array) -> None:
        keep = pc.is_valid(eids)
        eids, oids = eids.filter(keep), oids.filter(keep)
        if self.size + len(eids) > EID_MAP_MAX:
            self.full = True
            return
        self._parts.append((fingerprints(eids)[0], eids, oids))
        self.size += len(eids)

    def freeze(self) -> None:
        if not self._parts:
            return
        fp = np.concatenate([p[0] for p in self._parts])
        order = np.argsort(fp, kind="stable")
        self._fp = fp[order]
        take = pa.array(order)
        self._eids = pa.concat_arrays([p[1] for p in self._parts]).take(take)
        self._oids = pa.concat_arrays([p[2] for p in self._parts]).take(take)
        self._parts = []

    def resolve(self, eids: pa.Array) -> pa.Array:
        """Our id for each eid (null where it is not a valid eventuality)."""
        out = pa.nulls(len(eids), pa.string())
        if len(self._fp):
            filled = pc.fill_null(eids, "")
            pos = np.minimum(np.searchsorted(self._fp, fingerprints(filled)[0]), len(self._fp) - 1)
            at = pa.array(pos)
            hit = pc.and_(pc.equal(self._eids.take(at), filled), pc.is_valid(eids))
            out = pc.if_else(hit, self._oids.take(at), out)
        if out.null_count:
            out = self._from_sqlite(eids, out)
        return out

    def _from_sqlite(self, eids: pa.Array, out: pa.Array) -> pa.Array:
        """Ids the arrays do not hold: read the eventuality, apply the same checks as when loading."""
        miss = pc.and_(pc.is_null(out), pc.is_valid(eids))
        wanted = pc.unique(eids.filter(miss)).to_pylist()
        found: dict[str, str] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            sql = f"SELECT _id, words, frequency FROM Eventualities WHERE _id IN ({','.join('?' * len(part))})"
            for eid, words, freq in self._conn.execute(sql, part):
                if isinstance(words, str) and words.strip() and (freq is None or isinstance(freq, int | float)):
                    found[_text(eid)] = event_ids(normal_texts([words]))[0]
        if not found:
            return out
        values = out.to_pylist()
        for i, (eid, have) in enumerate(zip(eids.to_pylist(), values, strict=True)):
            if have is None and eid in found:
                values[i] = found[eid]
        return pa.array(values, pa.string())


def _eventualities(conn: sqlite3.Connection, file: str, size: int, budget: list[int | None],
                   eid_map: EidMap) -> Iterator[Chunk]:
    """Event nodes, a chunk at a time; fills ``eid_map`` for the relations."""
    empty = True
    sql = "SELECT _id, frequency, pattern, words FROM Eventualities"
    for rows in _chunks(conn, sql, size, budget):
        empty = False
        eids, freqs, patterns, words = (list(c) for c in zip(*rows, strict=True))
        problems = {i: ("missing field 'words'", {"_id": eids[i], "words": words[i]})
                    for i, w in enumerate(words) if type(w) is not str or not w.strip()}
        try:
            freq = pa.array(freqs, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            for i, f in enumerate(freqs):
                if f is not None and not isinstance(f, int | float):
                    problems.setdefault(i, (f"frequency {f!r} is not a number", {"_id": eids[i]}))
            freq = pa.array([f if isinstance(f, int | float) else None for f in freqs], pa.float64())
        bad = set(problems)
        rejects = [Reject(file, f"Eventualities _id={eids[i]}", *problems[i]) for i in sorted(problems)]
        keep = None
        if bad:
            keep = pa.array([i not in bad for i in range(len(rows))])
            words = [w for i, w in enumerate(words) if i not in bad]
        texts = normal_texts(words)
        ids = pa.array(event_ids(texts), pa.string())
        n = len(texts)
        table = pa.table({
            "id": ids,
            "sources": pa.repeat(SOURCE, n),
            "text": pa.array(texts, pa.string()),
            "level": pa.repeat(LEVEL, n),
            "frequency": _kept(freq, keep),
            "pattern": _kept(_strings(patterns), keep),
        })
        eid_map.add(_kept(_strings(eids), keep), ids)
        yield Chunk(len(rows), {"Event": table}, {}, rejects)
    if empty:
        yield Chunk(0, rejects=[Reject(file, "Eventualities", "empty table: no eventualities")])


def _kept(values: pa.Array, keep: pa.Array | None) -> pa.Array:
    return values if keep is None else values.filter(keep)


def _edge_table(a: pa.Array, b: pa.Array, rows: np.ndarray, values: np.ndarray, valid: np.ndarray,
                prop: str) -> pa.Table | None:
    """Edges a -> b of the given rows (kept where valid and the count is non-zero), ``prop`` = count."""
    keep = valid[rows] & (values != 0) & ~np.isnan(values)
    rows, values = rows[keep], values[keep]
    if not len(rows):
        return None
    at = pa.array(rows)
    return pa.table({"src": a.take(at), "dst": b.take(at), "sources": pa.repeat(SOURCE, len(rows)),
                     prop: pa.array(values, pa.float64())})


# Each relation's non-zero sense columns as one short text, "<sense index>:<count> ...", built
# by SQLite: four Python values per row instead of eighteen (the fetch is the loader's cost).
# REALs are printed with 17 significant digits ('%!.17g'; plain || keeps only 15), which
# reads back as the same double; other values (text) go as they are and are checked here.
_SENSES_SQL = " || ".join(
    f"(CASE WHEN {s} != 0 THEN '{i}:' || (CASE WHEN typeof({s}) = 'real' THEN printf('%!.17g', {s}) ELSE {s} END)"
    " || ' ' ELSE '' END)"
    for i, s in enumerate(ASER_RELATIONS)
)


def _senses(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, str]]]:
    """Parse the sense texts: (row, sense index, count) per non-zero cell, and (row, text) of non-numbers."""
    tokens = pc.split_pattern(pa.array(texts, pa.string()), " ")
    parents = pc.list_parent_indices(tokens).to_numpy()
    flat = pc.list_flatten(tokens)
    nonempty = pc.not_equal(flat, "")
    parents, flat = parents[nonempty.to_numpy(zero_copy_only=False)], flat.filter(nonempty)
    parts = pc.split_pattern(flat, ":", max_splits=1)
    whole = pc.equal(pc.list_value_length(parts), 2).to_numpy(zero_copy_only=False)
    bad = [(int(r), t) for r, t in zip(parents[~whole], flat.filter(pa.array(~whole)).to_pylist(), strict=True)]
    parts, parents = parts.filter(pa.array(whole)), parents[whole]
    raw = pc.list_element(parts, 1)
    given = pc.not_equal(raw, "")  # an empty text counts as zero, as a falsy value always did
    rows, raw = parents[given.to_numpy(zero_copy_only=False)], raw.filter(given)
    sense = pc.cast(pc.list_element(parts.filter(given), 0), pa.int64()).to_numpy()
    try:
        values = pc.cast(raw, pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        text = raw.to_pylist()
        values = np.full(len(text), np.nan)
        for k, v in enumerate(text):
            try:
                values[k] = float(v)
            except ValueError:
                bad.append((int(rows[k]), v))
    return rows, sense, values, bad


def _relations(conn: sqlite3.Connection, file: str, map_events: bool, size: int, budget: list[int | None],
               eid_map: EidMap) -> Iterator[Chunk]:
    """Edge tables per sense, a chunk of Relations rows at a time, ends resolved by ``eid_map``."""
    sql = f"SELECT _id, hid, tid, {_SENSES_SQL} FROM Relations"
    mapping = [(i, *EVENT_MAPPING[s]) for i, s in enumerate(ASER_RELATIONS) if s in EVENT_MAPPING] if map_events else []
    for chunk in _chunks(conn, sql, size, budget):
        rids, hid_values, tid_values, texts = zip(*chunk, strict=True)
        src, dst = eid_map.resolve(_strings(hid_values)), eid_map.resolve(_strings(tid_values))
        valid = np.ones(len(chunk), bool)
        problems: dict[int, str] = {}
        for end, ids, eids in (("hid", src, hid_values), ("tid", dst, tid_values)):
            if ids.null_count:
                for i in np.flatnonzero(pc.is_null(ids).to_numpy(zero_copy_only=False)):
                    problems.setdefault(int(i), f"{end} {eids[i]!r} is not a (valid) row of Eventualities")
        rows, sense, values, bad = _senses(texts)
        for i, text in bad:
            problems.setdefault(i, f"count {text!r} is not a number")
        rejects = []
        for i in sorted(problems):
            valid[i] = False
            raw = {"_id": rids[i], "hid": hid_values[i], "tid": tid_values[i]}
            rejects.append(Reject(file, f"Relations _id={rids[i]}", problems[i], raw))
        edges: dict[str, list[pa.Table]] = {}
        by_sense = [np.flatnonzero(sense == i) for i in range(len(ASER_RELATIONS))]
        parts = [(rtype, src, dst, by_sense[i], "count") for i, rtype in enumerate(REL_TYPES)]
        parts += [(rtype, *((src, dst) if forward else (dst, src)), by_sense[i], "weight") for i, rtype, forward in mapping]
        for rtype, a, b, cells, prop in parts:
            table = _edge_table(a, b, rows[cells], values[cells], valid, prop)
            if table is not None:
                edges.setdefault(rtype, []).append(table)
        tables = {t: ts[0] if len(ts) == 1 else pa.concat_tables(ts) for t, ts in edges.items()}
        yield Chunk(len(chunk), {}, tables, rejects)


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


def iter_rows(kg: Path, *, map_events: bool = False, concepts: Path | None = None, limit: int | None = None,
              chunk_size: int = CHUNK) -> Iterator[Row | Reject | Chunk]:
    """Chunks of one KG.db (and rows of its concept db): checks the tables first, then streams.

    ``limit`` caps the source rows read (eventualities, then relations, then concepts).
    """
    conn = _connect(kg)
    try:
        check_tables(conn, kg, KG_TABLES)
        if concepts is not None:
            if not concepts.is_file():
                raise MissingFilesError(str(concepts), None, "no such ASER concept database")
            _connect(concepts).close()
            conn.execute("ATTACH DATABASE ? AS c", (f"file:{concepts}?mode=ro",))
            check_tables(conn, concepts, CONCEPT_TABLES, schema="c")
        budget: list[int | None] = [limit]
        eid_map = EidMap(conn)
        yield from _eventualities(conn, str(kg), chunk_size, budget, eid_map)
        eid_map.freeze()
        yield from _relations(conn, str(kg), map_events, chunk_size, budget, eid_map)
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
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    map_events: bool = False,
    concepts: str | Path | None = None,
) -> IngestReport:
    """Ingest an ASER ``KG.db`` (file or its folder) into ``store``, streaming it.

    SQLite rows are read ``min(batch_size, CHUNK)`` at a time and written as Arrow tables.    """
    files = find_files(path)
    kg = files[0]
    cpath = Path(concepts) if concepts else None
    size = max(1, min(CHUNK, batch_size))
    options = {"map_events": map_events, "concepts": cpath, "limit": limit, "chunk_size": size}
    items = iter_rows(kg, **options)
    # Open and check the database now, so a wrong file fails before anything else happens.
    first = next(items, None) if limit != 0 else None
    return run(store, SOURCE, files + ([cpath] if cpath else []), _prepend(first, items), on_error=on_error,
               rejects=rejects, limit=limit, batch_size=batch_size, progress=progress)


def _prepend(first: Row | Reject | Chunk | None, rest: Iterator[Row | Reject | Chunk]) -> Iterator[Row | Reject | Chunk]:
    if first is not None:
        yield first
    yield from rest
