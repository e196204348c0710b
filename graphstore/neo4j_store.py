"""The server backend: Neo4j 5 through the official ``neo4j`` driver (Bolt).

Why it looks the way it does:

* Transactions are bounded (``eventkg.graphstore.neo4j_batches``): Neo4j holds a transaction's
  state on its heap and refuses one past ``dbms.memory.transaction.total.max`` (70% of a
  512 MB default heap). **A batch of at most ``TX_ROWS`` rows (20,000) and ``TX_BYTES``
  estimated bytes (16 MB) is one transaction: it lands whole or not at all.** A bigger
  batch (a loader's 200,000-row batch) is written in several such transactions, nodes
  before edges; if one fails, the ones before it stay committed and the one-line error
  says how many rows landed. Every write is an upsert, so writing the batch again (or
  re-running the ingest) completes it and changes nothing that landed. A transaction that
  still runs out of server memory is retried in halves, down to one row; a single row too
  big for the server is a one-line error naming it.
* Transient errors (a leader switch, a dropped connection, a deadlock) are retried for up
  to ``RETRY_SECONDS``. A retried transaction looks every row up before writing, so a
  commit whose outcome was lost is never applied twice.
* Statements are ``UNWIND $rows`` of ``CHUNK`` rows sent as positional lists; the next
  chunk is built while the server runs the previous one. Endpoints are matched with their
  label so the uniqueness constraint on ``id`` (created on open) makes each lookup an
  index seek; an unlabelled MATCH scans.
* Rows and Arrow tables are typed and deduplicated as the embedded store does it
  (``eventkg.graphstore.tables``). Rows known to be new are CREATEd with their properties inline;
  the others are looked up, the new ones CREATEd, and only those whose merge
  (``base.merge_props``, as in the embedded backend) changes something are replaced, so
  re-ingesting a file writes and counts nothing. Neo4j has no null properties: nulls are
  stripped. Known new: a label/type empty when the batch starts, or, inside
  ``bulk_load()``, empty when the session first wrote to it (a key set of what the session
  wrote answers for it then; the session assumes no other writer).
* Read-only Cypher runs in a READ access-mode session, so Neo4j itself refuses writes.
* Install ``neo4j-rust-ext`` beside the driver: it packs Bolt messages several times
  faster than the pure-Python code, which dominates bulk writes.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

import neo4j
import networkx as nx
import numpy as np
from neo4j.exceptions import (
    AuthError,
    ConfigurationError,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from neo4j.graph import Node, Path, Relationship

from eventkg import settings
from eventkg.graphstore import neo4j_batches as nb
from eventkg.graphstore.base import (
    Batch,
    GraphStore,
    MissingEndpointError,
    StoreError,
    WriteRefused,
    WriteResult,
    merge_props,
    neighbourhood_types,
    validate_batch,
)
from eventkg.graphstore.keyset import KeySet
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

# The driver logs routing failures and server notifications as warnings; without this
# handler Python's last-resort handler would print them under every CLI command. An app
# that configures logging still receives them.
logging.getLogger("neo4j").addHandler(logging.NullHandler())

CHUNK = 5_000  # rows per UNWIND statement
TX_ROWS, TX_BYTES = nb.TX_ROWS, nb.TX_BYTES  # bounds of one write transaction (see neo4j_batches)
RETRY_SECONDS = 15.0  # how long transient errors are retried
LOOKUP_CHUNK = 50_000  # ids per lookup statement
CONNECT_TIMEOUT = 5.0  # seconds to wait for a TCP connection
#: Label -> property with a (non-unique) range index, beside the unique ``id`` of every label.
INDEXED = {
    "Event": ["text"],
    "Concept": ["name"],
    "Argument": ["text", "id_string"],
    "Statement": ["text"],
    "Premise": ["text"],
    "Question": ["qid"],
}


def schema_statements() -> list[tuple[str, str]]:
    """(name, DDL) of the uniqueness constraints and indexes the store declares."""
    stmts = [
        (
            f"{label.lower()}_id",
            f"CREATE CONSTRAINT {label.lower()}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE",
        )
        for label in NODE_TYPES
    ]
    for label, props in INDEXED.items():
        for prop in props:
            name = f"{label.lower()}_{prop}"
            stmts.append((name, f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"))
    return stmts


def _strip(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as stored: nulls dropped (Neo4j has no null properties), sources a list."""
    out = {k: v for k, v in row.items() if v is not None}
    out["sources"] = list(row.get("sources") or [])
    return out


