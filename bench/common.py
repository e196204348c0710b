
"""What the bench scripts share: child processes measured on their own, the generated ASER files, the
engine's own bulk load (the floor of an ingest), and the CLI's question runs.

Every script runs from the repository root as ``python -m bench.<script>``; a script measures a step by
running ``python -m bench.<script> --child ...`` in a process of its own (:func:`run_child`), so its peak
RSS (``wait4``'s ``ru_maxrss``) is that step's alone. Scripts import this module, never each other.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from eventkg import ingest_source
from eventkg.graphstore.model import FAMILIES, VAGUE, family_of
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.induction.table1 import CODE
from eventkg.queries.questions.rows import GeneratedQuestion

ROOT = Path(__file__).resolve().parent.parent


def default_workdir(name: str) -> Path:
    """A folder for kept bench files under the system's temporary folder (``$TMPDIR``)."""
    return Path(tempfile.gettempdir()) / name


def cpu_seconds() -> float:
    """CPU time of this process so far, all threads (the engine's included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_of(pid: int) -> float:
    """A running process's peak resident size (``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_child(module: str, args: list[str], env: dict[str, str] | None = None) -> tuple[int, float, str, float]:
    """Run ``python -m module args`` from the repository root: (exit code, wall seconds, stdout, peak RSS
    in MiB from ``wait4``, which counts the processes it waited for)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE, cwd=ROOT, env=env)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), time.perf_counter() - start, stdout.decode(), usage.ru_maxrss / 1024


def child_result(stdout: str, peak_mb: float) -> dict:
    """The JSON line a child printed last, with its peak RSS (unless it measured its own)."""
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_mb"] = result.get("peak_rss_mb") or peak_mb
    return result


def measure_child(module: str, args: list[str], may_die: bool = False) -> dict:
    """``python -m module --child args`` measured: its JSON line and peak RSS; with ``may_die``, only its
    exit code, wall seconds and peak RSS (a child killed on purpose prints nothing)."""
    code, wall, stdout, peak = run_child(module, ["--child", *args])
    if may_die:
        return {"exit": code, "seconds": wall, "peak_rss_mb": peak}
    if code != 0:
        raise SystemExit(f"{module} --child {' '.join(args)} failed with exit code {code}")
    return child_result(stdout, peak)


def timed(cmd: list[str], **kw) -> dict:
    """Run ``cmd`` to its end: wall and CPU seconds and peak RSS (MiB) of it and what it waited for."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, **kw)  # stderr: the caller's (progress lines)
    stdout = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {os.waitstatus_to_exitcode(status)})")
    return {"seconds": time.perf_counter() - t0, "cpu_s": ru.ru_utime + ru.ru_stime,
            "peak_rss_mb": ru.ru_maxrss / 1024, "stdout": stdout.decode()}


def disk_usage(folder: Path, part_of: Callable[[Path], str], parts: tuple[str, ...]) -> dict[str, int]:
    """Bytes the disk gives the files under ``folder`` now (``st_blocks``), summed per ``part_of(path)``
    (one of ``parts``); files that vanish meanwhile count 0."""
    out = dict.fromkeys(parts, 0)
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            try:
                out[part_of(path)] += path.stat().st_blocks * 512
            except OSError:
                continue
    return out


def fs_used(folder: Path) -> int:
    """Bytes in use on the file system of ``folder`` (files deleted but still open included)."""
    st = os.statvfs(folder)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class DiskSampler(threading.Thread):
    """:func:`disk_usage` of a folder every ``period`` seconds until stopped: the peak total and its
    split (``peak``), each part's own peak (``part_peaks``), and the file system's used bytes at their
    peak (``fs_peak``: this work's alone where the folder is a file system of its own)."""

    def __init__(self, folder: Path, part_of: Callable[[Path], str], parts: tuple[str, ...], period: float) -> None:
        super().__init__(daemon=True)
        self.folder, self.part_of, self.parts, self.period = folder, part_of, parts, period
        self.peak = dict.fromkeys(parts, 0)
        self.part_peaks = dict.fromkeys(parts, 0)
        self.fs_peak = 0
        self.samples = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while True:
            now = disk_usage(self.folder, self.part_of, self.parts)
            self.fs_peak = max(self.fs_peak, fs_used(self.folder))
            self.samples += 1
            if sum(now.values()) > sum(self.peak.values()):
                self.peak = now
            self.part_peaks = {k: max(v, now[k]) for k, v in self.part_peaks.items()}
            if self._halt.wait(self.period):
                return

    def stop(self) -> None:
        self._halt.set()
        self.join()


