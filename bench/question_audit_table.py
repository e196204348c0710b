"""Benchmark: the shortcut audit of every file eventkg generates by default, beside the EV² release's.

Generates the files (EV² release store: schema and instance CEC and CRR, ``--ev2-n`` asked; an
ASER-shaped store: schema CEC with FAISS and with random negatives and schema CRR, ``--aser-n``
asked; seed ``--seed``), audits each with the store's graph (as ``eventkg audit --with-store``)
together with the release's question files in the same run, and prints one markdown table per
task: a row per baseline, a column per file, ``!`` where a baseline is outside chance +-0.10 (the
position row: p < 0.01), then the yield (made / asked), the maximum the graph's keys allow
(:mod:`eventkg.queries.questions.capacity`; on a large graph ``>=`` where counting stopped at twice
the asked number) and the release's count of the same task and level. ``--files`` picks files for a quick run;
``--reuse`` audits a file already in ``--out`` instead of generating it again.

Run:
    .venv/bin/python -m bench.question_audit_table --ev2-store ev2.lbug --aser-store aser-1m3m.lbug \\
        --release RELEASE/data --out audit-files
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

from eventkg.graphstore import open_store
from eventkg.queries.audit.report import FileAudit, audit_files, write_json
from eventkg.queries.graph.event_graph import EventIndex
from eventkg.queries.questions.capacity import question_capacity
from eventkg.queries.questions.make import make_questions
from eventkg.queries.questions.spec import QuestionSpec
from eventkg.queries.questions.store import write_jsonl


@dataclass(frozen=True)
class Planned:
    """One file of the table: generated from ``store`` (``ev2`` or ``aser``), or the release's (``release``)."""

    name: str
    store: str
    task: str
    level: str
    negatives: str = "faiss"


PLAN = (
    Planned("ev2_S_CEC", "ev2", "cec", "schema"),
    Planned("ev2_S_CEC_random", "ev2", "cec", "schema", "random"),
    Planned("ev2_I_CEC", "ev2", "cec", "instance", "random"),
    Planned("ev2_S_CRR", "ev2", "crr", "schema"),
    Planned("ev2_I_CRR", "ev2", "crr", "instance"),
    Planned("aser_S_CEC", "aser", "cec", "schema"),
    Planned("aser_S_CEC_random", "aser", "cec", "schema", "random"),
    Planned("aser_S_CRR", "aser", "crr", "schema"),
    Planned("release_S_CEC", "release", "cec", "schema"),
    Planned("release_I_CEC", "release", "cec", "instance"),
    Planned("release_S_CRR", "release", "crr", "schema"),
    Planned("release_I_CRR", "release", "crr", "instance"),
)
#: the release file of each task and level
RELEASE_FILE = {("cec", "schema"): "S_CEC.jsonl", ("cec", "instance"): "I_CEC.jsonl",
                ("crr", "schema"): "S_CRR.jsonl", ("crr", "instance"): "I_CRR.jsonl"}
#: the maximum is counted in full on a graph of fewer events than this; on a larger one (an ASER store
#: holds far more keys than asked) up to CAPACITY_LIMIT times the asked number
FULL_COUNT_EVENTS = 100_000
CAPACITY_LIMIT = 2


@dataclass
class Made:
    """What one file holds and how it came: its path, questions made, asked, the graph's maximum."""

    planned: Planned
    path: Path
    made: int
    asked: int | None = None
    capacity: str = "—"
    seconds: float | None = None


def generate(plan: list[Planned], store_url: str, n: int, seed: int, out: Path, reuse: bool) -> list[Made]:
    """The files of ``plan`` from one store (opened read-only), each with its yield and maximum."""
    got, maximum = [], {}
    with open_store(store_url, read_only=True) as store:
        graph = EventIndex.from_store(store)
        for p in plan:
            path = out / f"{p.name}.jsonl"
            seconds = None
            if not (reuse and path.exists()):
                t0 = time.perf_counter()
                stats: dict[str, int] = {}
                made = make_questions(store, QuestionSpec(p.task, p.level, n, seed, negatives=p.negatives),
                                      graph=graph, stats=stats, notice=lambda line, name=p.name: print(f"  {name}: {line}"))
                seconds = time.perf_counter() - t0
                write_jsonl([q.row for q in made], str(path))
                print(f"  {p.name}: {len(made):,} of {n:,} in {seconds:.1f} s; skipped {stats}", flush=True)
            else:
                print(f"  {p.name}: reused {path}", flush=True)
            if (p.task, p.level) not in maximum:
                limit = None if len(graph.csr) < FULL_COUNT_EVENTS else CAPACITY_LIMIT * n
                cap = question_capacity(graph, p.task, p.level, limit=limit)
                maximum[(p.task, p.level)] = f"{cap.questions:,}" if cap.complete else f">= {cap.questions:,}"
            shown = maximum[(p.task, p.level)]
            rows = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
            got.append(Made(p, path, rows, n, shown, seconds))
    return got