def _insert_cypher(name: str) -> str:
    """CREATE of rows sent as lists: ``[id, sources, props...]`` or ``[src, dst, sources, props...]``.

    Properties are set inside CREATE (a null one is simply not set), which avoids a later
    SET on a relationship created in the same transaction (Neo4j 5 resolves that by
    scanning the transaction's new relationships: quadratic in the chunk size).
    """
    if name in NODE_TYPES:
        cols = ["id", "sources", *NODE_TYPES[name].properties]
        props = ", ".join(f"`{c}`: r[{i}]" for i, c in enumerate(cols))
        return f"UNWIND $rows AS r CREATE (n:{name} {{{props}}})"
    rel = REL_TYPES[name]
    cols = ["sources", *rel.properties]
    props = ", ".join(f"`{c}`: r[{i + 2}]" for i, c in enumerate(cols))
    return (
        f"UNWIND $rows AS r MATCH (a:{rel.source} {{id: r[0]}}) MATCH (b:{rel.target} {{id: r[1]}}) "
        f"CREATE (a)-[e:{name} {{{props}}}]->(b) RETURN count(*) AS n"
    )


def _out_of_memory(exc: BaseException) -> bool:
    """Neo4j refused a transaction for want of (transaction) memory."""
    code = getattr(exc, "code", None) or ""
    return "MemoryPoolOutOfMemoryError" in code or "OutOfMemory" in code


def _node_cyphers(label: str) -> dict[str, str]:
    """Existing-row lookup and replace statements for one label."""
    return {
        "lookup": f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN properties(n) AS p",
        "replace": f"UNWIND $rows AS r MATCH (n:{label} {{id: r.id}}) SET n = r",
    }


def _edge_cyphers(rtype: str) -> dict[str, str]:
    """Lookup (existing edge / missing endpoint per row) and replace for one type."""
    rel = REL_TYPES[rtype]
    ends = f"MATCH (a:{rel.source} {{id: r.src}}) MATCH (b:{rel.target} {{id: r.dst}})"
    return {
        "lookup": (
            "UNWIND range(0, size($keys) - 1) AS i WITH i, $keys[i] AS k "
            f"OPTIONAL MATCH (a:{rel.source} {{id: k[0]}}) OPTIONAL MATCH (b:{rel.target} {{id: k[1]}}) "
            f"OPTIONAL MATCH (a)-[e:{rtype}]->(b) WITH i, a, b, e WHERE a IS NULL OR b IS NULL OR e IS NOT NULL "
            "RETURN i, a IS NULL AS no_src, b IS NULL AS no_dst, properties(e) AS p"
        ),
        # r.p: the edge's full merged properties (sources included, nulls stripped)
        "replace": f"UNWIND $rows AS r {ends} MATCH (a)-[e:{rtype}]->(b) SET e = r.p",
    }


def _diff(rows: list[dict], stored: list[dict | None], keys: Sequence[str] = ()) -> tuple[list[dict], list[dict]]:
    """Split merged batch rows into new ones and changed ones (as full stored rows).

    ``stored[i]`` holds the stored properties of row i's node/edge, or None; a row whose
    merge with the stored version (base.merge_props) changes nothing is dropped. ``keys``
    are row columns that are not stored as properties (an edge's ``src``/``dst``).
    """
    new, changed = [], []
    for row, old in zip(rows, stored, strict=True):
        if old is None:
            new.append(_strip(row))
            continue
        old = dict(old, sources=list(old.get("sources") or []))
        merged = _strip(merge_props(old, {k: v for k, v in row.items() if k not in keys}))
        if merged != old:
            changed.append(merged | {k: row[k] for k in keys})
    return new, changed


def _edge_param(row: Mapping[str, Any]) -> dict[str, Any]:
    """An edge row as sent to Cypher: endpoints apart from the properties it stores."""
    return {"src": row["src"], "dst": row["dst"], "p": {k: v for k, v in row.items() if k not in ("src", "dst")}}


