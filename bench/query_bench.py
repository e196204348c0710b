"""The query layer's benchmark: question generation, then embeddings / FAISS / negatives / retrieval.

    .venv/bin/python bench/query_bench.py               # full size (1M-event / 3M-relation stores)
    .venv/bin/python bench/query_bench.py --scale 0.05  # a quick look

Runs ``bench/query_bench_questions.py`` (CEC and CRR questions/min on the 1M/3M ASER-shaped
store, target >= 100K/min after a load of <= 10 s; with ``--baseline-python``, the previous
code's rate in the same run) and ``bench/query_bench_retrieval.py`` (retrieve p50/p95,
target p95 < 50 ms at k=5, hops=2; FAISS recall@10 >= 0.95 and speed-up >= 10x over exact
search on 200,000 vectors; embedding throughput vs raw ``encode`` >= 0.9; a second
``negatives`` run < 10% of the first) one after another, each in its own process so one
part's memory does not distort the other's timings. Extra arguments go to both.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    args = sys.argv[1:]
    if {"-h", "--help"} & set(args):
        print(__doc__)
        return 0
    status = 0
    for part in ("query_bench_questions.py", "query_bench_retrieval.py"):
        print(f"== {part} {' '.join(args)}", flush=True)
        status |= subprocess.call([sys.executable, str(HERE / part), *args])
    return status


if __name__ == "__main__":
    sys.exit(main())
