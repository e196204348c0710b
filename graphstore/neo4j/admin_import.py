"""The files of ``neo4j-admin database import full``, streamed from an embedded store.

Owns the import folder's format: one ``nodes-<Label>.csv`` per non-empty label and one
``rels-<TYPE>.csv`` per non-empty type (:func:`node_header`, :func:`rel_header`), ``import.json``
(files and CSV options, written last: a folder without it is unfinished), ``import.sh``, and the
importer's arguments for a folder (:func:`admin_arguments`). Invariant: the importer builds the
graph the Bolt path writes (same labels, types, string ``id`` and property types; a null is an
unset property), except that an empty array is left unset where Bolt stores ``[]`` (the store
reads both as ``[]``). A node's ``:ID`` is its LadybugDB offset plus a base per label, imported with
``--id-type=actual`` (:data:`ID_TYPE`), so no id map is needed. Reading is bounded: pages of
:data:`PAGE` offsets, files written in :data:`LANES` lanes. Running ``neo4j-admin`` on the folder
is not here but in ``server.launch.run_import``: it needs the server's jars, JVM flags, class-data
archives and huge pages, while writing the files needs only the embedded store, so
``eventkg export neo4j-import`` runs on a machine without Java. Figures: ``docs/performance.md``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from eventkg.graphstore.atomic import atomic_file, atomic_folder, ensure_free
from eventkg.graphstore.errors import StoreError
from eventkg.graphstore.ladybug.engine import max_offset, node_file_pages, table_pages
from eventkg.graphstore.ladybug.reads import counts as stored_counts
from eventkg.graphstore.model import DOUBLE, INT64, NODE_TYPES, REL_TYPES, STRING_LIST
from eventkg.progress import Progress

MANIFEST = "import.json"
ARRAY_DELIMITER = "\x1f"
ADMIN_ARRAY_DELIMITER = "U+001F"
ID_TYPE = "actual"  # the :ID numbers are Neo4j node record ids (see the module docstring)
#: the least bytes a node or edge took in the CSV files over the stores measured (docs/bad-day.md):
#: the floor of the folder's size the pre-export check asks the disk to have free
CSV_BYTES_PER_ROW = 32
LANES = 2  # files written side by side (see _write_all)
PAGE = 200_000  # rows per page of a node file; node offsets per query for a relationship file (their sources')
SPOOL = ".node-pages"  # in the import folder while it is written: each node table as the engine wrote it
NODE_NUMBER = "node-number"  # the column kind of an integer node id (``:ID``, ``:START_ID``, ``:END_ID``)
_HEADER_TYPE = {DOUBLE: "double", INT64: "long", STRING_LIST: "string[]"}
_ARROW_TYPE = {DOUBLE: pa.float64(), INT64: pa.int64(), NODE_NUMBER: pa.int64()}
#: progress callback: (what is being written, rows written in it so far, rows it will have)


def _header(name: str, ctype: str) -> str:
    kind = _HEADER_TYPE.get(ctype)
    return f"{name}:{kind}" if kind else name


def node_header(label: str) -> list[str]:
    """The CSV header of a label's node file."""
    props = NODE_TYPES[label].properties
    return [f":ID({label})", "id", "sources:string[]", *(_header(p, t) for p, t in props.items())]


def rel_header(rtype: str) -> list[str]:
    """The CSV header of a relationship type's file."""
    rel = REL_TYPES[rtype]
    return [f":START_ID({rel.source})", f":END_ID({rel.target})", "sources:string[]",
            *(_header(p, t) for p, t in rel.properties.items())]


def _csv_schema(header: list[str], kinds: list[str]) -> pa.Schema:
    return pa.schema([(h, _ARROW_TYPE.get(k, pa.string())) for h, k in zip(header, kinds, strict=True)])


def _connection(store: Any):
    conn = getattr(store, "connection", None)
    if conn is None or not hasattr(conn, "execute"):
        raise StoreError(f"export neo4j-import reads an embedded LadybugDB store; {store.url} is not one")
    return conn


def _count(conn, cypher: str) -> int:
    return int(conn.execute(cypher).get_next()[0])