def _reason(exc: BaseException, address: tuple[str, int] | None = None) -> str:
    """The root cause of a connection error, on one line (e.g. ``Connection refused``).

    Routing drivers hide the socket error behind "Unable to retrieve routing information",
    so the address is probed once with a plain TCP connect to name the real cause.
    """
    if address is not None:
        try:
            socket.create_connection(address, timeout=CONNECT_TIMEOUT).close()
        except OSError as probe:
            return probe.strerror or str(probe) or type(probe).__name__
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _plain(value: Any) -> Any:
    """Driver values -> JSON-friendly values (nodes/rels become property dicts)."""
    if isinstance(value, Node):
        out = {k: _plain(v) for k, v in value.items()}
        out["_label"] = next(iter(sorted(value.labels)), None)
        return out
    if isinstance(value, Relationship):
        out = {k: _plain(v) for k, v in value.items()}
        out["_type"] = value.type
        out["_src"] = value.start_node.get("id") if value.start_node is not None else None
        out["_dst"] = value.end_node.get("id") if value.end_node is not None else None
        return out
    if isinstance(value, Path):
        return {"_nodes": [_plain(n) for n in value.nodes], "_rels": [_plain(r) for r in value.relationships]}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    return str(value)  # temporal and spatial values


def parse_url(url: str) -> tuple[str, tuple[str, str] | None, str | None, str]:
    """``neo4j://[user:pass@]host[:port][/database]`` -> (driver URL, auth, database, shown URL).

    Credentials come from the URL, else ``NEO4J_USER``/``NEO4J_PASSWORD`` (user ``neo4j``
    when only a password is set), else none. The shown URL never contains the password.
    """
    parts: SplitResult = urlsplit(url)
    if not parts.hostname:
        raise StoreError(f"store URL {url!r}: no host (expected neo4j://[user:pass@]host:port[/database])")
    try:
        port = parts.port or 7687
    except ValueError as exc:
        raise StoreError(f"store URL {url!r}: bad port") from exc
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    driver_url = f"{parts.scheme}://{host}:{port}" + (f"?{parts.query}" if parts.query else "")
    env_user, env_password = settings.neo4j_credentials()
    user = unquote(parts.username) if parts.username else env_user
    password = unquote(parts.password) if parts.password is not None else env_password
    auth = None
    if user or password:
        auth = (user or "neo4j", password or "")
    database = unquote(parts.path.strip("/")) or None
    shown = f"{parts.scheme}://" + (f"{user}@" if parts.username else "") + f"{host}:{port}"
    shown += f"/{database}" if database else ""
    return driver_url, auth, database, shown


def _address(driver_url: str) -> tuple[str, int]:
    parts = urlsplit(driver_url)
    return parts.hostname or "localhost", parts.port or 7687


