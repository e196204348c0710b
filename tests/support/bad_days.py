"""Helpers of the bad-day tests (bad input to an ingest): the CLI run, a content digest of a store computed here
(every node and edge with its properties, through the store's public read API), and corrupted
copies of the bundled samples made in ``tmp_path``."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from eventkg.cli.app import app
from eventkg.graphstore import open_store
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
from tests.support.paths import SAMPLES

runner = CliRunner()


def ingest(store: Path, source: str, path: Path, *args: object):
    """``eventkg --store STORE ingest SOURCE PATH ARGS...`` through typer's runner."""
    return runner.invoke(app, ["--store", str(store), "ingest", source, str(path), *map(str, args)],
                         terminal_width=200)


def report_of(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def error_line(result) -> str:
    """The one line an ingest that failed printed (exit 2, no traceback)."""
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines
    return lines[0]


def digest(store: Path) -> str:
    """sha256 over every node of every label and every edge of every type, each as sorted JSON
    with all its properties; the empty string when there is no store."""
    if not store.exists():
        return ""
    h = hashlib.sha256()
    with open_store(str(store), read_only=True) as s:
        for label in sorted(NODE_TYPES):
            rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in s.iter_nodes(label))
            h.update(f"node {label} {len(rows)}\n".encode())
            for r in rows:
                h.update(r.encode() + b"\n")
        for rtype in sorted(REL_TYPES):
            rows = sorted(json.dumps(r, sort_keys=True, default=str) for r in s.iter_edges(rtype))
            h.update(f"edge {rtype} {len(rows)}\n".encode())
            for r in rows:
                h.update(r.encode() + b"\n")
    return h.hexdigest()


def nodes(store: Path, label: str) -> list[dict]:
    with open_store(str(store), read_only=True) as s:
        return list(s.iter_nodes(label))


def copy_sample(source: str, dest: Path) -> Path:
    """A fresh copy of the bundled sample folder of ``source`` at ``dest``."""
    shutil.copytree(SAMPLES / source, dest)
    return dest


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def set_line(path: Path, number: int, data: bytes | None) -> bytes:
    """Replace (or with None drop) the 1-based line ``number`` of ``path``; returns the old line."""
    lines = lines_of(path)
    old = lines[number - 1]
    if data is None:
        del lines[number - 1]
    else:
        lines[number - 1] = data if data.endswith(b"\n") else data + b"\n"
    path.write_bytes(b"".join(lines))
    return old


def edit_json_line(path: Path, number: int, **changes: object) -> dict:
    """Line ``number`` of a JSON-lines file with ``changes`` applied; returns the new row."""
    row = json.loads(lines_of(path)[number - 1])
    row.update(changes)
    set_line(path, number, json.dumps(row).encode())
    return row


def prefilled(tmp_path: Path) -> Path:
    """A store holding the EECKG sample, so "unchanged" means more than "still empty"."""
    store = tmp_path / "kg.lbug"
    report_of(ingest(store, "eeckg", SAMPLES / "eeckg", "--json"))
    return store