class _Checker:
    """Finds what the importer's CSV options must allow (line breaks), or cannot carry."""

    def __init__(self) -> None:
        self.multiline: set[str] = set()

    def column(self, file: str, name: str, col: pa.Array, *, array: bool, where: Callable[[int], str]) -> pa.Array:
        """``col`` as the CSV column: arrays joined with U+001F, strings checked."""
        if array:
            flat = pc.list_flatten(col)
            self._refuse_delimiter(file, name, flat, col, where)
            col = pc.binary_join(col, ARRAY_DELIMITER)
        if len(col) and pc.any(pc.match_substring_regex(col, "[\n\r]")).as_py():
            self.multiline.add(file)
        return col

    @staticmethod
    def _refuse_delimiter(file: str, name: str, flat: pa.Array, lists: pa.Array, where: Callable[[int], str]) -> None:
        if not len(flat) or not pc.any(pc.match_substring(flat, ARRAY_DELIMITER)).as_py():
            return
        bad = pc.list_parent_indices(lists).to_numpy()[pc.match_substring(flat, ARRAY_DELIMITER).to_numpy(
            zero_copy_only=False)]
        raise StoreError(f"{file}: {where(int(bad[0]))}: {name} holds U+001F, the importer's array delimiter")


def _sources_list(col: pa.Array) -> pa.Array:
    """The store's comma-joined ``sources`` strings as lists (empty string: empty list)."""
    col = pc.fill_null(col, "")
    lists = pc.split_pattern(col, ",")
    empty = pc.equal(col, "")
    return pc.if_else(empty, pa.scalar([], pa.list_(pa.string())), lists)


def _node_pages(conn, label: str, base: int, spool: Path) -> Iterator[pa.Table]:
    """Pages of a label's nodes, each with its node number (offset + ``base``) first, from one file the
    engine writes in ``spool`` (a node table read by offset pages would cost the square of its size)."""
    cols = ["id", "sources", *NODE_TYPES[label].properties]
    ret = ", ".join([f"offset(id(n)) + {base} AS nid", *(f"n.`{c}` AS `{c}`" for c in cols)])
    return node_file_pages(conn, label, ret, spool / f"{label}.parquet", page=PAGE)


def _rel_pages(conn, rtype: str, bases: dict[str, int]) -> Iterator[pa.Table]:
    """Pages of a type's edges, the node numbers of their ends first (pages of source offsets)."""
    rel = REL_TYPES[rtype]
    ends = [f"offset(id(a)) + {bases[rel.source]} AS src", f"offset(id(b)) + {bases[rel.target]} AS dst"]
    ret = ", ".join([*ends, *(f"e.`{c}` AS `{c}`" for c in ["sources", *rel.properties])])
    return table_pages(conn, rtype, ret, page=PAGE)


def _node_bases(conn) -> dict[str, int]:
    """Each label's first node number: labels end to end in ``NODE_TYPES`` order, by offset range."""
    bases, base = {}, 0
    for label in NODE_TYPES:
        bases[label] = base
        base += max_offset(conn, label) + 1
    return bases


def _node_namer(label: str) -> Callable[[pa.Table, int], str]:
    return lambda page, i: f"{label} {page.column(1)[i].as_py()!r}"


def _edge_namer(conn, rtype: str, bases: dict[str, int]) -> Callable[[pa.Table, int], str]:
    """Names row ``i`` of a page by its source's string id (one query, only on a refusal)."""
    source = REL_TYPES[rtype].source

    def name(page: pa.Table, i: int) -> str:
        offset = page.column(0)[i].as_py() - bases[source]
        sid = conn.execute(f"MATCH (a:{source}) WHERE offset(id(a)) = {offset} RETURN a.id").get_next()[0]
        return f"{rtype} edge from {sid!r}"

    return name


def _write_file(
    path: Path,
    header: list[str],
    kinds: list[str],
    pages: Iterator[pa.Table],
    checker: _Checker,
    namer: Callable[[pa.Table, int], str],
    total: int,
    progress: Progress | None,
) -> int:
    """Write one CSV file (header + every page); the number of rows written."""
    schema = _csv_schema(header, kinds)
    written = 0
    options = pacsv.WriteOptions(include_header=True, batch_size=65_536)
    with pacsv.CSVWriter(str(path), schema, write_options=options) as writer:
        for page in pages:
            if not page.num_rows:
                continue

            def where(i: int, page: pa.Table = page) -> str:
                return namer(page, i)

            arrays = []
            for j, (name, kind) in enumerate(zip(header, kinds, strict=True)):
                col = page.column(j).combine_chunks()
                if name == "sources:string[]":
                    col = _sources_list(col)
                if kind == STRING_LIST or name == "sources:string[]":
                    col = checker.column(path.name, name, col, array=True, where=where)
                elif kind in _ARROW_TYPE:
                    col = col.cast(_ARROW_TYPE[kind])
                else:
                    col = checker.column(path.name, name, col.cast(pa.string()), array=False, where=where)
                arrays.append(col)
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            written += page.num_rows
            if progress:
                progress(path.name, written, total)
    return written