def fresh(store: Path) -> Path:
    """``store`` with nothing of an earlier run left (the folder or file and its ``.wal`` and the like)."""
    shutil.rmtree(store, ignore_errors=True)
    for p in [store, *store.parent.glob(store.name + ".*")]:
        if p.is_file():
            p.unlink()
    return store


def parse_sizes(text: str, scale: float = 1.0) -> list[tuple[int, int]]:
    """``"1000000,330000x1000000"`` -> [(eventualities, relations)]: N means N and 3N; times ``scale``."""
    out = []
    for size in text.split(","):
        ev, _, rel = size.partition("x")
        n_ev = int(int(ev) * scale)
        out.append((n_ev, int(int(rel) * scale) if rel else 3 * n_ev))
    return out


def generated_kg(work: Path, n_ev: int, n_rel: int, seed: int) -> Path:
    """The toolkit-shaped KG.db of this size in ``work``, generated when it is not there yet."""
    kg = work / f"KG_aser_shape_{n_ev}_{n_rel}_s{seed}.db"
    if kg.exists():
        return kg
    t = time.perf_counter()
    # in a process of its own: a child's peak RSS starts from its parent's (Linux keeps
    # the high-water mark of the forked copy across exec), so this one must stay small
    code = (
        "import sys; from tests.support.aser_shape import make_aser_shape_kg as m; "
        "m(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), seed=int(sys.argv[4]))"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(kg.with_suffix(".part")), str(n_ev), str(n_rel), str(seed)],
        check=True,
        cwd=ROOT,
    )
    kg.with_suffix(".part").rename(kg)
    print(f"# generated {kg.name} ({kg.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s", flush=True)
    return kg


class Sink:
    """A store stand-in for the loader: discards what it hands over, or keeps its tables (for the engine floor)."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.tables: dict[str, list] = {}

    def write_batch(self, batch):
        from eventkg.graphstore.base import WriteResult

        if self.keep:
            for name, table in [*batch.node_tables.items(), *batch.edge_tables.items()]:
                self.tables.setdefault(name, []).append(table)
        return WriteResult()

    def bulk_load(self):
        return contextlib.nullcontext(self)

    def begin_ingest(self, what: str) -> None:
        pass

    def end_ingest(self, what: str, *, completed: bool) -> None:
        pass


def engine_tables(kg: str, folder: str) -> None:
    """Write the rows the ingest writes, typed and deduplicated by key as the store does, one Parquet
    file per table in ``folder`` (run in a process of its own, so the engine floor's peak RSS is the engine's)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from eventkg.graphstore.model import NODE_TYPES, REL_TYPES
    from eventkg.graphstore.tables import conform_table, dedupe

    sink = Sink(keep=True)
    ingest_source(sink, "aser", kg)
    Path(folder).mkdir(parents=True, exist_ok=True)
    for name in [*NODE_TYPES, *REL_TYPES]:
        if name in sink.tables:
            kind, keys = (NODE_TYPES[name], ("id",)) if name in NODE_TYPES else (REL_TYPES[name], ("src", "dst"))
            rows = conform_table(name, pa.concat_tables(sink.tables.pop(name)), keys, kind.properties)
            rows = dedupe(rows, keys, kind.properties)[0]  # repeated keys merge, as in the store
            pq.write_table(rows, str(Path(folder) / f"{name}.parquet"), compression="none", row_group_size=131_072)
            rows = None


def write_engine_tables(kg: Path, folder: Path) -> None:
    """:func:`engine_tables` in a process of its own (a child's peak RSS counts its children's, so the
    floor's process must not be the one that built its tables)."""
    code = "import sys; from bench.common import engine_tables; engine_tables(sys.argv[1], sys.argv[2])"
    subprocess.run([sys.executable, "-c", code, str(kg), str(folder)], check=True, cwd=ROOT)


def tables_folder(store: Path) -> Path:
    """Where the engine floor's prebuilt tables wait (beside its store)."""
    return store.with_suffix(".tables")


def copy_each_table(store_path: str, folder: Path, pool_bytes: int) -> Iterator[dict]:
    """COPY each table's Parquet file in ``folder`` into a fresh database at ``store_path`` (a
    ``pool_bytes`` buffer pool, 0 for the engine's default), nodes first, each COPY followed by a
    CHECKPOINT, the database kept open: per table its name, whether it is a rel table, its rows and
    the seconds of the COPY and of the checkpoint, and the CPU-s of both."""
    import ladybug
    import pyarrow.parquet as pq

    from eventkg.graphstore.ladybug.engine import schema_statements
    from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

    db = ladybug.Database(store_path, buffer_pool_size=pool_bytes)
    conn = ladybug.Connection(db)
    try:
        conn.execute("CALL auto_checkpoint=false")
        for stmt in schema_statements():
            conn.execute(stmt)
        for name in [*NODE_TYPES, *REL_TYPES]:
            path = folder / f"{name}.parquet"
            if not path.exists():
                continue
            start, cpu = time.perf_counter(), cpu_seconds()
            conn.execute(f"COPY {name} FROM '{path}'")
            copied = time.perf_counter()
            conn.execute("CHECKPOINT")
            yield {"table": name, "rel": name in REL_TYPES, "rows": pq.ParquetFile(str(path)).metadata.num_rows,
                   "copy": copied - start, "checkpoint": time.perf_counter() - copied, "cpu": cpu_seconds() - cpu}
    finally:
        conn.close()
        db.close()


