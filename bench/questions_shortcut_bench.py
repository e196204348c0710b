"""Benchmark: schema CEC generation with shortcut-free negatives on a large store, load included.

Opens STORE, reads its event graph (``EventCSR.from_store``), generates ``-n`` schema CEC
questions with random negatives (drawn in the answer's degree band, positions balanced, no
repeats), prints load and generation seconds and questions per minute (load included), the
skipped questions by reason, the provability of ``--check`` of them by the 4-step reach search
(``bench.common.provable``), and writes the first ``--keep`` rows as JSON lines for
``eventkg audit``. Audit a file generated at its own size (``-n`` equal to ``--keep``): negatives are
matched to the in-file degree over the whole run, so a subset of a larger run is not what was matched.

Run:
    .venv/bin/python -m bench.questions_shortcut_bench STORE -n 100000 --keep 5000 --out S_CEC_random.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from bench.common import provable
from eventkg.graphstore import open_store
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.questions.make import QuestionSpec, make_questions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", type=int, default=1000)
    ap.add_argument("--keep", type=int, default=5000)
    ap.add_argument("--out", default="S_CEC_random.jsonl")
    a = ap.parse_args()
    import eventkg.queries.retrieval.subgraphs  # noqa: F401  (the one-time scikit-learn import, outside the clock)

    t0 = time.perf_counter()
    with open_store(a.store, read_only=True) as s:
        csr = EventCSR.from_store(s)
    load = time.perf_counter() - t0
    stats: dict[str, int] = {}
    t1 = time.perf_counter()
    made = make_questions(csr, QuestionSpec("cec", "schema", a.n, a.seed, negatives="random"), stats=stats)
    gen = time.perf_counter() - t1
    print(f"events {len(csr):,}  load {load:.1f} s  generate {len(made):,} in {gen:.1f} s  "
          f"-> {len(made) / (load + gen) * 60:,.0f} questions/min load included "
          f"({len(made) / gen * 60:,.0f}/min after load)")
    print("skipped:", stats)
    idx = EventIndex(csr)
    sample = random.Random(a.seed).sample(made, min(a.check, len(made)))
    print(f"provable: {sum(provable(idx, q) for q in sample)}/{len(sample)}")
    Path(a.out).write_text("".join(json.dumps(q.row, ensure_ascii=False) + "\n" for q in made[:a.keep]))


if __name__ == "__main__":
    main()
