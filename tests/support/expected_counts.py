"""Expected store counts, computed straight from source files (independently of ``ingest``).

Each function re-reads the files with json/sqlite3/csv and applies the documented rules
(README of each loader) using only ``eventkg.graphstore.model`` for ids and canonical direction.
Returns ``{"nodes": {label: n}, "edges": {TYPE: n}}`` with only the non-zero entries.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import defaultdict
from pathlib import Path

from eventkg.graphstore.model import (
    ASER_RELATIONS,
    CLOMO_RELATIONS,
    NODE_TYPES,
    REL_TYPES,
    canonical_edge,
    normalise_text,
    upper_snake,
)

FAMILY_CHOICES = {("Causes", "IsResult", "Vague"), ("Before", "After", "Vague"), ("HasSubevent", "IsSubevent", "Vague")}


class Expect:
    def __init__(self) -> None:
        self.nodes: dict[str, set] = defaultdict(set)
        self.edges: dict[str, set] = defaultdict(set)

    def result(self) -> dict[str, dict[str, int]]:  # noqa: D102
        return {
            "nodes": {k: len(v) for k, v in self.nodes.items() if v},
            "edges": {k: len(v) for k, v in self.edges.items() if v},
        }


def nonzero(counts: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {kind: {k: v for k, v in counts[kind].items() if v} for kind in ("nodes", "edges")}


# EV²'s context text, one sentence per triple (what a row without context_tpl says)
EV2_SENTENCE = {"causes": "Causes", "is a result of": "IsResult", "is before": "Before", "is after": "After",
                "has subevent": "HasSubevent", "is a subevent of": "IsSubevent"}


def ev2_context_from_text(text: str) -> list[list[str]]:
    """The triples of a context made only of '"a" <verb> "b".' sentences, else []."""
    triples = []
    for sentence in re.split(r"(?<=\.)\s+", text.strip()):
        m = re.fullmatch(r'"([^"]+)" ([a-z ]+) "([^"]+)"\.', sentence)
        if not m or m.group(2) not in EV2_SENTENCE:
            return []
        triples.append([m.group(1), EV2_SENTENCE[m.group(2)], m.group(3)])
    return triples


def ev2(folder: Path, raw: bool = False):
    x = Expect()
    x.without_text = set()
    S = lambda name: ("schema", normalise_text(name))  # noqa: E731
    I = lambda text: ("instance", normalise_text(text))  # noqa: E731, E741

    def rel_edge(h, r, t):
        src, rtype, dst = canonical_edge(h, r, t)
        x.edges[rtype].add((src, dst))

    for f in sorted(folder.glob("*.jsonl")):
        task = f.name[2:5].upper()
        level = "schema" if f.name.startswith("S_") else "instance"
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            fam = "|".join(r["choices"]) if task == "CRR" else ""
            q = (task, level, r["id"], r["rel"], fam)
            x.nodes["Question"].add(q)
            if r.get("context_tpl") is not None:
                ctx = r["context_tpl"]
            else:
                ctx = ev2_context_from_text(r.get("context") or "")
                if level == "instance":  # only sentences about ids the row describes
                    known = set(r["event_type"]) | {k for k, v in r["instances"].items() if v and v.strip()}
                    ctx = [c for c in ctx if c[0] in known and c[2] in known]
            gold = [(r["e0"], r["rel"], r["e1"])] if r["rel"] != "Vague" else []
            if level == "schema":
                ev = {n: S(n) for n in [r["e0"], r["e1"]] + (r["choices"] if task == "CEC" else [])}
                ev.update({n: S(n) for h, _, t in ctx for n in (h, t)})
                for h, rr, t in ctx + gold:
                    rel_edge(ev[h], rr, ev[t])
            else:
                types = {k: S(v) for k, v in r["event_type"].items()}
                named = {r["e0"], r["e1"], *r.get("negative_chosen", []), *r["instances"], *r["event_type"]}
                named |= set(r["choices"]) if task == "CEC" else set()
                named |= {n for h, _, t in ctx for n in (h, t)}
                ev = {}
                for k in named:
                    text = r["instances"].get(k) or ""
                    if text.strip():
                        ev[k] = I(text)
                    else:  # no sentence: one node per (question id, instance id, type)
                        ev[k] = ("instance without text", r["id"], k, types[k])
                        x.without_text.add(ev[k])
                for k in ev:
                    if k in types:
                        x.edges["HAS_TYPE"].add((ev[k], types[k]))
                x.nodes["Event"].update(types.values())
                for h, rr, t in r.get("event_relation") or []:
                    x.nodes["Event"].update([S(h), S(t)])
                    rel_edge(S(h), rr, S(t))
                for h, rr, t in ctx + gold:
                    rel_edge(ev[h], rr, ev[t])
                    rel_edge(types[h], rr, types[t])
            x.nodes["Event"].update(ev.values())
            x.edges["ASKS"].update({(q, ev[r["e0"]]), (q, ev[r["e1"]])})
            if task == "CEC":
                x.edges["HAS_CHOICE"].update((q, ev[c]) for c in r["choices"])
            x.edges["HAS_CONTEXT"].update((q, ev[n]) for h, _, t in ctx for n in (h, t))
    clustering = folder / "clustering.json"
    if clustering.exists():
        for cluster in json.loads(clustering.read_text()):
            x.nodes["Event"].update(S(n) for n in cluster)
    return x if raw else x.result()


def ev2_instances_without_text(folder: Path) -> int:
    """Distinct instance events that EV² questions name without a sentence."""
    return len(ev2(folder, raw=True).without_text)


def clomo(folder: Path, raw: bool = False):
    x = Expect()
    seen = set()
    for f in sorted(folder.glob("*_*.json")):
        split = f.stem.split("_", 1)[1]
        for item in json.loads(f.read_text()):
            key = (item["id_string"], split)
            if key in seen:
                continue
            seen.add(key)
            rel = CLOMO_RELATIONS[item["qtype"]]
            info = item["input_info"]
            for state, text in ((1, info["P"]), (2, item["output"])):
                arg = key + (state,)
                x.nodes["Argument"].add(arg)
                bodies = [b.strip() for b in re.split(r"Statement\d+:", text)[1:]]
                for b in bodies:
                    x.nodes["Statement"].add(b)
                    x.edges["PART_OF"].add((b, arg))
            p1 = info["O"].removeprefix("Premise1:").strip()
            p2 = info["Om"].removeprefix("Premise2:").strip()
            x.nodes["Premise"].update([p1, p2])
            x.edges[rel].update([(p1, key + (1,)), (p2, key + (2,))])
            x.edges["COUNTERFACTUAL_OF"].add(key)
    return x if raw else x.result()


def aser(kg: Path, *, map_events: bool = False, concepts: Path | None = None, raw: bool = False):
    x = Expect()
    conn = sqlite3.connect(kg)
    words = dict(conn.execute("SELECT _id, words FROM Eventualities"))
    x.nodes["Event"].update(normalise_text(w) for w in words.values())
    cols = ", ".join(ASER_RELATIONS)
    for hid, tid, *counts in conn.execute(f"SELECT hid, tid, {cols} FROM Relations"):
        h, t = normalise_text(words[hid]), normalise_text(words[tid])
        for name, c in zip(ASER_RELATIONS, counts, strict=True):
            if c:
                x.edges[upper_snake(name)].add((h, t))
                if map_events and name in ("Result", "Precedence"):
                    x.edges["CAUSES" if name == "Result" else "BEFORE"].add((h, t))
                if map_events and name in ("Reason", "Succession"):
                    x.edges["CAUSES" if name == "Reason" else "BEFORE"].add((t, h))
    if concepts:
        c = sqlite3.connect(concepts)
        names = {cid: " ".join(json.loads(info)["words"]) for cid, info in c.execute("SELECT _id, info FROM Concepts")}
        x.nodes["Concept"].update(normalise_text(n) for n in names.values())
        for cid, eid in c.execute("SELECT cid, eid FROM ConceptInstancePairs"):
            x.edges["ABSTRACTS_TO"].add((normalise_text(words[eid]), normalise_text(names[cid])))
    return x if raw else x.result()


def abspyramid(root: Path, raw: bool = False):
    x = Expect()
    for f in sorted(root.rglob("*.json")):
        folder_type = next((p.split("_")[0] for p in f.parts if p.endswith("_dataset") and not p.startswith("merged")), None)
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            kind = r.get("type", folder_type)
            inst = r["event"][r["event"].index("<") + 1 : r["event"].index(">")]
            head = normalise_text(r["event"].replace("<", "").replace(">", ""))
            tail = normalise_text(r["event"].replace(f"<{inst}>", r["concept"]))
            x.nodes["Event"].update([head, tail])
            x.edges[f"{kind.upper()}_ENTAIL"].add((head, tail))
            if r.get("label", 1) == 1:
                x.nodes["Concept"].add(normalise_text(r["concept"]))
                x.edges["ABSTRACTS_TO"].add((head, normalise_text(r["concept"])))
    return x if raw else x.result()


EECKG_EVENT = {"Causes": ("Causes", False), "HasSubevent": ("HasSubevent", False), "HasFirstSubevent": ("HasSubevent", False),
               "HasLastSubevent": ("HasSubevent", False), "HasPrerequisite": ("Before", True), "Before": ("Before", False),
               "After": ("Before", True), "IsResult": ("Causes", True), "IsSubevent": ("HasSubevent", True)}


def eeckg(folder: Path, raw: bool = False):
    x = Expect()
    triples = []
    for f in sorted(folder.iterdir()):
        lines = [ln for ln in f.read_text().splitlines() if ln.strip()]
        if lines[0].startswith("/a/"):
            triples += [(c[2].split("/")[3], c[1][3:], c[3].split("/")[3]) for c in (ln.split("\t") for ln in lines)]
        else:
            triples += [tuple(ln.split("\t")[:3]) for ln in lines[1:]]
    for h, r, t in triples:
        h, t = normalise_text(h), normalise_text(t)
        x.nodes["Event"].update([h, t])
        if r in EECKG_EVENT:
            name, flip = EECKG_EVENT[r]
            x.edges[name.upper().replace("HASSUBEVENT", "HAS_SUBEVENT")].add((t, h) if flip else (h, t))
        else:
            x.edges["RELATED"].add((h, t))
    return x if raw else x.result()


def fingerprint(store) -> tuple[dict, str]:
    """A store's counts plus a hash of every node id and edge (type, src, dst)."""
    h = hashlib.sha256()
    for label in sorted(NODE_TYPES):
        for nid in sorted(n["id"] for n in store.iter_nodes(label)):
            h.update(f"{label}:{nid}\n".encode())
    for rtype in sorted(REL_TYPES):
        for src, dst in sorted((e["src"], e["dst"]) for e in store.iter_edges(rtype)):
            h.update(f"{rtype}:{src}>{dst}\n".encode())
    return store.counts(), h.hexdigest()
