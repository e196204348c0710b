
"""The capacity model's figures: every cost of ``docs/scale.md`` at several sizes in one run, each beside its floor.

    .venv/bin/python -m bench.capacity_bench --workdir DIR
    .venv/bin/python -m bench.capacity_bench --sizes 100000,300000 --workdir DIR   # a quick look

For each size (default 1M/3M, 3M/9M and 10M/30M, ``tests.support.aser_shape`` files, seed 11, made
in ``--workdir`` when missing) every step runs in a process of its own, measured on its own (wall
seconds, CPU seconds, peak RSS from ``wait4``, which counts the JVMs the step starts and waits for):

* ``scan``: a plain ``sqlite3`` scan of the ``KG.db`` (as ``bench.ingest_bench`` runs it), the ingest's floor;
* ``ingest``: ``ingest aser --map-events`` into a fresh embedded store; disk: the store;
* ``questions-cold`` / ``questions-warm``: 50,000 schema CEC questions from the CLI, first reading the
  event graph out of the engine, then from what that run kept beside the store;
* ``export``: ``eventkg export neo4j-import`` of that store; disk: the CSV folder;
* ``export-floor``: the engine's own ``COPY (MATCH ... RETURN ...) TO 'x.csv'`` of the same columns,
  one per table (no eventkg logic): what reading the store out costs;
* ``neo4j``: the folder into a new Neo4j database (``neo4j-admin database import full``), the
  server up and the store's schema created (the bulk path's last three steps); disk: the database;
  the server's own peak RSS (``VmHWM``) beside the step's;
* ``bolt`` (only when named: ~30 min at 10M/30M on 2 cores): ``ingest aser`` (45M edges at 10M/30M) through Bolt
  into a server on Neo4j's default memory (512 MB heap), its heap sampled with ``jstat -gc``: the peak
  used, and what a full collection leaves every ``LIVE_EVERY_S`` (flat when the server keeps nothing
  per edge written; `LIVE_EVERY_S` in the environment sets that period).

Then, per cost, the growth between consecutive sizes and the fitted exponent ``b`` of
``cost ~ events^b`` (least squares over every size, on log-log): 1.0 is linear. Figures go in
``docs/performance.md`` and ``docs/scale.md`` with the date, the commit and this command.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import (
    ROOT,
    default_workdir,
    fresh,
    generated_kg,
    measure_child,
    parse_sizes,
    peak_rss_of,
    questions_cli_runs,
    timed,
)
from eventkg import ingest_source

SIZES = "1000000,3000000,10000000"
STEPS = ("scan", "ingest", "questions-cold", "questions-warm", "export", "export-floor", "neo4j", "bolt")
DEFAULT_STEPS = STEPS[:-1]  # Bolt writes ~26K edges/s on 2 cores: ~30 min at 10M/30M, asked for by name
JSTAT_MS = 5000  # how often the Bolt step samples the server's heap
LIVE_EVERY_S = int(os.environ.get("LIVE_EVERY_S", 60))  # and how often it collects it in full to see what stays
QUESTIONS = 50_000


def du_mb(path: Path) -> float:
    """Bytes on disk under ``path`` (a file or a folder), in MB."""
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def child_step(step: str, *args: str) -> dict:
    """One of this script's own steps (``child``) in a process of its own: ``timed``'s figures and the
    JSON line it printed last."""
    got = timed([sys.executable, "-m", "bench.capacity_bench", "--child", step, *args], cwd=ROOT)
    got.update(json.loads(got.pop("stdout").strip().splitlines()[-1]))
    return got


def engine_export(store: str, out: str) -> dict:
    """The floor of ``export neo4j-import``: the engine writes each table's exported columns itself."""
    import ladybug

    from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

    db = ladybug.Database(store, read_only=True)
    conn = ladybug.Connection(db)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for label, node in NODE_TYPES.items():
        cols = ", ".join(["offset(id(n)) AS nid", *(f"n.`{c}` AS `{c}`" for c in ["id", "sources", *node.properties])])
        conn.execute(f"COPY (MATCH (n:{label}) RETURN {cols}) TO '{folder / label}.csv'")
    for rtype, rel in REL_TYPES.items():
        ends = ["offset(id(a)) AS src", "offset(id(b)) AS dst"]
        cols = ", ".join([*ends, *(f"e.`{c}` AS `{c}`" for c in ["sources", *rel.properties])])
        match = f"(a:{rel.source})-[e:{rtype}]->(b:{rel.target})"
        conn.execute(f"COPY (MATCH {match} RETURN {cols}) TO '{folder / rtype}.csv'")
    conn.close()
    db.close()
    return {"csv_mb": du_mb(folder)}