def _jobs(conn, out: Path, checker: _Checker, progress: Progress | None) -> list[tuple[str, str, int, Callable]]:
    """One job per non-empty label and type: (label or type, file name, rows, write(conn) -> rows);
    node files are read through ``out / SPOOL``, which the caller makes and removes."""
    jobs = []
    bases = _node_bases(conn)
    for label, kind in NODE_TYPES.items():
        total = _count(conn, f"MATCH (n:{label}) RETURN count(*)")
        if total:
            name = f"nodes-{label}.csv"
            kinds = [NODE_NUMBER, "id", STRING_LIST, *kind.properties.values()]

            def write(c, label=label, name=name, kinds=kinds, total=total) -> int:
                return _write_file(out / name, node_header(label), kinds,
                                   _node_pages(c, label, bases[label], out / SPOOL), checker, _node_namer(label),
                                   total, progress)

            jobs.append((label, name, total, write))
    for rtype, rel in REL_TYPES.items():
        total = _count(conn, f"MATCH ()-[e:{rtype}]->() RETURN count(*)")
        if total:
            name = f"rels-{rtype}.csv"
            kinds = [NODE_NUMBER, NODE_NUMBER, STRING_LIST, *rel.properties.values()]

            def write(c, rtype=rtype, name=name, kinds=kinds, total=total) -> int:
                return _write_file(out / name, rel_header(rtype), kinds, _rel_pages(c, rtype, bases), checker,
                                   _edge_namer(c, rtype, bases), total, progress)

            jobs.append((rtype, name, total, write))
    return jobs


def _lanes(jobs: list, width: int) -> list[list]:
    """``jobs`` dealt to ``width`` lanes, biggest first onto the least loaded lane (rows as the load)."""
    lanes: list[list] = [[] for _ in range(width)]
    load = [0] * width
    for job in sorted(jobs, key=lambda j: -j[2]):
        k = load.index(min(load))
        lanes[k].append(job)
        load[k] += job[2]
    return [lane for lane in lanes if lane]


def _write_all(store: Any, conn: Any, out: Path, checker: _Checker, progress: Progress | None
               ) -> tuple[dict, dict, dict]:
    """Every non-empty label's and type's file; (rows per name, node files, relationship files).

    Why two lanes, each with its own connection to the database: one file at a time kept one
    core busy (a LadybugDB page query, then Arrow's CSV writer, both outside the GIL); two
    lanes at 1M events / 4.5M edges on 2 cores: 6.7 s -> 4.3 s (same rows; their order within a file
    is whatever the page queries return, which the importer does not care about).
    """
    jobs = _jobs(conn, out, checker, progress)
    lanes = _lanes(jobs, LANES if hasattr(store, "open_connection") else 1)
    written: dict[str, int] = {}

    def run(lane: list, c) -> None:
        for key, _name, _total, write in lane:
            written[key] = write(c)

    if len(lanes) > 1:
        from concurrent.futures import ThreadPoolExecutor

        extra = [store.open_connection() for _ in lanes[1:]]
        try:
            with ThreadPoolExecutor(len(lanes)) as pool:
                futures = [pool.submit(run, lane, c) for lane, c in zip(lanes, [conn, *extra], strict=True)]
                for f in futures:
                    f.result()
        finally:
            for c in extra:
                c.close()
    else:
        run(jobs, conn)
    counts = {key: written[key] for key, *_ in jobs}  # in NODE_TYPES / REL_TYPES order, as before
    nodes = {key: name for key, name, *_ in jobs if key in NODE_TYPES}
    rels = {key: name for key, name, *_ in jobs if key in REL_TYPES}
    return counts, nodes, rels


