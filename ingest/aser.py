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
  ``--batch-size``) straight into Arrow by the ADBC SQLite driver (``eventkg.ingest.sqlite_arrow``;
  ``sqlite3`` rereads a chunk whose cells have unexpected types and reports each bad cell),
  and become Arrow tables (``pipeline.Chunk``) the store COPYs as they are: no Python
  object per cell, node or edge. Ids are computed once per eventuality (the texts
  ``normalise_text`` could change are found in Arrow; the rest are hashed as they are).
* **Three threads.** SQLite is read in one (``pipeline.Prefetch``), chunks become node and
  edge tables in another, and the store writes in the caller's; ADBC, Arrow, numpy and
  LadybugDB release the GIL, so reading the relations overlaps writing the nodes.
* **Relations** resolve ``hid``/``tid`` through an in-memory :class:`EidMap` (eid -> our id
  in sorted fingerprint arrays, ~26 bytes per eventuality) filled while the eventualities
  stream: an SQL join to ``Eventualities`` costs ~10 µs per relation (two B-tree searches on
  40-character keys), ten times the rest of the loader. One edge per non-zero sense column
  (a NULL or empty count is zero), typed ``model.upper_snake(sense)`` with property
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
* **Where the time goes**: reading and hashing eventualities overlaps the relations' reading,
  and the event nodes are written while the relations are read; the engine's rel-table COPYs
  and checkpoints are the part nothing else overlaps (profile: docs/performance.md, "Figures
  moved from docstrings (CLI and ingest)").
* **Concepts**: ``Concept`` nodes (``name`` = the concept's words from ``info``) and
  ``ABSTRACTS_TO`` (``relation`` = ``"ASER"``) from the eventuality to the concept, for
  each ``ConceptInstancePairs`` row (the score is not stored).

Source rows (for ``--limit`` and the report) are counted in the order read:
eventualities, relations, concepts, concept-instance pairs.
"""

from __future__ import annotations

import json
import sqlite3
from base64 import urlsafe_b64decode, urlsafe_b64encode
from collections.abc import Iterator, Sequence
from hashlib import blake2b
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.keyset import BucketIndex, fingerprints
from eventkg.graphstore.model import ASER_RELATIONS, ID_ALPHABET, ID_CHARS, ID_DIGEST_BYTES, normalise_text, upper_snake
from eventkg.ingest.errors import MissingFilesError, WrongSchemaError
from eventkg.ingest.nodes import edge_row, fast_event_id, node_row
from eventkg.ingest.pipeline import Chunk, Parsed, Prefetch, Reject, Row, Source
from eventkg.ingest.sqlite_arrow import (
    NUMBER,
    TEXT,
    WORDS,
    TableChunk,
    has_rowid,
    invalid_utf8,
    locked_reason,
    read_chunks,
)

SOURCE = "aser"
LEVEL = "schema"
CHUNK = 200_000  # most source rows read from SQLite per chunk (fewer when --batch-size is smaller)
CONCEPT_CHUNK = 10_000  # concept rows fetched at a time (row path: concept files are small)
LOCK_WAIT = 1.0  # seconds to wait for a writer's lock on KG.db before saying it is locked
EID_MAP_MAX = 20_000_000  # eventualities whose ids are kept in memory (~26 bytes each)
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
EVENTUALITY_COLUMNS = {"_id": TEXT, "frequency": NUMBER, "pattern": TEXT, "words": WORDS}
RELATION_COLUMNS = {"_id": TEXT, "hid": TEXT, "tid": TEXT, **dict.fromkeys(ASER_RELATIONS, NUMBER)}
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
    for folder in (p, p / "KG.db"):
        if folder.suffix == ".db" and folder.is_dir():
            raise MissingFilesError(str(folder), None, "is a folder, not an SQLite file: give the ASER KG.db file")
    dbs = sorted(f for f in p.glob("*.db") if f.is_file() and not f.stem.lower().startswith("concept"))
    if len(dbs) != 1:
        found = ", ".join(f.name for f in dbs) or "none"
        raise MissingFilesError(str(p), None, f"folder holds no single ASER KG.db (found: {found})")
    return dbs


def _connect(path: Path) -> sqlite3.Connection:
    try:
        # read in the pipeline's loader thread after the first chunk (see pipeline._Prefetch)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=LOCK_WAIT)
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise WrongSchemaError(str(path), None, locked_reason(path, LOCK_WAIT)) from None
        raise WrongSchemaError(str(path), None, _truncated(path) or f"not an SQLite database ({exc})") from None
    return conn


def _truncated(path: Path) -> str | None:
    """Why SQLite refuses a file whose header promises more pages than it has (a cut copy), or None.

    SQLite refuses such a file as a whole ("malformed") before any row is read, so the
    message can name the file and the cut, not a table row.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return None
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if not page or size >= pages * page:
        return None
    return (f"truncated SQLite file: {size:,} of the {pages * page:,} bytes its header promises (cut in page "
            f"{size // page + 1:,} of {pages:,}); no row was read and nothing written; copy the file again")


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


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def normal_texts(words: pa.Array | pa.ChunkedArray | Sequence[str]) -> pa.Array:
    """``normalise_text`` of each string, running the regexes only where they can change it."""
    arr = words if isinstance(words, pa.Array | pa.ChunkedArray) else pa.array(words, pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    slow = pc.or_(pc.invert(pc.string_is_ascii(arr)), pc.match_substring_regex(arr, _NEEDS_NORMALISING))
    rows = np.flatnonzero(slow.to_numpy(zero_copy_only=False))
    if not len(rows):
        return arr
    out = arr.to_pylist()
    for i in rows:
        out[i] = normalise_text(out[i])
    return pa.array(out, pa.string())


def event_ids(texts: pa.Array) -> pa.Array:
    """``model.event_id(text, LEVEL)`` of already normalised texts (no second normalisation)."""
    keyed = pc.binary_join_element_wise(f"Event\x1f{LEVEL}\x1f", texts, "").cast(pa.binary())
    digests = b"".join([blake2b(b, digest_size=ID_DIGEST_BYTES).digest() for b in keyed.to_pylist()])
    return _id_strings(np.frombuffer(digests, np.uint8).reshape(len(keyed), ID_DIGEST_BYTES))


_IN_ALPHABET = np.zeros(256, bool)
_IN_ALPHABET[np.frombuffer(ID_ALPHABET, np.uint8)] = True


def _id_bytes(ids: pa.Array) -> np.ndarray | None:
    """(n, ``ID_DIGEST_BYTES``) digests of ids that are all stable ids (``ID_CHARS`` URL-safe
    base64 characters), else None. A digest is 3 bytes times 3, so the ids' characters laid end
    to end are the base64 of the digests laid end to end: one decode does them all."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    n = len(ids)
    if ids.null_count or not pa.types.is_string(ids.type):
        return None
    if n == 0:
        return np.empty((0, ID_DIGEST_BYTES), np.uint8)
    offsets = np.frombuffer(ids.buffers()[1], np.int32, n + 1, ids.offset * 4)
    if offsets[-1] - offsets[0] != n * ID_CHARS or (np.diff(offsets) != ID_CHARS).any():
        return None
    chars = np.frombuffer(ids.buffers()[2], np.uint8, n * ID_CHARS, offsets[0])
    if not _IN_ALPHABET[chars].all():
        return None
    return np.frombuffer(urlsafe_b64decode(chars.tobytes()), np.uint8).reshape(n, ID_DIGEST_BYTES)


def _id_strings(packed: np.ndarray) -> pa.Array:
    """Stable ids from their digests (:func:`_id_bytes` reversed, one encode for them all)."""
    n = len(packed)
    chars = urlsafe_b64encode(np.ascontiguousarray(packed, np.uint8).tobytes())
    offsets = np.arange(0, (n + 1) * ID_CHARS, ID_CHARS, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(chars)])


class EidMap:
    """ASER eid -> our event id, for every valid eventuality read.

    Kept as the eids' 128-bit fingerprints (two sorted-together uint64 arrays) beside the ids,
    no Python object per entry; a lookup is a vectorised binary search, so a relation chunk
    resolves in milliseconds where an SQL join costs ~10 µs per relation. The eid strings
    themselves are not kept (they were 44 of the 76 bytes per entry: 34 MB at 1M eventualities,
    the map's share of the peak RSS): two eids match only if both hashes do (wrong on a 128-bit
    collision, ~n²/2¹²⁹, the store's key sets' stance). Our ids (``event_ids``: 12 base64
    characters) are kept as their 9 digest bytes and written out as text again when resolved:
    25 bytes per entry instead of 32 as strings (the map is alive at the ingest's peak, while the
    event nodes are written, and grows with the file). Ids of another form (none from this
    loader) are kept as strings. Past ``EID_MAP_MAX`` eventualities, or when two eids share a
    first hash (~n²/2⁶⁵), ids are looked up in SQLite instead: slower, never wrong.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | pa.Array]] = []
        self.size = 0
        self.full = False
        self.from_sqlite = 0  # ends resolved by reading Eventualities (not among the rows sent as nodes)
        self._packed: bool | None = None  # ids kept as digests (stable ids) or as strings; set by the first add
        self._h1 = self._h2 = np.empty(0, np.uint64)
        self._index = BucketIndex(self._h1)  # where a first hash is in _h1 (rebuilt by freeze)
        self._oids: np.ndarray | pa.Array = pa.array([], pa.string())

    def add(self, eids: pa.Array, oids: pa.Array) -> None:
        keep = pc.is_valid(eids)
        eids, oids = eids.filter(keep), oids.filter(keep)
        if self.full or self.size + len(eids) > EID_MAP_MAX:  # once full, later eids come from SQLite
            self.full = True
            return
        packed = _id_bytes(oids)
        if self._packed is None:
            self._packed = packed is not None
        if self._packed and packed is None:  # ids of another form after stable ids: later eids from SQLite
            self.full = True
            return
        self._parts.append((*fingerprints(eids), packed if self._packed else oids))
        self.size += len(eids)

    def freeze(self) -> None:
        if not self._parts:
            return
        parts, self._parts = self._parts, []
        h1s, h2s, ids = (list(column) for column in zip(*parts, strict=True))
        parts = None
        h1 = np.concatenate(h1s)
        h1s.clear()
        order = np.argsort(h1, kind="stable")
        self._h1 = h1[order]
        del h1
        self._index = BucketIndex(self._h1)
        self._h2 = np.concatenate(h2s)[order]
        h2s.clear()
        if self._packed:
            self._oids = np.concatenate(ids)[order]
        else:
            self._oids = pa.concat_arrays(ids).take(pa.array(order))
        ids.clear()

    @property
    def nbytes(self) -> int:
        """Memory the frozen map holds (it grows with the file by design: ~25 B per eventuality)."""
        return self._h1.nbytes + self._h2.nbytes + self._oids.nbytes + self._index.nbytes

    def resolve(self, eids: pa.Array) -> pa.Array:
        """Our id for each eid (null where it is not a valid eventuality)."""
        out = pa.nulls(len(eids), pa.string())
        if len(self._h1):
            q1, q2 = fingerprints(pc.fill_null(eids, ""))
            pos = np.minimum(self._index.search(q1), len(self._h1) - 1)
            hit = (self._h1[pos] == q1) & (self._h2[pos] == q2)
            hit &= pc.is_valid(eids).to_numpy(zero_copy_only=False)
            found = _id_strings(self._oids[pos]) if self._packed else self._oids.take(pa.array(pos))
            out = pc.if_else(pa.array(hit), found, out)
        if out.null_count:
            before = out.null_count
            out = self._from_sqlite(eids, out)
            self.from_sqlite += before - out.null_count
        return out

    def _from_sqlite(self, eids: pa.Array, out: pa.Array) -> pa.Array:
        """Ids the arrays do not hold: read the eventuality, apply the same checks as when loading."""
        miss = pc.and_(pc.and_(pc.is_null(out), pc.is_valid(eids)), pc.fill_null(pc.string_is_ascii(eids), False))  # ids are hex
        wanted = pc.unique(eids.filter(miss)).to_pylist()
        found: dict[str, str] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            sql = ("SELECT _id, CAST(words AS BLOB), typeof(words), frequency FROM Eventualities "
                   f"WHERE _id IN ({','.join('?' * len(part))})")  # bytes: a words value not UTF-8 was rejected
            for eid, raw, kind, freq in self._conn.execute(sql, part):
                words = raw.decode("utf-8", "replace") if kind == "text" else None
                if words and "\ufffd" not in words and words.strip() and (freq is None or isinstance(freq, int | float)):
                    found[_text(eid)] = event_ids(normal_texts([words]))[0].as_py()
        if not found:
            return out
        values = out.to_pylist()
        for i, (eid, have) in enumerate(zip(eids.to_pylist(), values, strict=True)):
            if have is None and eid in found:
                values[i] = found[eid]
        return pa.array(values, pa.string())


def _eventualities(kg: Path, conn: sqlite3.Connection, size: int, budget: list[int | None],
                   eid_map: EidMap) -> Iterator[Chunk]:
    """Event nodes, a chunk at a time; fills ``eid_map`` for the relations."""
    file = str(kg)
    with Prefetch(read_chunks(kg, conn, "Eventualities", EVENTUALITY_COLUMNS, size, budget), depth=1) as parts:
        yield from _eventuality_chunks(file, parts, eid_map)
        empty = parts.count == 0
    if empty:
        yield Chunk(0, rejects=[Reject(file, "Eventualities", "empty table: no eventualities")])
    yield Chunk(0, nodes_done=True)  # the store writes the event nodes while the relations are read


def _eventuality_chunks(file: str, parts: Iterator[TableChunk], eid_map: EidMap) -> Iterator[Chunk]:
    for part in parts:
        t = part.table
        eids, words = t.column("_id"), t.column("words")
        blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(words), ""), True).to_numpy(zero_copy_only=False)
        problems = {int(i): "missing field 'words'" for i in np.flatnonzero(blank)}
        for i, (_, raw) in part.bad.items():
            problems.setdefault(i, f"frequency {raw!r} is not a number")
        bad_text = invalid_utf8(t, ("_id", "words", "pattern"))
        problems.update(bad_text)
        rejects = [Reject(file, _place(part, i) if i in bad_text else f"Eventualities _id={eids[i].as_py()}",
                          problems[i], {"_id": _lenient(eids, i), "words": _lenient(words, i)}) for i in sorted(problems)]
        if problems:
            keep = np.ones(t.num_rows, bool)
            keep[list(problems)] = False
            t = t.filter(pa.array(keep))
        texts = normal_texts(t.column("words"))
        ids = event_ids(texts)
        n = len(texts)
        table = pa.table({
            "id": ids,
            "sources": pa.repeat(SOURCE, n),
            "text": texts,
            "level": pa.repeat(LEVEL, n),
            "frequency": t.column("frequency"),
            "pattern": t.column("pattern"),
        })
        eid_map.add(t.column("_id").combine_chunks(), ids)
        yield Chunk(part.table.num_rows, {"Event": table}, {}, rejects)