class Neo4jStore(GraphStore):
    """A Neo4j 5 database holding the eventkg graph."""

    def __init__(self, url: str, *, chunk_size: int = CHUNK, tx_rows: int = TX_ROWS, tx_bytes: int = TX_BYTES) -> None:
        driver_url, auth, self._database, self.url = parse_url(url)
        self._address = _address(driver_url)
        self._user = auth[0] if auth else None
        self._chunk = chunk_size
        self._tx_rows, self._tx_bytes = tx_rows, tx_bytes
        self._keys: dict[str, KeySet | None] | None = None  # inside bulk_load(): see there
        try:
            self._driver = neo4j.GraphDatabase.driver(
                driver_url,
                auth=auth,
                connection_timeout=CONNECT_TIMEOUT,
                max_transaction_retry_time=10.0,
                notifications_min_severity="OFF",  # "unknown rel type" etc. for every empty type
            )
        except (ConfigurationError, ValueError) as exc:
            raise StoreError(f"store URL {self.url}: {_one_line(exc)}") from exc
        try:
            self._driver.verify_connectivity()
            self._ensure_schema()
        except AuthError as exc:
            self._driver.close()
            if not self._user:
                raise StoreError(
                    f"Neo4j at {self.url} needs credentials: put them in the URL (neo4j://user:password@host:port) "
                    "or set NEO4J_USER and NEO4J_PASSWORD"
                ) from None
            raise StoreError(
                f"Neo4j at {self.url} refused user {self._user!r}: {_one_line(exc.message or exc)}"
            ) from None
        except (ServiceUnavailable, OSError) as exc:
            self._driver.close()
            raise StoreError(f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}") from None
        except Neo4jError as exc:
            self._driver.close()
            raise StoreError(f"Neo4j at {self.url}: {_one_line(exc.message or exc)}") from None

    # -- low-level -------------------------------------------------------------------------
    def _session(self, *, write: bool = True, **kw: Any) -> neo4j.Session:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self._database, default_access_mode=mode, **kw)

    def _read(self, cypher: str, params: Mapping[str, Any] | None = None) -> list[neo4j.Record]:
        with self._session(write=False) as s:
            return list(s.run(cypher, dict(params or {})))

    def _ensure_schema(self) -> None:
        """Create the missing constraints/indexes (once per database, not on every open)."""
        with self._session() as s:
            have = {r["name"] for r in s.run("SHOW CONSTRAINTS YIELD name")}
            have |= {r["name"] for r in s.run("SHOW INDEXES YIELD name")}
            todo = [ddl for name, ddl in schema_statements() if name not in have]
            for ddl in todo:
                s.run(ddl).consume()
            if todo:
                s.run("CALL db.awaitIndexes(300)").consume()

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def bulk_load(self) -> Iterator[Neo4jStore]:
        """A bulk session: the store assumes it is the only writer of what it writes.

        A label/type that is empty when the session first writes to it gets a key set
        (``eventkg.graphstore.keyset``: fingerprints of the keys this session wrote); rows it
        reports absent are CREATEd without asking the server which exist. Labels/types
        that held rows before use the exact lookup path, as outside a session. Every batch
        is still written when handed over; nothing is held back.
        """
        if self._keys is not None:  # nested: the outer session rules
            yield self
            return
        self._keys = {}
        try:
            yield self
        finally:
            self._keys = None

    def write_batch(self, batch: Batch) -> WriteResult:
        """Upsert a batch: one transaction, or several when it is big (see the module docstring)."""
        validate_batch(batch)
        names = [*dict.fromkeys([*batch.nodes, *batch.node_tables]), *dict.fromkeys([*batch.edges, *batch.edge_tables])]
        sources = {**batch.nodes, **batch.edges}
        tables = {**batch.node_tables, **batch.edge_tables}
        typed = {}
        for name in names:
            rows, table = sources.get(name), tables.get(name)
            if rows or (table is not None and table.num_rows):
                typed[name] = nb.typed_table(name, rows, table)
        if not typed:
            return WriteResult()
        try:
            with self._session() as session:
                parts = self._split_known(session, typed)
                return self._write_parts(session, parts)
        except StoreError:
            raise
        except ServiceUnavailable as exc:
            raise StoreError(f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}") from None
        except Neo4jError as exc:
            raise StoreError(f"writing to Neo4j at {self.url}: {_one_line(exc.message or exc)}") from None

    def _split_known(self, session: neo4j.Session, typed: Mapping[str, tuple]) -> list[nb.Part]:
        """Each name's rows as a part of rows known to be new and a part to look up (nodes first)."""
        empty: set[str] = set()
        unknown = [n for n in typed if self._keys is None or n not in self._keys]
        if unknown:
            empty = session.execute_read(self._empty_kinds, [n for n in unknown if n in NODE_TYPES],
                                         [n for n in unknown if n in REL_TYPES])
            if self._keys is not None:
                for name in unknown:
                    self._keys[name] = KeySet() if name in empty else None
        parts = []
        for name, (table, (h1, h2)) in typed.items():
            sizes = nb.row_bytes(table)
            keys = self._keys.get(name) if self._keys is not None else None
            if keys is not None:
                present, unsure = keys.lookup(h1, h2)
                new = ~(present | unsure)
            else:
                new = np.full(len(h1), name in empty)
            if new.all():
                parts.append(nb.Part(name, table, h1, h2, sizes, new=True))
                continue
            for flag, mask in ((True, new), (False, ~new)):
                if mask.any():
                    idx = np.flatnonzero(mask)
                    parts.append(nb.Part(name, table.take(idx), h1[idx], h2[idx], sizes[idx], new=flag))
        parts.sort(key=lambda p: p.is_edge)  # nodes before edges (stable)
        return parts

    def _write_parts(self, session: neo4j.Session, parts: list[nb.Part]) -> WriteResult:
        """Write the parts in bounded transactions; a failure names what already landed."""
        result = WriteResult()
        txs = nb.plan(parts, self._tx_rows, self._tx_bytes)
        total = nb.count_rows(parts)
        done = 0
        committed: list[nb.Part] = []
        try:
            for tx_parts in txs:
                result.add(self._commit(session, tx_parts, done, total))
                done += nb.count_rows(tx_parts)
                committed += tx_parts
        finally:
            self._remember(committed)
        return result

    def _remember(self, parts: list[nb.Part]) -> None:
        """Add the keys of committed rows known new to the session's key sets (once per batch)."""
        if self._keys is None:
            return
        grouped: dict[str, list[nb.Part]] = {}
        for part in parts:
            if part.new and self._keys.get(part.name) is not None:
                grouped.setdefault(part.name, []).append(part)
        for name, group in grouped.items():
            self._keys[name].add(np.concatenate([p.h1 for p in group]), np.concatenate([p.h2 for p in group]))

    def _commit(self, session: neo4j.Session, tx_parts: list[nb.Part], done: int, total: int) -> WriteResult:
        """One bounded transaction of a batch; errors say how much of the batch landed before."""
        try:
            return self._run_tx(session, tx_parts)
        except StoreError as exc:
            if done:
                raise type(exc)(f"{exc} ({done:,} of this batch's {total:,} rows were written in earlier "
                                "transactions; writing the batch again completes it)") from None
            raise
        except (Neo4jError, DriverError) as exc:
            if isinstance(exc, ServiceUnavailable | SessionExpired):
                msg = f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}"
            else:
                msg = f"writing to Neo4j at {self.url}: {_one_line(getattr(exc, 'message', None) or exc)}"
            if done:
                msg += (f" ({done:,} of this batch's {total:,} rows were written in earlier transactions; "
                        "writing the batch again completes it)")
            raise StoreError(msg) from None

    def _run_tx(self, session: neo4j.Session, parts: list[nb.Part]) -> WriteResult:
        """One transaction, retried on transient errors; split in halves when Neo4j runs out of
        transaction memory (a single row that still does not fit is a one-line StoreError).

        A retry (attempt > 1) looks every row up instead of CREATEing the rows known new: a
        commit whose outcome was lost may have landed, and the lookup makes the retry write
        nothing twice.
        """
        delay, deadline, attempt = 0.2, time.monotonic() + RETRY_SECONDS, 0
        while True:
            attempt += 1
            try:
                with session.begin_transaction() as tx:
                    out = self._write_tx(tx, parts, blind=attempt == 1)
                    tx.commit()
                return out
            except (Neo4jError, DriverError) as exc:
                if _out_of_memory(exc):
                    if nb.count_rows(parts) > 1:
                        out = WriteResult()
                        for half in nb.halves(parts):
                            out.add(self._run_tx(session, half))
                        return out
                    part = parts[0]
                    raise StoreError(
                        f"writing to Neo4j at {self.url}: {part.name} {part.key_of(0)} alone exceeds the server's "
                        f"transaction memory (~{int(part.row_bytes[0]):,} bytes; the server says: "
                        f"{_one_line(getattr(exc, 'message', None) or exc)})"
                    ) from None
                retry = isinstance(exc, IncompleteCommit) or (hasattr(exc, "is_retryable") and exc.is_retryable())
                if not retry or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay *= 2

    def _write_tx(self, tx: neo4j.Transaction, parts: list[nb.Part], *, blind: bool) -> WriteResult:
        """Nodes, then edges: rows known new are CREATEd; the others are looked up, the new ones
        CREATEd and the changed ones replaced (merged with base.merge_props, like the embedded
        backend). Statements of ``chunk_size`` rows are sent while the next ones are built."""
        result = WriteResult()
        for part in parts:
            if part.new and blind:
                created = self._create(tx, part.name, part.tuples())
                result.add(WriteResult({part.name: created}, {part.name: 0}))
            else:
                result.add(self._upsert(tx, part.name, part.dicts()))
        return result

    def _create(self, tx: neo4j.Transaction, name: str, rows: list[tuple]) -> int:
        """CREATE rows (all new); an edge whose endpoint is missing raises MissingEndpointError."""
        q = _insert_cypher(name)
        created = 0
        pending: tuple[neo4j.Result, list[tuple]] | None = None
        for i in range(0, len(rows), self._chunk):
            chunk = rows[i : i + self._chunk]
            if pending is not None:
                created += self._created(tx, name, *pending)
            pending = (tx.run(q, rows=chunk), chunk)
        if pending is not None:
            created += self._created(tx, name, *pending)
        return created

    def _created(self, tx: neo4j.Transaction, name: str, res: neo4j.Result, chunk: list[tuple]) -> int:
        if name in NODE_TYPES:
            return res.consume().counters.nodes_created
        if res.single(strict=True)["n"] != len(chunk):
            raise MissingEndpointError(self._missing_endpoint(tx, name, [{"src": r[0], "dst": r[1]} for r in chunk]))
        return res.consume().counters.relationships_created

    def _upsert(self, tx: neo4j.Transaction, name: str, rows: list[dict]) -> WriteResult:
        """Look rows up, CREATE the new ones, replace the changed ones (exact, any state)."""
        result = WriteResult()
        edge = name in REL_TYPES
        q = _edge_cyphers(name) if edge else _node_cyphers(name)
        cols = ["src", "dst"] if edge else ["id"]
        cols += ["sources", *(REL_TYPES[name] if edge else NODE_TYPES[name]).properties]
        for i in range(0, len(rows), self._chunk):
            chunk = rows[i : i + self._chunk]
            if edge:
                old = {}
                for rec in tx.run(q["lookup"], keys=[[r["src"], r["dst"]] for r in chunk]):
                    if rec["no_src"] or rec["no_dst"]:
                        raise MissingEndpointError(self._missing_message(name, chunk[rec["i"]], rec["no_src"]))
                    old[rec["i"]] = rec["p"]
                new, changed = _diff(chunk, [old.get(n) for n in range(len(chunk))], ("src", "dst"))
            else:
                old = {rec["p"]["id"]: rec["p"] for rec in tx.run(q["lookup"], ids=[r["id"] for r in chunk])}
                new, changed = _diff(chunk, [old.get(r["id"]) for r in chunk])
            created = self._create(tx, name, [tuple(r.get(c) for c in cols) for r in new]) if new else 0
            if changed:
                rows_param = [_edge_param(r) for r in changed] if edge else changed
                tx.run(q["replace"], rows=rows_param).consume()
            result.add(WriteResult({name: created}, {name: len(changed)}))
        return result

    @staticmethod
    def _empty_kinds(tx: neo4j.ManagedTransaction, labels: list[str], types: list[str]) -> set[str]:
        """Which of the labels/types hold nothing yet (answered from the count store).

        ``WITH count(..) AS c`` first: ``RETURN 'X' AS k, count(n)`` groups by the literal and
        returns no row at all when nothing matches, so an empty label looked non-empty.
        """
        parts = [f"MATCH (n:{label}) WITH count(n) AS c RETURN '{label}' AS k, c" for label in labels]
        parts += [f"MATCH ()-[e:{t}]->() WITH count(e) AS c RETURN '{t}' AS k, c" for t in types]
        return {rec["k"] for rec in tx.run(" UNION ALL ".join(parts)) if rec["c"] == 0}

    @staticmethod
    def _missing_message(rtype: str, row: Mapping[str, Any], src_missing: bool) -> str:
        rel = REL_TYPES[rtype]
        label, nid = (rel.source, row["src"]) if src_missing else (rel.target, row["dst"])
        return f"{rtype} edge refers to a node that is not in the store: {label} {nid!r}"

    @classmethod
    def _missing_endpoint(cls, tx: neo4j.ManagedTransaction, rtype: str, rows: list[dict]) -> str:
        """The message naming one endpoint of ``rows`` that is not in the store."""
        rel = REL_TYPES[rtype]
        for label, col in ((rel.source, "src"), (rel.target, "dst")):
            ids = list({r[col] for r in rows})
            found = {
                rec["id"] for rec in tx.run(f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN n.id AS id", ids=ids)
            }
            for row in rows:
                if row[col] not in found:
                    return cls._missing_message(rtype, row, col == "src")
        return f"{rtype} edge refers to a node that is not in the store"

    def clear(self) -> None:
        """Delete all nodes and edges: one transaction when small, else in batches."""
        if self._keys is not None:
            self._keys = {}
        total = self._read("MATCH (n) RETURN count(n) AS c")[0]["c"]
        if total == 0:
            return
        with self._session() as s:
            if total <= 50_000:
                s.execute_write(lambda tx: tx.run("MATCH (n) DETACH DELETE n").consume())
            else:  # CALL ... IN TRANSACTIONS needs an auto-commit transaction
                s.run("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()

    # -- reading ---------------------------------------------------------------------------
    def query(
        self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]:
        if write and self._keys is not None:
            self._keys = {}  # a raw write may add keys the session's key sets do not know
        try:
            with self._session(write=write) as s:
                result = s.run(cypher, dict(params or {}))
                return [{k: _plain(v) for k, v in rec.items()} for rec in result]
        except Neo4jError as exc:
            code = exc.code or ""
            msg = _one_line(exc.message or exc)
            if not write and (code.endswith("AccessMode") or "read access mode" in msg.lower()):
                raise WriteRefused(
                    "query refused: it writes to the graph and the Cypher passthrough is read-only; "
                    "pass --write to allow it"
                ) from None
            raise StoreError(f"Cypher error: {msg}") from None
        except ServiceUnavailable as exc:
            raise StoreError(f"cannot reach Neo4j at {self.url}: {_reason(exc, self._address)}") from None

    def counts(self) -> dict[str, dict[str, int]]:
        # each branch is answered from Neo4j's count store, not by scanning
        parts = [f"MATCH (n:{label}) RETURN 'n' AS k, '{label}' AS name, count(n) AS c" for label in NODE_TYPES]
        parts += [f"MATCH ()-[e:{t}]->() RETURN 'e' AS k, '{t}' AS name, count(e) AS c" for t in REL_TYPES]
        got = {(r["k"], r["name"]): r["c"] for r in self._read(" UNION ALL ".join(parts))}
        return {
            "nodes": {label: got.get(("n", label), 0) for label in NODE_TYPES},
            "edges": {t: got.get(("e", t), 0) for t in REL_TYPES},
        }

    @staticmethod
    def _node_row(label: str, props: Mapping[str, Any]) -> dict[str, Any]:
        """Stored properties -> a row with every declared column (None when absent)."""
        row = {"id": props.get("id"), "sources": list(props.get("sources") or [])}
        row.update({c: props.get(c) for c in NODE_TYPES[label].properties})
        return row

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if label not in NODE_TYPES:
            raise StoreError(f"unknown node label {label!r}")
        ids = list(dict.fromkeys(ids))
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), LOOKUP_CHUNK):
            for rec in self._read(
                f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN properties(n) AS p",
                {"ids": ids[i : i + LOOKUP_CHUNK]},
            ):
                out[rec["p"]["id"]] = self._node_row(label, rec["p"])
        return out

    def iter_nodes(self, label: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        """Keyset pages in ``id`` order (the constraint's index serves the order)."""
        if label not in NODE_TYPES:
            raise StoreError(f"unknown node label {label!r}")
        after = None
        while True:
            where = "WHERE n.id > $after" if after is not None else "WHERE n.id IS NOT NULL"
            page = self._read(
                f"MATCH (n:{label}) {where} RETURN properties(n) AS p ORDER BY n.id LIMIT $n",
                {"after": after, "n": batch_size},
            )
            for rec in page:
                yield self._node_row(label, rec["p"])
            if len(page) < batch_size:
                return
            after = page[-1]["p"]["id"]

    def iter_edges(self, rel_type: str, batch_size: int = 50_000) -> Iterator[dict[str, Any]]:
        """One streaming result, pulled from the server ``batch_size`` records at a time."""
        if rel_type not in REL_TYPES:
            raise StoreError(f"unknown relationship type {rel_type!r}")
        rel = REL_TYPES[rel_type]
        cypher = (
            f"MATCH (a:{rel.source})-[e:{rel_type}]->(b:{rel.target}) "
            "RETURN a.id AS src, b.id AS dst, properties(e) AS p"
        )
        with self._session(write=False, fetch_size=batch_size) as s:
            for rec in s.run(cypher):
                p = rec["p"]
                row = {"src": rec["src"], "dst": rec["dst"], "sources": list(p.get("sources") or [])}
                row.update({c: p.get(c) for c in rel.properties})
                yield row

    def neighbourhood(
        self,
        seeds: Sequence[str],
        hops: int = 1,
        rel_types: Sequence[str] | None = None,
        direction: str = "both",
        limit: int | None = None,
        induced: bool = True,
    ) -> nx.MultiDiGraph:
        types = neighbourhood_types(rel_types, direction)
        held = self._labels_of(list(dict.fromkeys(seeds)))  # id -> label
        frontier = dict(held)
        for _ in range(hops):
            if not frontier:
                break
            found = self._expand(frontier, types, direction, set(held), limit)
            held.update(found)
            frontier = found
        g = nx.MultiDiGraph()
        by_label: dict[str, list[str]] = {}
        for nid, label in held.items():
            by_label.setdefault(label, []).append(nid)
        for label, ids in by_label.items():
            for nid, row in self.get_nodes(label, ids).items():
                g.add_node(nid, label=label, **{k: v for k, v in row.items() if v is not None})
        self._add_edges_among(g, by_label, types)
        if not induced:  # keep the edges a walk of <= hops steps traverses
            outer = set(frontier)
            g.remove_edges_from([(u, v, k) for u, v, k in g.edges(keys=True) if u in outer and v in outer])
        return g

    def _labels_of(self, ids: Sequence[str]) -> dict[str, str]:
        """Which label each existing id has (ids are unique across labels by construction)."""
        if not ids:
            return {}
        branches = " UNION ALL ".join(
            f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id AS id, '{label}' AS label" for label in NODE_TYPES
        )
        found = {r["id"]: r["label"] for r in self._read(branches, {"ids": list(ids)})}
        return {i: found[i] for i in ids if i in found}

    def _expand(
        self, frontier: Mapping[str, str], types: Sequence[str], direction: str, seen: set[str], limit: int | None
    ) -> dict[str, str]:
        """New neighbours (id -> label) of ``frontier`` over ``types``, at most ``limit``, by id."""
        branches = []
        params: dict[str, Any] = {"seen": sorted(seen)}
        by_label: dict[str, list[str]] = {}
        for nid, label in frontier.items():
            by_label.setdefault(label, []).append(nid)
        for label, ids in by_label.items():
            params[f"ids_{label}"] = ids
            for outgoing in {"out": (True,), "in": (False,), "both": (True, False)}[direction]:
                # one branch per far label, its types joined: few branches plan fast
                by_far: dict[str, list[str]] = {}
                for t in types:
                    rel = REL_TYPES[t]
                    if (rel.source if outgoing else rel.target) == label:
                        by_far.setdefault(rel.target if outgoing else rel.source, []).append(t)
                for far, group in by_far.items():
                    arrow = f"-[:{'|'.join(group)}]->" if outgoing else f"<-[:{'|'.join(group)}]-"
                    branches.append(
                        f"MATCH (a:{label}){arrow}(b:{far}) WHERE a.id IN $ids_{label} AND NOT b.id IN $seen "
                        f"RETURN DISTINCT b.id AS id, '{far}' AS label"
                    )
        if not branches:
            return {}
        cypher = "CALL { " + " UNION ".join(branches) + " } RETURN id, label ORDER BY id"
        if limit is not None:
            cypher += " LIMIT $limit"
            params["limit"] = limit
        return {r["id"]: r["label"] for r in self._read(cypher, params)}

    def _add_edges_among(self, g: nx.MultiDiGraph, by_label: Mapping[str, list[str]], types: Sequence[str]) -> None:
        """Every edge of ``types`` whose two endpoints are held, grouped per endpoint labels."""
        pairs: dict[tuple[str, str], list[str]] = {}
        for t in types:
            rel = REL_TYPES[t]
            if rel.source in by_label and rel.target in by_label:
                pairs.setdefault((rel.source, rel.target), []).append(t)
        for (src, dst), group in pairs.items():
            cypher = (
                f"MATCH (a:{src})-[e:{'|'.join(group)}]->(b:{dst}) WHERE a.id IN $a AND b.id IN $b "
                "RETURN a.id AS src, b.id AS dst, type(e) AS t, properties(e) AS p"
            )
            for rec in self._read(cypher, {"a": by_label[src], "b": by_label[dst]}):
                g.add_edge(rec["src"], rec["dst"], key=rec["t"], type=rec["t"], **rec["p"])

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        driver = getattr(self, "_driver", None)
        if driver is not None:
            driver.close()
            self._driver = None