def export_neo4j_import(store: Any, out: str | Path, *, progress: Progress | None = None) -> dict[str, int]:
    """Write the import folder for the graph in ``store`` (a LadybugStore); rows per label/type.

    The folder appears complete or not at all (:func:`~eventkg.graphstore.atomic.atomic_folder`):
    every file is written beside ``out`` first, then moved in; files of an earlier export in
    ``out`` are replaced, the manifest last. A disk with less free than the folder's floor
    (:data:`CSV_BYTES_PER_ROW` a row) is refused before the work; a full disk is one line and
    leaves ``out`` as it was.
    """
    conn = _connection(store)  # refuses a store that is not an embedded one before touching ``out``
    out = Path(out)
    stored = stored_counts(conn)
    rows = sum(stored["nodes"].values()) + sum(stored["edges"].values())
    ensure_free(out, rows * CSV_BYTES_PER_ROW, f"export neo4j-import {out}",  # a floor: refused before the work
                detail=f"at least {CSV_BYTES_PER_ROW} bytes for each of its {rows:,} nodes and edges")
    checker = _Checker()
    with atomic_folder(out, last=(MANIFEST,), what=f"cannot write the import folder {out}") as tmp:
        try:
            (tmp / SPOOL).mkdir(exist_ok=True)
            counts, nodes, rels = _write_all(store, conn, tmp, checker, progress)
        finally:
            shutil.rmtree(tmp / SPOOL, ignore_errors=True)
        manifest = build_manifest(nodes, rels, multiline=checker.multiline, counts=counts)
        (tmp / "import.sh").write_text(
            "#!/bin/sh\n# Build a new Neo4j database from these files (stop the server first; the database must be "
            "new or empty).\ncd \"$(dirname \"$0\")\" && exec neo4j-admin database import full "
            + " ".join(shlex.quote(a) for a in _arguments(manifest, "")[:-1])
            + ' "${1:-neo4j}"\n'
        )
        os.chmod(tmp / "import.sh", 0o755)
        write_manifest(tmp, manifest)
    return counts


def build_manifest(nodes: dict[str, str], relationships: dict[str, str], *, multiline: Iterable[str] = (),
                   counts: dict[str, int] | None = None) -> dict[str, Any]:
    """The ``import.json`` of an export: its files per label and type, and the importer's CSV options."""
    return {
        "format": "neo4j-admin database import full",
        "nodes": nodes,
        "relationships": relationships,
        "array_delimiter": ADMIN_ARRAY_DELIMITER,
        "id_type": ID_TYPE,
        "multiline": sorted(multiline),
        "counts": counts or {},
    }


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Write ``import.json`` into ``out`` at once (a temporary file renamed over): the folder's last file."""
    with atomic_file(out / MANIFEST) as fh:
        fh.write(json.dumps(manifest, indent=2) + "\n")


def _arguments(manifest: dict[str, Any], database: str) -> list[str]:
    args = [f"--nodes={label}={name}" for label, name in manifest["nodes"].items()]
    args += [f"--relationships={rtype}={name}" for rtype, name in manifest["relationships"].items()]
    args += [f"--array-delimiter={manifest['array_delimiter']}"]
    if manifest.get("id_type"):  # exports before integer ids have none: string ids, the importer's default
        args += [f"--id-type={manifest['id_type']}"]
    if manifest.get("multiline"):
        args += ["--multiline-fields=true"]
    return [*args, database]


def admin_arguments(folder: str | Path, *, database: str = "neo4j") -> list[str]:
    """The ``neo4j-admin database import full`` arguments for an export folder (run in that folder)."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        why = "no such folder" if not folder.is_dir() else f"no {MANIFEST} (not an export, or an unfinished one)"
        raise StoreError(f"cannot import {folder}: {why}; write it with 'eventkg export neo4j-import {folder}'")
    try:
        manifest = json.loads(path.read_text())
        files = [*manifest["nodes"].values(), *manifest["relationships"].values()]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StoreError(f"cannot import {folder}: {MANIFEST} is not an eventkg export manifest ({exc})") from None
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise StoreError(f"cannot import {folder}: {', '.join(missing)} missing")
    if not manifest["nodes"]:
        raise StoreError(f"cannot import {folder}: the export holds no nodes")
    return _arguments(manifest, database)
