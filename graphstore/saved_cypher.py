"""The exploration queries shipped with eventkg (``graphstore/saved.cypher``), by name.

Why a plain ``.cypher`` file: the same text is pasted into Neo4j Browser, run by
``eventkg saved NAME`` / ``eventkg cypher --saved NAME``, and read by people, so it stays
valid Cypher with the metadata in comment headers::

    // name: causes-and-effects
    // description: An event's causes and effects up to two CAUSES hops out.
    // params: event=learn, limit=50
    // limit-per: role, hops
    MATCH ...                      <- Neo4j Cypher (Browser, neo4j:// stores)
    // ladybug:
    MATCH ...                      <- LadybugDB variant, where the dialects differ

A query without a ``// ladybug:`` block runs as is on both backends; ``// neo4j-only:
REASON`` marks one that cannot run on LadybugDB. Parameter defaults come from the project's
samples, so every query runs on ``ingest/samples`` without arguments.

**Limits.** Every query takes ``limit``: at most that many rows (strongest or most frequent
first), in each part named by ``// limit-per:`` (the columns whose values split the result
into independently limited parts, e.g. causes and effects) or in all. :func:`run_saved_query`
asks for ``limit + 1`` rows per part and keeps ``limit``: :attr:`SavedResult.cut` says which
parts had more, so a caller can say "showing 50 of more".

**Anchors.** LadybugDB has no index on ``Event.text`` (a lookup by text scans every Event), so
its variants start from the ``id`` primary key: a ``$event_id`` in a LadybugDB variant is filled
with the id of the Event whose text is the ``event`` parameter (schema level first, as
``eventkg paths`` looks events up; any ``$NAME_id`` for a text parameter ``NAME``).

>>> q = get_saved_query("causes-and-effects", backend="ladybug")
>>> q.params
{'event': 'learn', 'limit': 50}
>>> q.limit_per
('role', 'hops')
>>> "label(" in get_saved_query("aser-neighbourhood", backend="ladybug").cypher
True
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.errors import SavedQueryError
from eventkg.graphstore.model import EVENT_LEVELS, event_id

SAVED_FILE = Path(str(importlib.resources.files(__package__).joinpath("saved.cypher")))
BACKENDS = ("neo4j", "ladybug")
NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")
#: Column the Neo4j variants fill with paths for Browser's graph view (absent on LadybugDB).
GRAPH_COLUMN = "graph"

_HEADER = re.compile(r"^//\s*(name|description|params|neo4j-only|limit-per)\s*:\s*(.*?)\s*$")
_ID_PARAM = re.compile(r"\$([A-Za-z_]\w*)_id\b")
_LADYBUG = re.compile(r"^//\s*ladybug\s*:\s*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_PARAM = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*(.*?)\s*(?=,\s*[A-Za-z_]\w*\s*=|$)")


@dataclass(frozen=True)
class SavedQuery:
    """One named query; ``cypher`` is the text for ``backend`` (set by :func:`get_saved_query`)."""

    name: str
    description: str
    params: dict[str, Any]
    neo4j: str
    ladybug: str | None = None
    neo4j_only: str | None = None  # the reason, when it cannot run on LadybugDB
    limit_per: tuple[str, ...] = ()  # columns whose values split the rows into separately limited parts
    line: int = 0
    backend: str = "neo4j"
    source: Path = field(default=SAVED_FILE, compare=False)

    @property
    def cypher(self) -> str:
        """The Cypher for :attr:`backend` (the Neo4j text unless a LadybugDB variant exists)."""
        if self.backend == "ladybug":
            if self.neo4j_only:
                raise SavedQueryError(f"saved query {self.name!r} runs on Neo4j only: {self.neo4j_only}")
            return self.ladybug or self.neo4j
        return self.neo4j

    @property
    def runs_on(self) -> tuple[str, ...]:
        """The backends this query has Cypher for."""
        return ("neo4j",) if self.neo4j_only else BACKENDS

    def for_backend(self, backend: str) -> SavedQuery:
        """This query with :attr:`cypher` chosen for ``backend`` (a name, store URL or path)."""
        return replace(self, backend=backend_of(backend))

    def with_params(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The defaults updated with ``overrides``; an unknown name is an error (a typo would
        otherwise run the default silently)."""
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - set(self.params))
        if unknown:
            known = ", ".join(self.params) or "none"
            raise SavedQueryError(f"saved query {self.name!r} has no parameter {', '.join(unknown)} (it takes {known})")
        return {**self.params, **overrides}

    def browser_text(self, overrides: Mapping[str, Any] | None = None) -> str:
        """What to paste into Neo4j Browser: a ``:params`` line, then the Neo4j Cypher."""
        params = self.with_params(overrides)
        pairs = ", ".join(f"{k}: {json.dumps(v)}" for k, v in params.items())
        head = f":params {{{pairs}}}\n" if params else ""
        return head + self.neo4j