def _place(part: TableChunk, i: int) -> str:
    """``Eventualities rowid=12`` (the row's place when its ``_id`` may not be text)."""
    rowids = part.rowids
    if rowids is None:
        return f"Eventualities row {i + 1} of its chunk"
    rowid = rowids[i].as_py() if isinstance(rowids, pa.Array | pa.ChunkedArray) else rowids[i]
    return f"Eventualities rowid={rowid}"


def _lenient(col: pa.Array | pa.ChunkedArray, i: int) -> str | None:
    """Cell ``i`` as text, bytes that are not UTF-8 replaced (for a reject's raw value)."""
    raw = col.cast(pa.binary())[i].as_py()
    return None if raw is None else raw.decode("utf-8", "replace")


def _edge_table(a: pa.Array, b: pa.Array, values: np.ndarray, valid: np.ndarray, prop: str) -> pa.Table | None:
    """Edges a -> b of the rows whose count is non-zero (and valid), ``prop`` = count."""
    rows = np.flatnonzero(valid & (values != 0) & ~np.isnan(values))
    if not len(rows):
        return None
    at = pa.array(rows)
    return pa.table({"src": a.take(at), "dst": b.take(at), "sources": pa.repeat(SOURCE, len(rows)),
                     prop: pa.array(values[rows], pa.float64())})


