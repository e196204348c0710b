"""The bytes each export writes per stored row (node or edge), and its peak on disk beside its output.

    .venv/bin/python -m bench.export_disk_bench --store aser10k=A.lbug --store ev2=E.lbug
    .venv/bin/python -m bench.export_disk_bench --store aser1m=B.lbug --formats neo4j-import

Each export is ``eventkg --store STORE export FORMAT OUT`` in a process of its own, into an empty
folder; every ~0.2 s the bench adds up the blocks the files in that folder hold (the temporary
file or folder beside the output, the neo4j-import spool, the output), so ``peak`` is what the
export took at its most and ``bytes`` what it left. The rows are the store's nodes and edges
(``stats --json``); for ``lm-eval``, its documents. The pre-export checks
(``eventkg.queries.export``, ``eventkg.graphstore.neo4j.admin_import``) take the least bytes a row
measured here over stores of different sources and sizes: a floor of what an export writes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, DiskSampler, default_workdir

FORMATS = ("nt", "ttl", "graphml", "neo4j-import", "lm-eval")
PERIOD = 0.2


def eventkg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eventkg", *args], capture_output=True, text=True, cwd=ROOT)


def rows_of(store: Path) -> tuple[int, int, int]:
    """(nodes, edges, CEC/CRR questions) the store holds."""
    proc = eventkg("--store", str(store), "stats", "--json")
    if proc.returncode != 0:
        raise SystemExit(f"stats {store}: {proc.stderr.strip()}")
    counts = json.loads(proc.stdout)
    return sum(counts["nodes"].values()), sum(counts["edges"].values()), counts["nodes"].get("Question", 0)


def export_once(store: Path, fmt: str, folder: Path) -> dict:
    """One export of ``store`` as ``fmt`` into ``folder`` (emptied first): seconds, peak and final bytes."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    out = folder / {"nt": "g.nt", "ttl": "g.ttl", "graphml": "g.graphml"}.get(fmt, "out")
    args = ["export", "rdf" if fmt in ("nt", "ttl") else fmt, str(out)]
    sampler = DiskSampler(folder, lambda _path: "all", ("all",), PERIOD)
    sampler.start()
    t0 = time.perf_counter()
    proc = eventkg("--store", str(store), *args)
    seconds = time.perf_counter() - t0
    sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"export {fmt} of {store}: {proc.stderr.strip()[-1000:]}")
    final = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {"seconds": round(seconds, 1), "peak": sampler.peak["all"], "bytes": final}


def lm_eval_documents(folder: Path) -> int:
    return sum(1 for f in folder.rglob("*.jsonl") for _ in f.open(encoding="utf-8"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=default_workdir("eventkg-export-disk-bench"))
    ap.add_argument("--store", action="append", required=True, help="NAME=PATH of a store to export (read only)")
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    args = ap.parse_args()
    runs = []
    print(f"{'store':<12} {'format':<13} {'rows':>10} {'bytes':>13} {'B/row':>8} {'peak/bytes':>10} {'s':>7}", flush=True)
    for spec in args.store:
        name, _, path = spec.partition("=")
        store = Path(path)
        nodes, edges, questions = rows_of(store)
        for fmt in args.formats.split(","):
            if fmt == "lm-eval" and not questions:
                continue
            run = export_once(store, fmt, args.workdir / f"{name}-{fmt}")
            rows = lm_eval_documents(args.workdir / f"{name}-{fmt}") if fmt == "lm-eval" else nodes + edges
            run |= {"store": name, "format": fmt, "nodes": nodes, "edges": edges, "rows": rows,
                    "bytes_per_row": round(run["bytes"] / rows, 1), "peak_over_bytes": round(run["peak"] / run["bytes"], 3)}
            runs.append(run)
            print(f"{name:<12} {fmt:<13} {rows:>10,} {run['bytes']:>13,} {run['bytes_per_row']:>8.1f} "
                  f"{run['peak_over_bytes']:>10.3f} {run['seconds']:>7.1f}", flush=True)
            shutil.rmtree(args.workdir / f"{name}-{fmt}", ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