def questions_cli_runs(store: Path, n: int, seed: int, pythonpath: str | None = None,
                       task: str = "cec") -> tuple[list[dict], bytes]:
    """The CLI's ``questions TASK --level schema`` (``--negatives random`` for CEC) on ``store``, each
    run its own process: first with the kept event graph dropped (cold: read from the engine and kept),
    then with it (warm: memory-mapped). Wall and CPU seconds and peak RSS of that process (``os.wait4``),
    the 1-minute load average before and after (timings on a busy machine are not comparable).
    ``pythonpath``: run another checkout of eventkg (``PYTHONPATH``, e.g. a folder holding an
    ``eventkg`` link to a ``git worktree`` of an earlier commit). Also gives the cold run's output."""
    runs, outs = [], []
    for mode in ("cold", "warm"):
        out = store.with_name(f"{store.name}.questions-{mode}.jsonl")
        extra = ["--negatives", "random"] if task == "cec" else []
        cmd = [sys.executable, "-m", "eventkg", "--store", str(store), "questions", task, "--level", "schema",
               "-n", str(n), "--seed", str(seed), *extra, "--out", str(out)]
        runs.append(_timed_process(cmd, mode, pythonpath, drop_graph=store if mode == "cold" else None))
        outs.append(out.read_bytes())
        out.unlink()
    runs[1]["same_as_cold"] = outs[0] == outs[1]
    return runs, outs[0]


_READ_GRAPH = """
import sys
from eventkg.graphstore import open_store
from eventkg.queries.graph.csr import EventCSR
with open_store(sys.argv[1], read_only=True) as s:
    EventCSR.from_store(s)
"""


def graph_read_run(store: Path, pythonpath: str | None = None) -> dict:
    """The floor of a cold question run, in its own process: the event graph read out of the engine into
    the arrays the generator walks (the kept copy dropped first), nothing drawn."""
    cmd = [sys.executable, "-c", _READ_GRAPH, str(store)]
    return _timed_process(cmd, "graph read", pythonpath, drop_graph=store)


def _timed_process(cmd: list[str], mode: str, pythonpath: str | None, drop_graph: Path | None) -> dict:
    if drop_graph is not None:  # where the event graph is kept beside the store, any version
        shutil.rmtree(f"{drop_graph}.faiss/event_graph", ignore_errors=True)
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/", env=env)
    _, status, ru = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"{' '.join(cmd)} failed ({status})")
    return {"mode": mode, "wall_s": time.perf_counter() - t0, "cpu_s": ru.ru_utime + ru.ru_stime,
            "peak_rss_mb": ru.ru_maxrss / 1024, "load": (load0, os.getloadavg()[0])}


def provable(idx: EventIndex, q: GeneratedQuestion, max_len: int = 4) -> bool:
    """The question follows from the graph, by the 4-step reach search (walks of at most ``max_len``, read both ways)."""
    row = q.row
    pos = {name: idx.csr.position(sid) for name, sid in q.names.items()}
    if not all(idx.has_triple(pos[h], r, pos[t]) for h, r, t in row["context_tpl"]):
        return False
    e0, rel = pos[row["e0"]], row["rel"]
    if q.task == "CEC":
        fam = FAMILIES[family_of(rel)]
        mask = (1 << CODE[fam[0]]) | (1 << CODE[fam[1]])
        reach = idx.reach(e0, max_len, mask)
        return bool(reach.get(pos[row["e1"]], 0) >> CODE[rel] & 1) and not any(
            reach.get(pos[z], 0) & mask for z in row["negative_chosen"])
    got = idx.reach(e0, max_len).get(pos[row["e1"]], 0)
    if rel == VAGUE:
        return got == 0
    fam = FAMILIES[family_of(rel)]
    return {r for r in fam if got >> CODE[r] & 1} == {rel}


def load_baseline(path: str | Path) -> Callable[..., Any]:
    """The ``retrieve`` of an older ``retrieve.py`` (``git show REV:queries/retrieval/retrieve.py``),
    loaded over the current modules: the 'before' a retrieval bench measures beside today's."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("eventkg_baseline_retrieve", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.retrieve