def _cell(audit: FileAudit, check: str) -> str:
    f = next((f for f in audit.findings if f.check == check), None)
    if f is None:
        return "—"
    text = f"{f.score:.3f}" + (f" (p={f.p:.2g})" if f.p is not None else "")
    return text + ("" if f.passed else " !")


def markdown(made: list[Made], audits: list[FileAudit], release_counts: dict[tuple[str, str], int]) -> str:
    """One table per task: baselines by files, then the yield rows."""
    out = []
    for task in ("CEC", "CRR"):
        cols = [(m, a) for m, a in zip(made, audits, strict=True) if a.task == task]
        if not cols:
            continue
        lines = ["| check | " + " | ".join(m.planned.name for m, _ in cols) + " |", "|---" * (len(cols) + 1) + "|",
                 "| n | " + " | ".join(f"{a.n:,}" for _, a in cols) + " |"]
        for check in dict.fromkeys(f.check for _, a in cols for f in a.findings):
            lines.append(f"| {check} | " + " | ".join(_cell(a, check) for _, a in cols) + " |")
        lines.append("| made / asked | " + " | ".join(
            f"{m.made:,} / {m.asked:,}" if m.asked else f"{m.made:,} (release)" for m, _ in cols) + " |")
        lines.append("| maximum from the keys | " + " | ".join(m.capacity for m, _ in cols) + " |")
        lines.append("| release holds | " + " | ".join(
            f"{release_counts[(m.planned.task, m.planned.level)]:,}" if m.planned.store == "ev2" else "—"
            for m, _ in cols) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ev2-store", help="The EV² release ingested (a store URL or path).")
    ap.add_argument("--aser-store", help="An ASER-shaped store with its FAISS index.")
    ap.add_argument("--release", help="The EV² release's data folder (S_CEC.jsonl, I_CEC.jsonl, S_CRR.jsonl, I_CRR.jsonl).")
    ap.add_argument("--out", default="question-audit", help="Folder for the generated files and audit.json.")
    ap.add_argument("--files", nargs="*", default=None, choices=[p.name for p in PLAN], metavar="NAME",
                    help="Only these files (default: every one whose store or release is given): "
                    + ", ".join(p.name for p in PLAN))
    ap.add_argument("--ev2-n", type=int, default=2000, help="Questions asked of the EV² store per file.")
    ap.add_argument("--aser-n", type=int, default=5000, help="Questions asked of the ASER store per file.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reuse", action="store_true", help="Audit a file already in --out instead of generating it.")
    ap.add_argument("--no-similarity", action="store_true", help="Leave out the sentence-model checks.")
    a = ap.parse_args()
    given = {"ev2": a.ev2_store, "aser": a.aser_store, "release": a.release}
    plan = [p for p in PLAN if given[p.store] and (a.files is None or p.name in a.files)]
    if not plan:
        ap.error("no file to make: give --ev2-store, --aser-store or --release (and --files among them)")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    made: list[Made] = []
    for key, n in (("ev2", a.ev2_n), ("aser", a.aser_n)):
        part = [p for p in plan if p.store == key]
        if part:
            print(f"generating from {given[key]} ...", flush=True)
            made += generate(part, given[key], n, a.seed, out, a.reuse)
    release_counts = {}
    if a.release:
        for key, name in RELEASE_FILE.items():
            path = Path(a.release) / name
            release_counts[key] = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    for p in plan:
        if p.store == "release":
            path = Path(a.release) / RELEASE_FILE[(p.task, p.level)]
            made.append(Made(p, path, release_counts[(p.task, p.level)]))
    audits = audit_all(made, given, not a.no_similarity)
    write_json(audits, out / "audit.json")
    print()
    print(markdown(made, audits, release_counts))


def audit_all(made: list[Made], given: dict[str, str | None], similarity: bool) -> list[FileAudit]:
    """Each file audited with its store's graph (the release's with the EV² store, when given), in order."""
    by_store: dict[str | None, list[int]] = {}
    for i, m in enumerate(made):
        url = given["ev2"] if m.planned.store in ("ev2", "release") else given["aser"]
        by_store.setdefault(url, []).append(i)
    audits: list[FileAudit | None] = [None] * len(made)
    for url, idx in by_store.items():
        paths = [made[i].path for i in idx]
        print(f"auditing {len(paths)} file(s){' with ' + url if url else ''} ...", flush=True)
        if url:
            with open_store(url, read_only=True) as store:
                got = audit_files(paths, store=store, similarity=similarity)
        else:
            got = audit_files(paths, similarity=similarity)
        for i, audit in zip(idx, got, strict=True):
            audits[i] = audit
    return [a for a in audits if a is not None]


if __name__ == "__main__":
    main()