def _relation_reader(kg: Path, conn: sqlite3.Connection, size: int, budget: list[int | None]) -> Prefetch:
    """Relations rows read in a thread of their own, a chunk ahead (started before the
    eventualities are all read when there is no ``--limit``, so reading overlaps their hashing)."""
    # _id only names rejected rows: read it by rowid for those (~13% of the read otherwise)
    columns = {c: k for c, k in RELATION_COLUMNS.items() if c != "_id"} if has_rowid(conn, "Relations") else RELATION_COLUMNS
    return Prefetch(read_chunks(kg, conn, "Relations", columns, size, budget), depth=1)


def _relations(kg: Path, conn: sqlite3.Connection, map_events: bool, reader: Prefetch,
               eid_map: EidMap) -> Iterator[Chunk]:
    """Edge tables per sense, a chunk of Relations rows at a time, ends resolved by ``eid_map``."""
    mapping = [(s, *EVENT_MAPPING[s]) for s in ASER_RELATIONS if s in EVENT_MAPPING] if map_events else []
    with reader as parts:
        yield from _relation_chunks(str(kg), parts, eid_map, mapping, conn)


def _relation_ids(conn: sqlite3.Connection | None, part: TableChunk, rows: list[int]) -> dict[int, Any]:
    """``_id`` of some rows of a chunk: from the chunk, or looked up by rowid."""
    if "_id" in part.table.column_names or conn is None or part.rowids is None:
        col = part.table.column("_id") if "_id" in part.table.column_names else None
        return {i: col[i].as_py() if col is not None else None for i in rows}
    rowids = {int(part.rowids[i].as_py() if isinstance(part.rowids, pa.Array) else part.rowids[i]): i for i in rows}
    out: dict[int, Any] = dict.fromkeys(rows)
    keys = list(rowids)
    for start in range(0, len(keys), 500):
        some = keys[start : start + 500]
        for rowid, rid in conn.execute(f"SELECT rowid, _id FROM Relations WHERE rowid IN ({','.join('?' * len(some))})", some):
            out[rowids[rowid]] = _text(rid) if isinstance(rid, bytes) else rid
    return out


