"""Benchmark: CEC and CRR question generation on the 1M-event / 3M-relation ASER-shaped store.

The store is ASER-shaped (``tests.support.aser_shape``: skewed degrees, hubs up to ~12K) and
ingested with ``--map-events`` into an embedded store, both cached under ``eventkg-bench/`` in the temporary folder
so that reruns start at once. Prints, for the present code:

* load: the event graph read in columns into CSR arrays (``EventCSR.from_store``), wall time
  and the RSS it adds (target <= 10 s, <= 1 GB);
* schema CEC and CRR questions per minute after load, ``--negatives random`` (target >= 100K/min)
  and the peak RSS (target <= 2 GB);
* provability of a sample of ``--check`` questions per task, checked with the 4-step
  ``EventIndex.reach`` search (not the generator's meet-in-the-middle): every context triple
  is a stored edge; CEC: the asked relation is induced from e0 to the answer and no relation
  of its family to any negative; CRR: exactly the asked member of the family holds (Vague:
  no relation of any family);

and, with ``--baseline-python`` (an interpreter with the previous eventkg installed, e.g.
from ``git archive 49cd1aa``), the previous implementation on the same store in the same run
(row-streamed ``EventIndex.from_store``, 4-step reach per question) on ``--baseline-n``
questions, with the ratios. Both sides import ``eventkg.queries.retrieval.subgraphs`` (which loads
scikit-learn, ~2 s) before the clock starts: a one-time import, not a per-question cost.

With ``--cli --store STORE [--store STORE2 ...] -n 50000 --seed 1 [--baseline-path DIR]``: the
CLI's ``questions cec --level schema --negatives random`` and ``questions crr --level schema`` run
twice per store, each in its own process, beside the floor (the event graph read alone, in a process
of its own), first with the event graph kept beside the store dropped (cold: read from the engine)
and then with it (warm): wall and CPU seconds, peak RSS and the load average around each, the
earlier checkout (``PYTHONPATH=DIR``) first where given, and each store's times over the first
store's (target: cold and warm within 2x of the smallest store's; every output of a store must be equal).

Run (the first run writes and ingests the file, ~2 minutes):
    .venv/bin/python -m bench.query_bench_questions --baseline-python OLD/.venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.common import default_workdir, graph_read_run, provable, questions_cli_runs
from eventkg.graphstore import open_store
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.questions.make import make_questions
from eventkg.queries.questions.rows import GeneratedQuestion
from eventkg.queries.questions.spec import QuestionSpec

FOLDER = default_workdir("eventkg-bench")
EVENTS, RELATIONS = 1_000_000, 3_000_000

_BASELINE = """
import json, resource, sys, time
from eventkg.graphstore import open_store
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.questions.generate import generate_questions
import eventkg.queries.retrieval.subgraphs  # the same one-time import as the present side
store, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with open_store(store, read_only=True) as s:
    t = time.perf_counter(); idx = EventIndex.from_store(s); load = time.perf_counter() - t
