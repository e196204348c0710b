"""Prove every question of a generated CEC or CRR file against the store's graph.

Reads a JSON-lines question file, maps each event name it uses to the store's event, and runs
``bench.common.provable`` (the 4-step reach search, independent of the generator's vetting) on
every row, so a file made by the CLI (``eventkg questions ... --out FILE``) is checked whole.

    python -m bench.prove_question_file STORE FILE --task CEC
"""
from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

from bench.common import provable
from eventkg.graphstore import open_store
from eventkg.queries.graph.csr import EventCSR
from eventkg.queries.graph.event_graph import EventIndex


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("file")
    ap.add_argument("--task", choices=("CEC", "CRR"), required=True)
    a = ap.parse_args()
    with open(a.file, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    wanted: set[str] = set()
    for r in rows:
        wanted.update([r["e0"], r["e1"], *r.get("negative_chosen", [])])
        wanted.update(x for h, _, t in r["context_tpl"] for x in (h, t))
    with open_store(a.store, read_only=True) as s:
        csr = EventCSR.from_store(s)
    ids: dict[str, str] = {}
    ambiguous = 0
    for p in range(len(csr)):
        name = csr.name(p)
        if name in wanted:
            ambiguous += name in ids
            ids[name] = csr.ids[p]
    print(f"names {len(wanted):,}, found {len(ids):,}, ambiguous {ambiguous:,}")
    idx = EventIndex(csr)
    ok = sum(provable(idx, SimpleNamespace(row=r, task=a.task, names=ids)) for r in rows)
    print(f"provable {ok:,}/{len(rows):,}")


if __name__ == "__main__":
    main()