def neo4j_import(csv_dir: str, home: str) -> dict:
    """``csv_dir`` into a new Neo4j database under ``home``, the server up, the schema made; the figures."""
    from eventkg.graphstore.neo4j.server import launch as neo4j_server
    from eventkg.graphstore.neo4j.store import Neo4jStore

    neo4j_server.prepare()
    out = {}
    server = neo4j_server.start(heap=None, pagecache=None, home=Path(home), import_dir=Path(csv_dir))
    try:
        out["import_s"], out["up_s"] = server.timings["prepare_s"], server.timings["up_s"]
        t = time.perf_counter()
        store = Neo4jStore(server.url)
        out["schema_s"] = time.perf_counter() - t
        counts = store.counts()
        out["edges"] = sum(counts["edges"].values())
        store.close()
        out["server_peak_rss_mb"] = peak_rss_of(server.process.pid)
    finally:
        server.stop()
    out["database_mb"] = du_mb(Path(home) / "data")
    return out


def _jstat_gc(pid: int) -> dict[str, float]:
    """One ``jstat -gc`` sample of a JVM: KB by column ("-", a column the collector lacks, as 0)."""
    names, values = subprocess.run(["jstat", "-gc", str(pid)], capture_output=True, text=True).stdout.split("\n")[:2]
    return dict(zip(names.split(), (float(v) if v[:1].isdigit() else 0.0 for v in values.split()), strict=True))


class HeapSampler:
    """A running JVM's heap every ``JSTAT_MS`` (used, peak), and what survives a full collection every
    ``LIVE_EVERY_S`` (``jcmd GC.run``, then the old generation's used KB): the live set over time."""

    def __init__(self, pid: int, edges: Callable[[], int] | None = None) -> None:
        self.pid, self.used, self.live, self.edges = pid, [], [], edges
        self.t0, self.done = time.perf_counter(), threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        last_live = time.perf_counter()
        while not self.done.wait(JSTAT_MS / 1000):
            r = _jstat_gc(self.pid)
            self.used.append(sum(r[k] for k in ("S0U", "S1U", "EU", "OU")) / 1024)
            self.capacity = (r["S0C"] + r["S1C"] + r["EC"] + r["OC"]) / 1024
            if time.perf_counter() - last_live >= LIVE_EVERY_S:
                subprocess.run(["jcmd", str(self.pid), "GC.run"], capture_output=True)
                self.live.append((time.perf_counter() - self.t0, _jstat_gc(self.pid)["OU"] / 1024))
                last_live = time.perf_counter()
                written = self.edges() if self.edges else None
                print(f"# {self.live[-1][0]:.0f} s: {self.live[-1][1]:,.1f} MiB live after a full collection, heap "
                      f"used peak {max(self.used):,.1f} MiB, {written} edges stored", file=sys.stderr, flush=True)

    def stop(self) -> dict:
        """The heap's peak used and capacity (MiB), and the live set (MiB) at each full collection."""
        self.done.set()
        self.thread.join(timeout=60)
        if not self.used:
            return {}
        return {"heap_used_peak_mb": max(self.used), "heap_capacity_mb": self.capacity,
                "live_mb": [round(v, 1) for _, v in self.live], "live_at_s": [round(t) for t, _ in self.live]}


def bolt_ingest(kg: str) -> dict:
    """``ingest aser`` through Bolt into a server on Neo4j's default memory, its heap sampled."""
    from eventkg.graphstore.neo4j.server import launch as neo4j_server
    from eventkg.graphstore.neo4j.store import Neo4jStore

    server = neo4j_server.start(heap=None, pagecache=None, home=None)
    try:
        store, counter = Neo4jStore(server.url), Neo4jStore(server.url)
        sampler = HeapSampler(server.process.pid, lambda: sum(counter.counts()["edges"].values()))
        t = time.perf_counter()
        ingest_source(store, "aser", kg)
        out = {"ingest_s": time.perf_counter() - t, **sampler.stop()}
        out["edges"] = sum(store.counts()["edges"].values())
        out["edge_rate"] = out["edges"] / out["ingest_s"]
        store.close()
        counter.close()
        out["server_peak_rss_mb"] = peak_rss_of(server.process.pid)
    finally:
        server.stop()
    return out


def child(step: str, args: list[str]) -> None:
    run = {"export-floor": engine_export, "neo4j": neo4j_import, "bolt": bolt_ingest}[step]
    print(json.dumps(run(*args)), flush=True)