def backend_of(target: str | GraphStore | None) -> str:
    """``"neo4j"`` or ``"ladybug"`` for a backend name, a store URL/path or an open store."""
    if target is None:
        return "neo4j"
    if isinstance(target, GraphStore):
        target = type(target).__name__.lower().removesuffix("store")
        return "neo4j" if target == "neo4j" else "ladybug"
    if target in BACKENDS:
        return target
    return "neo4j" if str(target).startswith(NEO4J_SCHEMES) else "ladybug"


def parse_queries(text: str, source: Path | str = SAVED_FILE) -> dict[str, SavedQuery]:
    """Parse a queries file; a malformed block is a one-line error naming file and line."""
    source = Path(source)
    queries: dict[str, SavedQuery] = {}
    block: dict[str, Any] | None = None

    def finish() -> None:
        if block is None:
            return
        neo, lady = "\n".join(block["neo4j"]).strip(), "\n".join(block["ladybug"]).strip()
        _check_block(block, f"{source}:{block['line']}", neo, lady)
        queries[block["name"]] = SavedQuery(
            name=block["name"],
            description=block["description"],
            params=block.get("params", {}),
            neo4j=neo,
            ladybug=lady or None,
            neo4j_only=block.get("neo4j-only"),
            limit_per=tuple(c.strip() for c in block.get("limit-per", "").split(",") if c.strip()),
            line=block["line"],
            source=source,
        )

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        header = _HEADER.match(line.strip())
        if header and header.group(1) == "name":
            finish()
            name = header.group(2)
            if not _NAME.match(name):
                raise SavedQueryError(f"{source}:{lineno}: bad query name {name!r} (use lower-case letters, digits, -)")
            if name in queries:
                raise SavedQueryError(f"{source}:{lineno}: saved query {name!r} is defined twice")
            block = {"name": name, "line": lineno, "neo4j": [], "ladybug": [], "in_ladybug": False, "in_header": True}
            continue
        if block is None:
            continue  # the file's preamble
        if header and block["in_header"]:
            key, value = header.groups()
            if key in block:
                raise SavedQueryError(f"{source}:{lineno}: '// {key}:' given twice for {block['name']!r}")
            block[key] = _parse_params(value, f"{source}:{lineno}") if key == "params" else value
            continue
        block["in_header"] = False
        if _LADYBUG.match(line.strip()):
            if block["in_ladybug"]:
                raise SavedQueryError(f"{source}:{lineno}: second '// ladybug:' block in {block['name']!r}")
            block["in_ladybug"] = True
            continue
        block["ladybug" if block["in_ladybug"] else "neo4j"].append(line)
    finish()
    return queries


def _check_block(block: dict[str, Any], where: str, neo: str, lady: str) -> None:
    """A one-line error naming file and line for a block that cannot be a saved query."""
    if not block.get("description"):
        raise SavedQueryError(f"{where}: saved query {block['name']!r} has no '// description:' line")
    if not _has_cypher(neo):
        raise SavedQueryError(f"{where}: saved query {block['name']!r} has no Cypher")
    if block["in_ladybug"] and not _has_cypher(lady):
        raise SavedQueryError(f"{where}: saved query {block['name']!r} has an empty '// ladybug:' block")
    if block.get("limit-per") and "limit" not in block.get("params", {}):
        raise SavedQueryError(f"{where}: saved query {block['name']!r} has '// limit-per:' but no limit parameter")
    if block["in_ladybug"] and block.get("neo4j-only"):
        raise SavedQueryError(f"{where}: saved query {block['name']!r} is neo4j-only but has a ladybug variant")


def _has_cypher(text: str) -> bool:
    return any(ln.strip() and not ln.strip().startswith("//") for ln in text.splitlines())


def _parse_params(value: str, where: str) -> dict[str, Any]:
    """``a=study for exam, n=3`` -> ``{"a": "study for exam", "n": 3}`` (JSON values kept typed)."""
    out: dict[str, Any] = {}
    pos = 0
    value = value.strip()
    while pos < len(value):
        m = _PARAM.match(value, pos)
        if not m or m.end() == pos:
            raise SavedQueryError(f"{where}: bad '// params:' entry {value[pos:]!r}; expected NAME=DEFAULT, ...")
        name, raw = m.groups()
        try:
            out[name] = json.loads(raw)
        except json.JSONDecodeError:
            out[name] = raw
        pos = m.end()
        if value[pos : pos + 1] == ",":
            pos += 1
    return out


