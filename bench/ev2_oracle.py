"""kg-oracle on EV² question files, beside random and majority, plus the gold-switch check.

    .venv/bin/python -m bench.ev2_oracle PATH/TO/EV2/data [--workdir DIR]

Ingests the files three times into fresh embedded stores: as given, with every instance
question's gold moved to a wrong choice (CEC: ``e1`` <- the first negative; CRR: ``rel`` <-
the next member of its family), and the same for the schema files. Prints accuracy per task
and level with abstentions (kg-oracle), random (seed 0) and majority (fitted on the other
level: EV² ships no train split), then how many kg-oracle predictions each switch moved.
Rows the loader rejects are skipped (``on_error="skip"``) and counted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.tasks.models import load_model
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate

CELLS = [(t, lv) for t in ("ev2-cec", "ev2-crr") for lv in ("schema", "instance")]


def switched_copy(src: Path, dst: Path, stems: set[str]) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        if not f.is_file():
            continue
        if f.stem not in stems:
            shutil.copyfile(f, dst / f.name)
            continue
        out = []
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if r["choices"][-1] == "Vague":
                fam = r["choices"]
                r["rel"] = fam[(fam.index(r["rel"]) + 1) % 3]
            else:
                r["e1"], r["negative_chosen"] = r["negative_chosen"][0], [r["e1"], *r["negative_chosen"][1:]]
            out.append(json.dumps(r, ensure_ascii=False))
        (dst / f.name).write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


def run(folder: Path, db: Path, specs: tuple[str, ...]) -> tuple[dict, int]:
    """{(task, level, spec): (metrics, {question key: parsed})}, rows rejected."""
    out = {}
    with open_store(str(db)) as store:
        report = ingest_source(store, "ev2", folder, on_error="skip")
        for task, level in CELLS:
            for spec in specs:
                r = evaluate(
                    store, get_task(task, level=level, origin="imported"), load_model(spec, store=store, seed=0)
                )
                preds = {x.meta["qid"] + "|" + x.prompt: x.parsed for x in r.records}
                out[(task, level, spec)] = (r.metrics, preds)
    return out, report.rejected


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="folder with S_CEC/S_CRR/I_CEC/I_CRR .jsonl")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="ev2-oracle-"))
    work.mkdir(parents=True, exist_ok=True)
    base, rejected = run(args.data, work / "release.lbug", ("kg-oracle", "random", "majority"))
    print(f"rows rejected by the loader (skipped): {rejected}\n")
    print("| task | level | n | kg-oracle acc | kg-oracle abstained | random | majority (fitted on) |")
    print("|---|---|---|---|---|---|---|")
    for task, level in CELLS:
        o, r, m = (base[(task, level, s)][0] for s in ("kg-oracle", "random", "majority"))
        fitted = ",".join(m["_run"]["model"].get("fitted_groups") or []) or "-"
        print(
            f"| {task[4:].upper()} | {level} | {o['n']} | {o['accuracy']:.3f} | {o['abstained']} | "
            f"{r['accuracy']:.3f} | {m['accuracy']:.3f} ({fitted}) |"
        )
    for stems, label in (
        ({"I_CEC", "I_CRR"}, "instance files switched"),
        ({"S_CEC", "S_CRR"}, "schema files switched"),
    ):
        folder = switched_copy(args.data, work / label.replace(" ", "_"), stems)
        sw, _ = run(folder, work / f"{label.replace(' ', '_')}.lbug", ("kg-oracle",))
        print(f"\n{label}: kg-oracle predictions unchanged")
        for task, level in CELLS:
            before = base[(task, level, "kg-oracle")][1]
            after = sw[(task, level, "kg-oracle")][1]
            same = sum(1 for k, p in after.items() if k in before and before[k] == p)
            print(f"  {task} {level}: {same}/{len(after)}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
