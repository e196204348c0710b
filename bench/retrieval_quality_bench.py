"""Benchmark: does ``retrieve`` find what a question needs, on EV² stories the store has never seen?

Run (the EV² release's ``data/`` folder, or the samples)::

    .venv/bin/python -m bench.retrieval_quality_bench --ev2 RELEASE/data [--neo4j] [--baseline OLD_RETRIEVE_PY]

The split: EV²'s stories (the part of a question id before ``-``) in two halves by a hash of the
story id; the store holds the schema files (``S_CEC``, ``S_CRR``, ``clustering.json``) whole and
the instance files' rows of the first half only (a filtered copy of the files, ingested with
``eventkg ingest ev2``). Every non-Vague instance question of the other half is asked: the query
is the instance sentence of its ``e0``; the needed fact is (type of ``e0``, relation, type of
``e1``), matched in either spelling (``Causes`` or ``IsResult`` read backwards).

Methods, in the same run on the same questions:

- ``lifted``: :func:`~eventkg.queries.retrieval.retrieve.retrieve` with its defaults;
- ``lifted + the CEC relation``: the same with ``relation=`` the question's relation (what
  ``--style rag`` passes for CEC; the figures count for the CEC rows);
- ``dense-only``: ``retrieve(mode="neighbourhood")``: dense seeds, the k-hop neighbourhood;
- ``bm25-facts``: BM25 (:mod:`~eventkg.queries.vectors.fulltext` terms) over the store's schema
  facts written ``head relation tail``, best first, packed to the budget;
- ``today``: with ``--baseline FILE``, the ``retrieve`` of an older ``retrieve.py`` (e.g. the
  main branch's ``queries/retrieval/retrieve.py``), loaded from that file.

Figures: the needed fact in the prompt at ``--budgets`` tokens (default 100, 300, 1000); type
recall at 1/3/5 (the queried type among the lifted types, or among the types the seeds reach);
a retrieval-bounded reader on CEC at 300 tokens (it knows each choice's gold type and picks the
choice whose type is the far end of the first prompt fact of the asked relation; without one,
a fixed pseudo-random choice: chance 0.25); mean prompt tokens at 300; retrieve latency
p50/p95 (warm, embedding included). The ceiling: the share of questions whose queried type can
be reached at all (a stored instance of it or a synonym, or its name as a schema event) and the
share whose needed fact is stored.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import load_baseline
from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import normalise_text
from eventkg.queries.retrieval.facts import fact_line, parse_facts
from eventkg.queries.retrieval.lifting import type_layer
from eventkg.queries.retrieval.retrieve import approx_tokens, retrieve
from eventkg.queries.retrieval.scoring import canonical_triple
from eventkg.queries.vectors.files import index_dir
from eventkg.queries.vectors.fulltext import terms
from eventkg.queries.vectors.index import open_index

SCHEMA_FILES = ("S_CEC.jsonl", "S_CRR.jsonl", "clustering.json")
INSTANCE_FILES = ("I_CEC.jsonl", "I_CRR.jsonl")
_OLD_LINE = re.compile(r"^- \((.+), ([A-Za-z]+), (.+)\)$")


def held_out(qid: str) -> bool:
    """The test half: stories whose id hashes odd."""
    story = qid.split("-")[0]
    return int(hashlib.blake2b(story.encode(), digest_size=4).hexdigest(), 16) % 2 == 1


def split_copy(src: Path, dst: Path) -> list[dict[str, Any]]:
    """Write the train store's files to ``dst``; return the test half's instance rows."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in SCHEMA_FILES:
        shutil.copy(src / f, dst / f)
    test = []
    for f in INSTANCE_FILES:
        with open(src / f, encoding="utf-8") as a, open(dst / f, "w", encoding="utf-8") as b:
            for line in a:
                if not line.strip():
                    continue
                row = json.loads(line)
                if held_out(row["id"]):
                    test.append({**row, "_task": f[2:5]})
                else:
                    b.write(line)
    return test