def run_size(work: Path, n_ev: int, n_rel: int, steps: list[str], seed: int) -> dict[str, dict]:
    """Every step at one size; the figures by step."""
    kg = generated_kg(work, n_ev, n_rel, seed)
    store = work / f"capacity_{n_ev}_{n_rel}.lbug"
    csv_dir, home, floor_dir = (work / f"capacity_{n_ev}_{name}" for name in ("csv", "neo4j", "floor"))
    got: dict[str, dict] = {}
    for step in steps:
        if step == "scan":
            got[step] = measure_child("bench.ingest_bench", ["scan", str(kg), str(store)])
        elif step == "ingest":
            got[step] = measure_child("bench.ingest_bench", ["ingest-map", str(kg), str(fresh(store))])
            got[step]["disk_mb"] = du_mb(store)
        elif step == "questions-cold":
            cold, warm = questions_cli_runs(store, QUESTIONS, 1)[0]
            got[step] = {**cold, "seconds": cold["wall_s"]}
            got["questions-warm"] = {**warm, "seconds": warm["wall_s"]}
        elif step == "export":
            shutil.rmtree(csv_dir, ignore_errors=True)
            got[step] = timed([sys.executable, "-m", "eventkg", "--store", str(store), "export", "neo4j-import",
                               str(csv_dir)], cwd="/")
            got[step]["disk_mb"] = du_mb(csv_dir)
        elif step == "export-floor":
            shutil.rmtree(floor_dir, ignore_errors=True)
            got[step] = child_step(step, str(store), str(floor_dir))
            got[step]["disk_mb"] = du_mb(floor_dir)
            shutil.rmtree(floor_dir, ignore_errors=True)
        elif step == "neo4j":
            shutil.rmtree(home, ignore_errors=True)
            got[step] = child_step(step, str(csv_dir), str(home))
            got[step]["disk_mb"] = got[step]["database_mb"]
            shutil.rmtree(home, ignore_errors=True)
        elif step == "bolt":
            got[step] = child_step(step, str(kg))
        got.get(step, {}).pop("stdout", None)
        print(f"# {n_ev:,}/{n_rel:,} {step}: " + json.dumps({k: v for k, v in got.get(step, {}).items()
                                                           if not isinstance(v, dict | list)}), flush=True)
    shutil.rmtree(csv_dir, ignore_errors=True)
    return got


def exponent(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of log(ys) on log(xs): ``b`` in ``y ~ x^b``."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


def report(sizes: list[tuple[int, int]], results: list[dict[str, dict]], steps: list[str]) -> list[str]:
    """The table: each cost at each size, the growth between sizes and the fitted exponent."""
    head = " | ".join(f"{e // 1000:,}K/{r // 1000:,}K" for e, r in sizes)
    lines = [f"| step | measure | {head} | growth | b |", "| --- | --- |" + " ---: |" * (len(sizes) + 2)]
    evs = [e for e, _ in sizes]
    for step in [s for s in STEPS if s in steps]:
        for key, unit in (("seconds", "s"), ("peak_rss_mb", "MiB"), ("disk_mb", "MB"),
                          ("server_peak_rss_mb", "MiB"), ("heap_used_peak_mb", "MiB")):
            vals = [r.get(step, {}).get(key) for r in results]
            if any(v is None for v in vals):
                continue
            growth = " / ".join(f"{b / a:.2f}x" for a, b in zip(vals, vals[1:], strict=False))
            b = f"{exponent(evs, vals):.2f}" if len(vals) > 1 and min(vals) > 0 else "-"
            cells = " | ".join(f"{v:,.1f}" for v in vals)
            lines.append(f"| {step} | {key} ({unit}) | {cells} | {growth} | {b} |")
    for i, r in enumerate(results):
        ratios = []
        if "scan" in r and "ingest" in r:
            ratios.append(f"ingest / scan {r['ingest']['seconds'] / r['scan']['seconds']:.2f}x")
        if "export" in r and "export-floor" in r:
            ratios.append(f"export / engine's COPY TO {r['export']['seconds'] / r['export-floor']['seconds']:.2f}x")
        if "bolt" in r:
            live = r["bolt"].get("live_mb", [])
            ratios.append(f"Bolt {r['bolt']['edge_rate']:,.0f} edges/s, heap live after each full collection "
                          f"(every {LIVE_EVERY_S} s) " + " / ".join(f"{v:,.0f}" for v in live) + " MiB")
        if "questions-cold" in r:
            ratios.append(f"questions warm output = cold: {r['questions-warm'].get('same_as_cold')}")
        lines.append(f"- {sizes[i][0]:,}/{sizes[i][1]:,}: " + "; ".join(ratios))
    return lines


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=SIZES, help="eventualities (relations = 3x) or EVxREL, comma-separated")
    ap.add_argument("--steps", default=",".join(DEFAULT_STEPS), help=f"comma-separated subset of {', '.join(STEPS)}")
    ap.add_argument("--workdir", default=str(default_workdir("eventkg-capacity")),
                    help="where the files go (a KG.db there is reused)")
    ap.add_argument("--seed", type=int, default=11, help="generator seed")
    ap.add_argument("--json", default=None, help="also write every figure here")
    args = ap.parse_args()
    sizes = parse_sizes(args.sizes)
    steps = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        raise SystemExit(f"unknown steps {unknown}; expected some of {', '.join(STEPS)}")
    if "questions-warm" in steps and "questions-cold" not in steps:
        steps.append("questions-cold")  # the warm run reads what the cold one kept
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    results = [run_size(work, e, r, steps, args.seed) for e, r in sizes]
    print("\n".join(report(sizes, results, steps)))
    if args.json:
        Path(args.json).write_text(json.dumps({"sizes": sizes, "results": results}, indent=1, default=str))


if __name__ == "__main__":
    main()