def _relation_chunks(file: str, parts: Iterator[TableChunk], eid_map: EidMap,
                     mapping: list[tuple[str, str, bool]], conn: sqlite3.Connection | None = None) -> Iterator[Chunk]:
    for part in parts:
        t = part.table
        n = t.num_rows
        hids, tids = (t.column(c).combine_chunks() for c in ("hid", "tid"))
        read_before = eid_map.from_sqlite
        src, dst = eid_map.resolve(hids), eid_map.resolve(tids)
        ends_known = eid_map.from_sqlite == read_before  # every end one of the event rows sent before
        problems: dict[int, str] = {}
        for end, ids, eids in (("hid", src, hids), ("tid", dst, tids)):
            if ids.null_count:
                for i in np.flatnonzero(pc.is_null(ids).to_numpy(zero_copy_only=False)):
                    problems.setdefault(int(i), f"{end} {_lenient(eids, i)!r} is not a (valid) row of Eventualities")
        for i, (_, raw) in part.bad.items():
            problems.setdefault(i, f"count {_text(raw)!r} is not a number")
        valid = np.ones(n, bool)
        rejects = []
        rids = _relation_ids(conn, part, sorted(problems)) if problems else {}
        for i in sorted(problems):
            valid[i] = False
            raw = {"_id": rids[i], "hid": _lenient(hids, i), "tid": _lenient(tids, i)}
            rejects.append(Reject(file, f"Relations _id={raw['_id']}", problems[i], raw))
        counts = {s: t.column(s).to_numpy() for s in ASER_RELATIONS}  # nulls read as NaN: no edge
        parts = [(rtype, src, dst, counts[s], "count") for s, rtype in zip(ASER_RELATIONS, REL_TYPES, strict=True)]
        parts += [(rtype, *((src, dst) if forward else (dst, src)), counts[s], "weight") for s, rtype, forward in mapping]
        edges: dict[str, list[pa.Table]] = {}
        for rtype, a, b, values, prop in parts:
            table = _edge_table(a, b, values, valid, prop)
            if table is not None:
                edges.setdefault(rtype, []).append(table)
        tables = {t: ts[0] if len(ts) == 1 else pa.concat_tables(ts) for t, ts in edges.items()}
        yield Chunk(n, {}, tables, rejects, ends_known=ends_known)


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
    reader: Prefetch | None = None
    rel_conn: sqlite3.Connection | None = None
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
        if limit is None:  # no budget to share in order: start reading the relations now
            rel_conn = _connect(kg)  # the reader's own (sqlite3 fallback) connection
            reader = _relation_reader(kg, rel_conn, chunk_size, budget)
        yield from _eventualities(kg, conn, chunk_size, budget, eid_map)
        eid_map.freeze()
        if reader is None:
            reader = _relation_reader(kg, conn, chunk_size, budget)
        yield from _relations(kg, conn, map_events, reader, eid_map)
        if concepts is not None:
            yield from _concepts(conn, str(concepts))
    finally:
        if reader is not None:
            reader.close()
        if rel_conn is not None:
            rel_conn.close()
        conn.close()


def parse(source: Source, map_events: bool = False, concepts: str | Path | None = None) -> Parsed:
    """An ASER ``KG.db`` (file or its folder) as chunks, read in a thread ahead of the writes.

    SQLite rows are read ``min(batch_size, CHUNK)`` at a time and written as Arrow tables; the
    database is opened and checked here, so a wrong file fails before anything is written. Its
    primary keys are unique by construction: ``source.keys`` is not used.
    """
    files = find_files(source.path)
    cpath = Path(concepts) if concepts else None
    size = max(1, min(CHUNK, source.batch_size))
    items = iter_rows(files[0], map_events=map_events, concepts=cpath, limit=source.limit, chunk_size=size)
    first = next(items, None) if source.limit != 0 else None
    return Parsed(files + ([cpath] if cpath else []), _prepend(first, items), prefetch=True)




def _prepend(first: Row | Reject | Chunk | None, rest: Iterator[Row | Reject | Chunk]) -> Iterator[Row | Reject | Chunk]:
    if first is not None:
        yield first
    yield from rest
