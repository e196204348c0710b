"""The engine's rel COPYs against its buffer pool: LadybugDB alone, table by table, at several pool sizes.

    .venv/bin/python -m bench.rel_pool_bench --kg $WORKDIR/KG_aser_shape_10000000_30000000_s11.db \\
        --tables $WORKDIR/tables_10M --pools 1536,1280

The rows the ingest writes (typed and deduplicated by key, one Parquet file per table: the
engine floor's tables of ``bench.ingest_bench``, written once into ``--tables`` unless the folder
holds them already) are COPYed into an empty database: Event first, then each rel table, each
COPY timed and followed by a CHECKPOINT, the database kept open. One child process per pool.
It prints each table's COPY time at each pool, then the rel COPYs' totals (time, CPU-s, peak RSS)
and their ratio to the largest pool's.

Why: a rel COPY looks both ends of every edge up in the node table's primary-key index, and once
that index outgrows the buffer pool the COPYs slow down; the ingest's rel COPYs get the pool the
memory budget leaves beside the process. This shows where that step is for a graph of a given
size (figures: ``docs/performance.md``, "The engine alone").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT, copy_each_table, write_engine_tables


def copy_tables(folder: Path, store: Path, pool_mib: int) -> None:
    """The child: COPY each table's Parquet file into a fresh database with a ``pool_mib`` pool,
    printing one JSON line per table and a last one with the peak RSS."""
    for table in copy_each_table(str(store), folder, pool_mib << 20):
        print(json.dumps(table), flush=True)
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)


def ensure_tables(kg: Path, folder: Path) -> None:
    """Write the ingest's rows as Parquet files into ``folder`` once (as the engine floor does)."""
    if (folder / "Event.parquet").exists():
        return
    print(f"# writing the tables of {kg} into {folder} (once)", flush=True)
    write_engine_tables(kg, folder)


def run_pool(folder: Path, pool_mib: int) -> tuple[list[dict], float]:
    """One pool's run in a child process of its own: its per-table lines and peak RSS (MB)."""
    work = Path(tempfile.mkdtemp(prefix="rel-pool-"))
    try:
        out = subprocess.run([sys.executable, "-m", "bench.rel_pool_bench", "--child", str(pool_mib), str(folder), str(work / "s.lbug")],
                             cwd=ROOT, check=True, capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [line for line in lines if "table" in line], lines[-1]["peak_rss_mb"]


def report(runs: dict[int, tuple[list[dict], float]]) -> None:
    """Per-table COPY seconds per pool, then the rel COPYs' totals and ratios to the largest pool."""
    pools = sorted(runs, reverse=True)
    print("| table | " + " | ".join(f"{p:,} MiB" for p in pools) + " |")
    print("| --- | " + " | ".join("---:" for _ in pools) + " |")
    for i, row in enumerate(runs[pools[0]][0]):
        cells = [f"{runs[p][0][i]['copy']:.1f} s" for p in pools]
        print(f"| {row['table']} | " + " | ".join(cells) + " |")
    totals = {p: (sum(r["copy"] + r["checkpoint"] for r in runs[p][0] if r["rel"]),
                  sum(r["cpu"] for r in runs[p][0] if r["rel"])) for p in pools}
    best = totals[pools[0]]
    for p in pools:
        seconds, cpu = totals[p]
        print(f"# pool {p:,} MiB: rel COPYs + checkpoints {seconds:.1f} s ({seconds / best[0]:.2f}x), "
              f"{cpu:.1f} CPU-s ({cpu / best[1]:.2f}x), peak RSS {runs[p][1]:,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", type=Path, help="an ASER-shaped KG.db (bench.ingest_bench writes them)")
    parser.add_argument("--tables", type=Path, required="--child" not in sys.argv,
                        help="folder of the tables' Parquet files (written from --kg when empty)")
    parser.add_argument("--pools", default="1536,1280", help="buffer pools to compare, MiB, comma-separated")
    parser.add_argument("--child", nargs=3, metavar=("POOL", "TABLES", "STORE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        copy_tables(Path(args.child[1]), Path(args.child[2]), int(args.child[0]))
        return
    if not (args.tables / "Event.parquet").exists() and args.kg is None:
        parser.error(f"{args.tables} holds no tables: give --kg to write them")
    if args.kg is not None:
        ensure_tables(args.kg, args.tables)
    print(f"# load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores", flush=True)
    report({int(p): run_pool(args.tables, int(p)) for p in args.pools.split(",")})


if __name__ == "__main__":
    main()
