"""A bad day at the command line: a full disk under every output, odd paths, plain mistakes.

Each case runs ``python -m eventkg`` as a user would, onto a real small file system where a disk
must fill (``small_disk``: a tmpfs). What must hold: one line ``error: ...`` on stderr, exit 2, no
traceback; no output file or folder left (not a cut one, no temporary one); a mistake refused
before the work (the work's first notice never printed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from tests.support.paths import SAMPLES
from tests.support.small_disk import entries, fill

WORK_STARTED = "reading the event graph"  # the questions command's first notice of its work


def eventkg(*args: str, cwd: Path | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "eventkg", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The single ``error:`` line of a failed command (exit 2, no traceback), holding each needle."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def ev2_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the bundled EV² sample (questions, events, relations)."""
    path = tmp_path_factory.mktemp("ev2") / "ev2.lbug"
    with open_store(str(path)) as store:
        ingest_source(store, "ev2", SAMPLES / "ev2")
    return path


@pytest.fixture
def full_disk(small_disk) -> Path:
    """A 1 MiB tmpfs with 8 KiB left: room for a small file, not for any output of these commands."""
    disk = small_disk(1)
    fill(disk, leave=8192)
    return disk


def assert_nothing_left(disk: Path) -> None:
    assert entries(disk) == ["filler"], entries(disk)


# --- point 1: every output written whole or not at all ---------------------------------------

@pytest.mark.parametrize("args", [
    ["questions", "cec", "-n", "100", "--out", "{disk}/q.jsonl"],
    ["eval", "ev2-cec", "--model", "random", "--out", "{disk}/ev"],
], ids=["questions", "eval"])
def test_output_onto_a_full_disk(ev2_store: Path, full_disk: Path, args: list[str]) -> None:
    proc = eventkg("--store", str(ev2_store), *(a.format(disk=full_disk) for a in args))
    line = one_line_error(proc, "disk full", str(full_disk))
    assert " free on the file system of " in line
    assert_nothing_left(full_disk)


#: each export whose size is known before it writes: its arguments, the output under {out}
EXPORTS = {
    "rdf-ttl": ["export", "rdf", "{out}/g.ttl"],
    "rdf-nt": ["export", "rdf", "{out}/g.nt"],
    "graphml": ["export", "graphml", "{out}/g.graphml"],
    "lm-eval": ["export", "lm-eval", "{out}/lm"],
    "neo4j-import": ["export", "neo4j-import", "{out}/n4"],
}


def run_export(store: Path, name: str, out: Path) -> subprocess.CompletedProcess[str]:
    return eventkg("--store", str(store), *(a.format(out=out) for a in EXPORTS[name]))


def tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def export_sizes(ev2_store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """The bytes each export of the store writes on a disk with room (the reference for the disks below)."""
    sizes = {}
    for name in EXPORTS:
        out = tmp_path_factory.mktemp(name)
        assert run_export(ev2_store, name, out).returncode == 0
        sizes[name] = tree_bytes(out)
    return sizes


@pytest.mark.parametrize("name", EXPORTS)
def test_an_export_the_disk_cannot_hold_is_refused_before_it_writes(ev2_store: Path, small_disk, export_sizes,
                                                                      name: str) -> None:
    disk = small_disk(4)
    fill(disk, leave=export_sizes[name] // 10)
    line = one_line_error(run_export(ev2_store, name, disk), "disk full", "needs about", str(disk))
    assert "nothing was written" in line, line
    assert_nothing_left(disk)


@pytest.mark.parametrize("name", ["rdf-ttl", "rdf-nt", "graphml", "neo4j-import"])
def test_an_export_that_fills_the_disk_anyway(ev2_store: Path, small_disk, export_sizes, name: str) -> None:
    """Room for the export's floor, not for the whole file: it runs out while writing."""
    disk = small_disk(4)
    fill(disk, leave=export_sizes[name] * 9 // 10)
    line = one_line_error(run_export(ev2_store, name, disk), "disk full", str(disk))
    assert " free on the file system of " in line and "needs about" not in line, line
    assert_nothing_left(disk)


@pytest.mark.parametrize("name", EXPORTS)
def test_an_export_with_room_is_not_refused(ev2_store: Path, small_disk, export_sizes, name: str) -> None:
    """The check asks for no more than the export writes (a little room over it is enough)."""
    disk = small_disk(4)
    fill(disk, leave=export_sizes[name] * 11 // 10 + (64 << 10))
    assert run_export(ev2_store, name, disk).returncode == 0
    written = tree_bytes(disk) - (disk / "filler").stat().st_size
    assert abs(written - export_sizes[name]) <= 1024, (written, export_sizes[name])  # lm-eval's configs name their folder


def test_an_old_output_survives_a_full_disk(ev2_store: Path, small_disk) -> None:
    """A file already at the target is replaced whole or kept: a full disk keeps it byte for byte."""
    disk = small_disk(1)
    old = disk / "g.ttl"
    old.write_bytes(b"<a> <b> <c> .\n")
    fill(disk, leave=8192)
    one_line_error(eventkg("--store", str(ev2_store), "export", "rdf", str(old)), "disk full")
    assert old.read_bytes() == b"<a> <b> <c> .\n"
    assert entries(disk) == ["filler", "g.ttl"]


def test_audit_json_and_plot_onto_a_full_disk(small_disk) -> None:
    disk = small_disk(1)
    fill(disk)  # no page left: the findings are a few KiB
    for flag, name in (("--json", "a.json"), ("--plot", "a.png")):
        proc = eventkg("audit", str(SAMPLES / "ev2" / "S_CEC.jsonl"), "--no-similarity", flag, str(disk / name))
        one_line_error(proc, "disk full", name)
        assert_nothing_left(disk)


def test_outputs_written_whole(ev2_store: Path, tmp_path: Path) -> None:
    """On a disk with room the same commands leave their files complete and no temporary name."""
    out = tmp_path / "out"
    out.mkdir()
    assert eventkg("--store", str(ev2_store), "questions", "cec", "-n", "5", "--out", str(out / "q.jsonl")).returncode == 0
    assert eventkg("--store", str(ev2_store), "export", "neo4j-import", str(out / "n4")).returncode == 0
    assert eventkg("--store", str(ev2_store), "export", "lm-eval", str(out / "lm")).returncode == 0
    rows = [json.loads(x) for x in (out / "q.jsonl").read_text().splitlines()]
    assert len(rows) == 5 and all("choices" in r for r in rows)
    manifest = json.loads((out / "n4" / "import.json").read_text())
    assert all((out / "n4" / name).is_file() for name in manifest["nodes"].values())
    assert (out / "n4" / "import.sh").is_file()
    assert (out / "lm" / "README.md").is_file()
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".")]
    assert not leftovers, leftovers


# --- point 3: messages are text, not markup -----------------------------------------------------

@pytest.mark.parametrize("odd", ["a[/x]b", "a[bold]b", "[red]c[/red]"])
def test_store_path_with_brackets_printed_as_given(tmp_path: Path, odd: str) -> None:
    store = tmp_path / odd / "s.lbug"
    line = one_line_error(eventkg("--store", str(store), "stats"))
    assert str(store) in line, line


def test_model_spec_with_brackets_in_the_message(ev2_store: Path, tmp_path: Path) -> None:
    line = one_line_error(eventkg("--store", str(ev2_store), "eval", "ev2-cec", "--model", "openai:m@notaurl",
                                  cwd=tmp_path), "notaurl")
    assert "http(s)://host[:port][/v1]" in line  # the message's own brackets, kept


# --- point 4: plain mistakes are one line, and refused before the work ---------------------------

def test_questions_negative_seed(ev2_store: Path) -> None:
    proc = eventkg("--store", str(ev2_store), "questions", "cec", "--seed", "-1")
    one_line_error(proc, "--seed -1")
    assert WORK_STARTED not in proc.stderr


@pytest.mark.parametrize("where", ["missing", "folder"])
def test_questions_out_refused_before_the_work(ev2_store: Path, tmp_path: Path, where: str) -> None:
    out = tmp_path / "no-such-folder" / "q.jsonl" if where == "missing" else tmp_path
    proc = eventkg("--store", str(ev2_store), "questions", "cec", "-n", "5", "--out", str(out))
    one_line_error(proc, str(out))
    assert WORK_STARTED not in proc.stderr


def test_audit_json_onto_a_folder(tmp_path: Path) -> None:
    proc = eventkg("audit", str(SAMPLES / "ev2" / "S_CEC.jsonl"), "--no-similarity", "--json", str(tmp_path))
    one_line_error(proc, str(tmp_path), "folder")


def test_export_graphml_onto_a_folder(ev2_store: Path, tmp_path: Path) -> None:
    target = tmp_path / "sub.graphml"
    target.mkdir()
    one_line_error(eventkg("--store", str(ev2_store), "export", "graphml", str(target)), str(target), "folder")


@pytest.mark.parametrize("name", ["S_CEC.jsonl", "S_CRR.jsonl"])
def test_audit_of_one_question(tmp_path: Path, name: str) -> None:
    one = tmp_path / name
    one.write_text((SAMPLES / "ev2" / name).read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    one_line_error(eventkg("audit", str(one), "--no-similarity"), str(one), "1 question")


@pytest.mark.parametrize("command", [["stats"], ["export", "rdf", "{tmp}/g.ttl"], ["eval", "ev2-cec", "--model", "random"]])
def test_empty_store_file_named_as_such(tmp_path: Path, command: list[str]) -> None:
    store = tmp_path / "s.lbug"
    store.touch()
    proc = eventkg("--store", str(store), *(c.format(tmp=tmp_path) for c in command), cwd=tmp_path)
    one_line_error(proc, str(store), "empty (0 bytes)")


def test_store_with_a_changed_header_byte(ev2_store: Path, tmp_path: Path) -> None:
    """Byte 12 of the header (a length the engine reads) flipped: ``std::bad_alloc`` or a bad length."""
    for flip in (0x01, 0x10, 0xFF):
        damaged = tmp_path / f"damaged-{flip}.lbug"
        shutil.copy(ev2_store, damaged)
        data = bytearray(damaged.read_bytes())
        data[12] ^= flip
        damaged.write_bytes(bytes(data))
        one_line_error(eventkg("--store", str(damaged), "stats"), str(damaged), "damaged")


def test_store_in_a_folder_this_user_cannot_enter(ev2_store: Path, tmp_path: Path) -> None:
    """As root without the capabilities that bypass permissions (``setpriv``), the folder owned by
    another user with mode 0700: ``Path.exists()`` raises PermissionError."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("no setpriv (util-linux) to run the command without root's permission bypass")
    locked = tmp_path / "locked"
    locked.mkdir()
    shutil.copy(ev2_store, locked / "s.lbug")
    shutil.chown(locked, 65534, 65534)
    locked.chmod(0o700)
    drop = (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search")
    proc = eventkg("--store", str(locked / "s.lbug"), "stats", prefix=drop)
    if proc.returncode != 0 and "setpriv" in proc.stderr:
        pytest.skip(f"setpriv cannot drop capabilities here: {proc.stderr.strip()}")
    one_line_error(proc, "permission denied", str(locked))


# --- point 5: the read-only passthrough writes no file -------------------------------------------

@pytest.mark.parametrize("statement", [
    "COPY (MATCH (e:Event) RETURN e.text) TO '{out}/rows.csv'",
    "copy (MATCH (e:Event) RETURN e.id) to '{out}/ids.parquet'",
    "EXPORT DATABASE '{out}/dump'",
    "MATCH (e:Event) RETURN count(*) AS n; COPY (MATCH (e:Event) RETURN e.id) TO '{out}/x.csv'",
])
def test_read_only_cypher_writes_no_file(ev2_store: Path, tmp_path: Path, statement: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    proc = eventkg("--store", str(ev2_store), "cypher", statement.format(out=out))
    one_line_error(proc, "--write")
    assert entries(out) == []


def test_read_only_cypher_still_reads_text_that_says_copy(ev2_store: Path) -> None:
    proc = eventkg("--store", str(ev2_store), "cypher", "MATCH (e:Event) WHERE e.text = 'COPY x TO y' "
                   "RETURN count(*) AS n", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"n": 0}]