def questions(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Non-Vague test rows with a text for e0 and types for e0/e1, with query and needed fact."""
    out = []
    for r in rows:
        types, inst = r.get("event_type") or {}, r.get("instances") or {}
        if r.get("rel") == "Vague" or not inst.get(r["e0"]) or r["e0"] not in types or r["e1"] not in types:
            continue
        need = canonical_triple((types[r["e0"]], r["rel"], types[r["e1"]]))
        out.append({**r, "query": inst[r["e0"]], "need": need, "t0": normalise_text(types[r["e0"]])})
    return out


def facts_of_prompt(prompt: str) -> list[tuple[str, str, str]]:
    """Fact lines of a prompt (quoted, or the older unquoted lines)."""
    got = parse_facts(prompt)
    if got:
        return got
    return [(m[1], m[2], m[3]) for m in map(_OLD_LINE.match, prompt.splitlines()) if m]


def has_need(prompt: str, need: tuple[str, str, str]) -> bool:
    return any(canonical_triple(f) == need for f in facts_of_prompt(prompt))


def reader(prompt: str, q: dict[str, Any]) -> bool:
    """The retrieval-bounded CEC reader (see the module docstring)."""
    types = q["event_type"]
    want = {normalise_text(types[c]): c for c in q["choices"] if c in types}
    for f in map(canonical_triple, facts_of_prompt(prompt)):
        for tname, choice in want.items():
            c = canonical_triple(("sentinel", q["rel"], tname))
            if f[1] == c[1] and (f[2] == tname if c[0] == "sentinel" else f[0] == tname):
                return choice == q["e1"]
    pick = int(hashlib.blake2b(q["id"].encode(), digest_size=4).hexdigest(), 16) % len(q["choices"])
    return q["choices"][pick] == q["e1"]


class BM25Facts:
    """BM25 over the store's schema facts, packed to a budget (the keyword baseline)."""

    def __init__(self, store: GraphStore) -> None:
        import bm25s

        rows = []
        for rtype, name in (("CAUSES", "Causes"), ("BEFORE", "Before"), ("HAS_SUBEVENT", "HasSubevent")):
            rows += [(r["h"], name, r["t"]) for r in store.query(
                f"MATCH (a:Event)-[:{rtype}]->(b:Event) WHERE a.level = 'schema' AND b.level = 'schema' "
                "RETURN a.text AS h, b.text AS t")]
        self.facts = sorted(rows)
        self.bm25 = bm25s.BM25()
        self.bm25.index([terms(f"{h} {r} {t}") or [""] for h, r, t in self.facts], show_progress=False)

    def prompt(self, text: str, max_tokens: int) -> str:
        q = [t for t in terms(text) if t in self.bm25.vocab_dict]
        scores = self.bm25.get_scores(q) if q else [0.0] * len(self.facts)
        order = sorted(range(len(self.facts)), key=lambda i: (-scores[i], i))
        lines = ["Event knowledge retrieved from an event graph. Use it when it helps to answer."]
        used = approx_tokens(lines[0])
        for i in order:
            if scores[i] <= 0:
                break
            line = fact_line(*self.facts[i])
            if used + approx_tokens(line) > max_tokens:
                continue
            lines.append(line)
            used += approx_tokens(line)
        return "\n".join(lines)


def seed_types(store: GraphStore, sub: Any, layer: Any) -> list[str]:
    """Type names the seeds reach, in seed order (the seed itself if schema, else its types)."""
    out: list[str] = []
    for sid, _ in sub.seeds:
        for t in ([sid] if sid in layer.text else layer.types_of.get(sid, [])):
            name = layer.text.get(t)
            if name and name not in out:
                out.append(name)
    return out


def synonyms(layer: Any, name: str) -> set[str]:
    ids = [i for i, t in layer.text.items() if t == name]
    return {layer.text[m] for i in ids for m in layer.members.get(layer.cluster_of.get(i, i), [i])} | {name}


def run_method(name: str, ask: Callable[[dict[str, Any]], Any], qs: list[dict[str, Any]], budgets: list[int], layer: Any,
               store: GraphStore) -> dict[str, Any]:
    hit = {b: {"CEC": [], "CRR": []} for b in budgets}
    recall = {k: [] for k in (1, 3, 5)}
    read, tokens, lat = [], [], []
    for q in qs:
        t0 = time.perf_counter()
        sub = ask(q)
        prompts = {b: (sub(b) if callable(sub) else sub.to_prompt(style="direct", max_tokens=b)) for b in budgets}
        lat.append((time.perf_counter() - t0) * 1000)
        for b in budgets:
            hit[b][q["_task"]].append(has_need(prompts[b], q["need"]))
        tokens.append(approx_tokens(prompts[300] if 300 in prompts else prompts[budgets[0]]))
        if q["_task"] == "CEC":
            read.append(reader(prompts[300] if 300 in prompts else prompts[budgets[0]], q))
        if not callable(sub):
            ranked = [t.name for t in getattr(sub, "types", [])] or seed_types(store, sub, layer)
            syn = synonyms(layer, q["t0"])
            for k in recall:
                recall[k].append(bool(syn & set(ranked[:k])) or any(synonyms(layer, r) & syn for r in ranked[:k]))
    mean = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    lat.sort()
    return {"method": name,
            **{f"need@{b}_{t}": mean(hit[b][t]) for b in budgets for t in ("CEC", "CRR")},
            **{f"type_recall@{k}": mean(v) for k, v in recall.items()},
            "reader_CEC@300": mean(read), "tokens@300": mean(tokens),
            "p50_ms": round(statistics.median(lat), 1), "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 1)}


def ceiling(qs: list[dict[str, Any]], layer: Any, store: GraphStore) -> dict[str, Any]:
    """Share of questions whose queried type is reachable, and whose needed fact is stored."""
    typed = {layer.text[t] for ts in layer.types_of.values() for t in ts if t in layer.text}
    stored = set()
    for tid, es in layer.edges.items():
        if tid in layer.text:
            for r, o, out in es:
                if o in layer.text:
                    h, t = (tid, o) if out else (o, tid)
                    stored.add(canonical_triple((layer.text[h], {"CAUSES": "Causes", "BEFORE": "Before",
                                                                 "HAS_SUBEVENT": "HasSubevent"}[r], layer.text[t])))
    reach = [bool(synonyms(layer, q["t0"]) & (typed | set(layer.text.values()))) for q in qs]
    return {"type_reachable": round(sum(reach) / len(qs), 3),
            "fact_stored": round(sum(q["need"] in stored for q in qs) / len(qs), 3)}


def bench_store(store: GraphStore, qs: list[dict[str, Any]], args: argparse.Namespace, label: str) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    vi = open_index(store)
    built = time.perf_counter() - t0
    layer = type_layer(store, (str(index_dir(store)), len(vi)))
    t0 = time.perf_counter()
    retrieve(store, "warm up")  # model, index and full-text index loaded
    print(json.dumps({"backend": label, "events_indexed": len(vi), "open_index_s": round(built, 1),
                      "first_retrieve_s": round(time.perf_counter() - t0, 1)}), flush=True)
    bm = BM25Facts(store)
    methods: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("lifted (new default)", lambda q: retrieve(store, q["query"])),
        ("lifted + the CEC relation", lambda q: retrieve(store, q["query"], relation=q["rel"] if q["_task"] == "CEC" else None)),
        ("dense-only", lambda q: retrieve(store, q["query"], mode="neighbourhood")),
        ("bm25-facts", lambda q: (lambda b: bm.prompt(q["query"], b))),
    ]
    if args.baseline:
        old = load_baseline(Path(args.baseline))
        methods.insert(1, ("today", lambda q: old(store, q["query"])))
    rows = []
    for name, ask in methods:
        r = run_method(name, ask, qs, args.budgets, layer, store)
        rows.append({"backend": label, **r})
        print(json.dumps(rows[-1]), flush=True)
    c = {"backend": label, "method": "ceiling", **ceiling(qs, layer, store)}
    print(json.dumps(c), flush=True)
    return [*rows, c]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ev2", type=Path, required=True, help="the EV² data folder (the five files)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "eventkg-retrieval-quality")
    ap.add_argument("--budgets", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--limit", type=int, default=None, help="at most this many test questions (first by id)")
    ap.add_argument("--baseline", help="an older retrieve.py to measure as 'today'")
    ap.add_argument("--neo4j", action="store_true", help="also on a local Neo4j server")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args()
    files = args.workdir / "train"
    test = split_copy(args.ev2, files)
    qs = sorted(questions(test), key=lambda q: (q["_task"], q["id"], q["rel"]))[: args.limit]
    print(f"{len(qs)} test questions ({sum(q['_task'] == 'CEC' for q in qs)} CEC) from held-out stories")
    path = args.workdir / "split.lbug"
    if not path.exists():
        with open_store(str(path)) as s:
            ingest_source(s, "ev2", files)
    with open_store(str(path)) as s:
        rows = bench_store(s, qs, args, "ladybug")
    if args.neo4j:
        rows += on_neo4j(path, files, qs, args)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


def on_neo4j(lbug: Path, files: Path, qs: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The same on a Neo4j server holding the same split (its vectors copied, not encoded again)."""
    from eventkg.graphstore.neo4j.server import launch as neo4j_server
    from eventkg.graphstore.neo4j.store import Neo4jStore

    server = neo4j_server.start(home=Path(tempfile.mkdtemp(prefix="retrieval-quality-neo4j-")), heap="1g", pagecache="256m")
    try:
        store = Neo4jStore(server.url)
        ingest_source(store, "ev2", files)
        target = index_dir(store)
        target.mkdir(parents=True, exist_ok=True)
        for f in Path(str(lbug) + ".faiss").glob("vectors-*"):
            if f.is_file():
                shutil.copy(f, target / f.name)
        rows = bench_store(store, qs, args, "neo4j")
        store.close()
        return rows
    finally:
        server.stop()


if __name__ == "__main__":
    main()