out = {"load_s": load, "load_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0}
for task in ("CEC", "CRR"):
    t = time.perf_counter(); made = generate_questions(idx, task, "schema", n, seed)
    out[task] = len(made) / (time.perf_counter() - t) * 60
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ensure_store(events: int, relations: int, seed: int = 7) -> Path:
    """The ASER-shaped KG.db and its embedded store with ``--map-events``, made once and cached."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    tag = f"{events // 1000}k{relations // 1000}k"
    db, store, done = FOLDER / f"aser-{tag}.db", FOLDER / f"aser-{tag}-q.lbug", FOLDER / f"aser-{tag}.done"
    if events == EVENTS and relations == RELATIONS:  # the name the first runs used
        db, store, done = FOLDER / "aser-1m3m.db", FOLDER / "aser-1m3m-q.lbug", FOLDER / "aser-1m3m.done"
    if not db.exists():
        from tests.support.aser_shape import make_aser_shape_kg

        print(f"writing {db} ({events:,} eventualities, {relations:,} relations) ...", flush=True)
        tmp = db.with_suffix(".tmp")
        make_aser_shape_kg(tmp, events, relations, seed=seed)
        tmp.rename(db)
    if not done.exists():
        print(f"ingesting into {store} with --map-events ...", flush=True)
        for old in FOLDER.glob(store.name + "*"):
            old.unlink()
        subprocess.run([sys.executable, "-m", "eventkg", "--store", str(store), "ingest", "aser", str(db),
                        "--map-events"], check=True, stdout=subprocess.DEVNULL)
        done.touch()
    return store


def run_baseline(python: str, store: Path, n: int, seed: int) -> dict[str, float]:
    res = subprocess.run([python, "-c", _BASELINE, str(store), str(n), str(seed)], check=True, capture_output=True,
                         text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench(store: Path, n: int, seed: int, check: int, baseline_python: str | None, baseline_n: int,
          cold: bool = False) -> dict:
    import eventkg.queries.retrieval.subgraphs  # noqa: F401  (one-time scikit-learn import, see the docstring)
    from eventkg.queries.graph import csr_cache

    rss0 = rss_mb()
    with open_store(str(store), read_only=True) as s:
        if cold:  # the arrays and texts kept beside the store are dropped: read from the engine again
            csr_cache.clear(s)
        t0 = time.perf_counter()
        csr = EventCSR.from_store(s)
        load_s = time.perf_counter() - t0
    got: dict = {"load_s": load_s, "load_rss_mb": rss_mb() - rss0, "events": len(csr), "entries": len(csr.nbr)}
    made: dict[str, list[GeneratedQuestion]] = {}
    for task in ("CEC", "CRR"):
        t0 = time.perf_counter()
        made[task] = make_questions(csr, QuestionSpec(task, "schema", n, seed, negatives="random"))
        got[task] = len(made[task]) / (time.perf_counter() - t0) * 60
        got[f"{task}_n"] = len(made[task])
    got["peak_rss_mb"] = rss_mb()
    idx = EventIndex(csr)
    rng = random.Random(seed)
    for task, qs in made.items():
        sample = rng.sample(qs, min(check, len(qs)))
        got[f"{task}_provable"] = (sum(provable(idx, q) for q in sample), len(sample))
    if baseline_python:
        got["baseline"] = run_baseline(baseline_python, store, baseline_n, seed)
    return got


def report_cli(stores: list[Path], n: int, seed: int, baseline_path: str | None,
               tasks: tuple[str, ...] = ("cec", "crr")) -> None:
    """:func:`bench.common.questions_cli_runs` for each task on every store, the previous code first where given,
    beside the floor (the event graph read alone, :func:`bench.common.graph_read_run`), and the ratio of each
    store's times to the first store's, per code, task and run (target: cold and warm <= 2x)."""
    codes = [("previous", baseline_path), ("present", None)] if baseline_path else [("present", None)]
    got: dict[tuple[str, str, str], list[dict]] = {}
    print(f"\n| store | code | task | run ({n:,} schema questions) | wall s | questions/min | CPU s | peak RSS MB | "
          "1-min load | output |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for store in stores:
        floor = graph_read_run(store)
        got[(store.name, "floor", "")] = [floor]
        print(f"| {store.name} | floor | - | graph read | {floor['wall_s']:.2f} | - | {floor['cpu_s']:.1f} | "
              f"{floor['peak_rss_mb']:,.0f} | {floor['load'][0]:.2f} -> {floor['load'][1]:.2f} | |", flush=True)
        for task in tasks:
            first = None
            for code, path in codes:
                runs, out = questions_cli_runs(store, n, seed, path, task=task)
                first = out if first is None else first
                got[(store.name, code, task)] = runs
                made = out.count(b"\n")
                for r in runs:
                    same = "= warm" if r["mode"] == "warm" and r["same_as_cold"] else ""
                    if code == "present" and baseline_path:
                        same = ("= previous" if out == first else "DIFFERS from previous") + (", " + same if same else "")
                    print(f"| {store.name} | {code} | {task} | {r['mode']} | {r['wall_s']:.2f} | "
                          f"{made / r['wall_s'] * 60:,.0f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:,.0f} | "
                          f"{r['load'][0]:.2f} -> {r['load'][1]:.2f} | {same} |", flush=True)
    for store in stores[1:]:
        a, b = got[(stores[0].name, "floor", "")][0], got[(store.name, "floor", "")][0]
        print(f"{store.name} / {stores[0].name}, floor (graph read): wall {b['wall_s'] / a['wall_s']:.2f}x, "
              f"peak RSS {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x")
        for code, _ in codes:
            for task in tasks:
                for i, mode in enumerate(("cold", "warm")):
                    a, b = got[(stores[0].name, code, task)][i], got[(store.name, code, task)][i]
                    print(f"{store.name} / {stores[0].name}, {code}, {task}, {mode}: wall {b['wall_s'] / a['wall_s']:.2f}x, "
                          f"CPU {b['cpu_s'] / a['cpu_s']:.2f}x, peak RSS {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x")


def report(got: dict, n: int, baseline_n: int) -> None:
    base = got.get("baseline")
    print(f"\nstore: {got['events']:,} events, {got['entries']:,} adjacency entries (both readings)")
    head = f"| measure | present | previous ({baseline_n} questions) | ratio |" if base else "| measure | present |"
    print(head)
    print("|---|---|---|---|" if base else "|---|---|")
    rows = [("load (s)", "load_s", "{:.1f}", True), ("load RSS added (MB)", "load_rss_mb", "{:,.0f}", True),
            (f"CEC questions/min ({n:,})", "CEC", "{:,.0f}", False),
            (f"CRR questions/min ({n:,})", "CRR", "{:,.0f}", False), ("peak RSS (MB)", "peak_rss_mb", "{:,.0f}", True)]
    for label, key, fmt, lower_better in rows:
        cell = fmt.format(got[key])
        if base:
            ratio = base[key] / got[key] if lower_better else got[key] / base[key]
            word = ("lower" if ratio >= 1 else "higher") if lower_better else "faster"
            shown = ratio if ratio >= 1 or not lower_better else 1 / ratio
            print(f"| {label} | {cell} | {fmt.format(base[key])} | x{shown:.2f} {word} |")
        else:
            print(f"| {label} | {cell} |")
    for task in ("CEC", "CRR"):
        ok, total = got[f"{task}_provable"]
        print(f"provable ({task}, 4-step reach check): {ok}/{total}")
    met = got["load_s"] <= 10 and got["load_rss_mb"] <= 1024 and min(got["CEC"], got["CRR"]) >= 100_000 \
        and got["peak_rss_mb"] <= 2048
    print(f"targets (load <= 10 s and <= 1 GB, >= 100K/min, RSS <= 2 GB): {'met' if met else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="size = 1M events / 3M relations x scale")
    ap.add_argument("-n", type=int, default=10_000, help="questions per task")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", type=int, default=1000, help="questions per task checked for provability")
    ap.add_argument("--baseline-python", default=None, help="interpreter with the previous eventkg installed")
    ap.add_argument("--baseline-n", type=int, default=300, help="questions per task for the previous code")
    ap.add_argument("--store", type=Path, action="append", default=None,
                    help="an existing store (ASER ingested with --map-events); --cli: several, smallest first")
    ap.add_argument("--baseline-path", default=None,
                    help="--cli: PYTHONPATH of an earlier eventkg checkout, run first on each store")
    ap.add_argument("--cold", action="store_true", help="drop the event graph kept beside the store first")
    ap.add_argument("--cli", action="store_true",
                    help="instead: the CLI's schema CEC and CRR questions (-n) run cold, then warm, each in its own process, "
                         "beside the graph read alone")
    args = ap.parse_args()
    stores = args.store or [ensure_store(int(EVENTS * args.scale), int(RELATIONS * args.scale))]
    if args.cli:
        report_cli(stores, args.n, args.seed, args.baseline_path)
        return
    store = stores[0]
    got = bench(store, args.n, args.seed, args.check, args.baseline_python, args.baseline_n, args.cold)
    report(got, args.n, args.baseline_n)


if __name__ == "__main__":
    main()
