"""The query layer's benchmark: question generation, then embeddings / FAISS / negatives / retrieval.

    .venv/bin/python -m bench.query_bench               # full size (1M-event / 3M-relation stores)
    .venv/bin/python -m bench.query_bench --scale 0.05  # a quick look

Runs ``bench.query_bench_questions`` (CEC and CRR questions/min on the 1M/3M ASER-shaped
store, target >= 100K/min after a load of <= 10 s; with ``--baseline-python``, the previous
code's rate in the same run) and ``bench.query_bench_retrieval`` (retrieve p50/p95,
target p95 < 50 ms at k=5, hops=2; FAISS recall@10 >= 0.95 and speed-up >= 10x over exact
search on 200,000 vectors; embedding throughput vs raw ``encode`` >= 0.9; a second
``negatives`` run < 10% of the first) one after another, each in its own process so one
part's memory does not distort the other's timings. Extra arguments go to both.
"""

from __future__ import annotations

import subprocess
import sys

from bench.common import ROOT


def main() -> int:
    args = sys.argv[1:]
    if {"-h", "--help"} & set(args):
        print(__doc__)
        return 0
    status = 0
    for part in ("bench.query_bench_questions", "bench.query_bench_retrieval"):
        print(f"== {part} {' '.join(args)}", flush=True)
        status |= subprocess.call([sys.executable, "-m", part, *args], cwd=ROOT)
    return status


if __name__ == "__main__":
    sys.exit(main())