@lru_cache(maxsize=4)
def _load(path: Path, mtime: float) -> dict[str, SavedQuery]:
    return parse_queries(path.read_text(encoding="utf-8"), path)


def load_saved_queries(path: Path | str = SAVED_FILE) -> dict[str, SavedQuery]:
    """All queries of ``path`` (the shipped file by default), by name, in file order."""
    path = Path(path)
    try:
        return _load(path, path.stat().st_mtime)
    except FileNotFoundError:
        raise SavedQueryError(f"saved queries file {path} not found") from None


def saved_queries(backend: str | GraphStore | None = None) -> list[SavedQuery]:
    """Every shipped query, each with its Cypher for ``backend``."""
    return [q.for_backend(backend_of(backend)) for q in load_saved_queries().values()]


def get_saved_query(name: str, backend: str | GraphStore | None = None) -> SavedQuery:
    """The query called ``name`` with :attr:`SavedQuery.cypher` for ``backend`` (a name,
    store URL or store; Neo4j when omitted). Raises :class:`SavedQueryError` for an unknown
    name, or when the query is Neo4j-only and the backend is LadybugDB."""
    queries = load_saved_queries()
    if name not in queries:
        raise SavedQueryError(f"no saved query {name!r}; known: {', '.join(queries)}")
    query = queries[name].for_backend(backend_of(backend))
    query.cypher  # noqa: B018 - raises now for a Neo4j-only query on LadybugDB
    return query


@dataclass(frozen=True)
class SavedResult:
    """The rows of a saved query, at most ``limit`` per part, and which parts had more.

    ``cut`` holds the key (the ``limit_per`` column values) of each part that was cut; ``()``
    is the key of a query limited as a whole.
    """

    rows: list[dict[str, Any]]
    limit: int | None = None
    cut: tuple[tuple[Any, ...], ...] = ()
    limit_per: tuple[str, ...] = ()

    def cut_message(self) -> str:
        """One line for a person, or ``""`` when nothing was cut."""
        if not self.cut:
            return ""
        if self.limit_per:
            parts = "; ".join(", ".join(f"{c}={v}" for c, v in zip(self.limit_per, key, strict=True)) for key in self.cut)
            return f"showing {self.limit} rows per part where there were more ({parts}); raise --limit"
        return f"showing {self.limit} of more rows; raise --limit"


def run_saved_query(
    store: GraphStore, name: str, params: Mapping[str, Any] | None = None, *, graph: bool = True
) -> SavedResult:
    """Run a saved query on ``store`` with its defaults updated by ``params``.

    ``limit + 1`` rows are asked for (per ``limit_per`` part) and ``limit`` kept, so the result
    says whether more existed. ``graph=False`` drops the Browser-only ``graph`` column, so rows
    compare across backends.
    """
    query = get_saved_query(name, backend=store)
    values = query.with_params(params)
    limit = _limit(query, values)
    if limit is not None:
        values["limit"] = limit + 1
    values.update(_anchor_ids(store, query, values))
    rows = store.query(query.cypher, values)
    if not graph:
        rows = [{k: v for k, v in row.items() if k != GRAPH_COLUMN} for row in rows]
    if limit is None:
        return SavedResult(rows)
    kept: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], int] = {}
    cut: list[tuple[Any, ...]] = []
    for row in rows:
        key = tuple(row.get(c) for c in query.limit_per)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= limit:
            kept.append(row)
        elif seen[key] == limit + 1:
            cut.append(key)
    return SavedResult(kept, limit, tuple(cut), query.limit_per)


def _limit(query: SavedQuery, values: Mapping[str, Any]) -> int | None:
    if "limit" not in query.params:
        return None
    raw = values["limit"]
    whole = isinstance(raw, int) and not isinstance(raw, bool) or isinstance(raw, str) and raw.strip().isdigit()
    if not whole or int(raw) < 1:
        raise SavedQueryError(f"saved query {query.name!r}: limit must be a whole number >= 1, not {raw!r}")
    return int(raw)


def _anchor_ids(store: GraphStore, query: SavedQuery, values: Mapping[str, Any]) -> dict[str, str]:
    """``NAME_id`` for each ``$NAME_id`` of the Cypher: the id of the Event with text ``values[NAME]``
    (schema level first; the schema id when there is none, which matches nothing)."""
    out: dict[str, str] = {}
    for name in dict.fromkeys(_ID_PARAM.findall(query.cypher)):
        if name not in values:
            raise SavedQueryError(f"saved query {query.name!r} uses ${name}_id but has no parameter {name}")
        ids = [event_id(str(values[name]), level) for level in EVENT_LEVELS]
        found = store.get_nodes("Event", ids, props=False)
        out[f"{name}_id"] = next((i for i in ids if i in found), ids[0])
    return out
