"""Write the project's own sample files (deterministic) from the facts in ``sample_world.py``.

    python scripts/make_samples.py            # rewrites ingest/samples/{ev2,eeckg,aser,abspyramid,clomo}

The formats are the real ones (``docs/formats.md``, ``../shared/data/samples``). The samples
describe one coherent world: every EV² question has exactly one right answer in the union
graph of *all* the samples as ``eventkg demo`` ingests them (EV²'s schema triples, EECKG's
mapped relations and ASER's ``--map-events`` senses), read the way the kg-oracle reads it:
Table 1 induction over walks of at most ``MAX_LEN`` edges (:class:`UnionGraph`). So no CEC
negative stands in the asked relation to ``e0``, directly or by induction, and a CRR gold
relation is the only member of its family that holds (none for Vague). Questions are drawn
under these rules and :func:`check_questions` re-checks every row before anything is written.
Every EV² graph edge is the gold edge of some question, so the union of the files' schema
triples is the whole world graph.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
SAMPLES_DIR = HERE.parent / "ingest" / "samples"  # the bundled sample files this script rewrites

import sample_world as world  # noqa: E402

from eventkg.graphstore.model import STORED_TO_FORWARD, normalise_text  # noqa: E402
from eventkg.ingest.aser import EVENT_MAPPING as ASER_EVENT_MAPPING  # noqa: E402
from eventkg.ingest.eeckg import EVENT_MAP as EECKG_EVENT_MAP  # noqa: E402
from eventkg.queries.induction.table1 import AUTOMATON, CODE, DEAD  # noqa: E402

REL = {"C": "Causes", "B": "Before", "S": "HasSubevent"}
INVERSE = {"Causes": "IsResult", "Before": "After", "HasSubevent": "IsSubevent"}
INVERSE.update({v: k for k, v in INVERSE.items()})
FAMILY = {"Causes": 0, "IsResult": 0, "Before": 1, "After": 1, "HasSubevent": 2, "IsSubevent": 2}
FAMILIES = [["Causes", "IsResult", "Vague"], ["Before", "After", "Vague"], ["HasSubevent", "IsSubevent", "Vague"]]
VERBAL = {
    "Causes": '"{h}" causes "{t}".',
    "IsResult": '"{h}" is a result of "{t}".',
    "Before": '"{h}" is before "{t}".',
    "After": '"{h}" is after "{t}".',
    "HasSubevent": '"{h}" has subevent "{t}".',
    "IsSubevent": '"{h}" is a subevent of "{t}".',
}
CEC_QUESTION = {
    "Causes": 'Which is result of "{e}"?',
    "IsResult": 'Which is cause of "{e}"?',
    "Before": 'Which happened after "{e}"?',
    "After": 'Which happened before "{e}"?',
    "HasSubevent": 'Which is subevent of "{e}"?',
    "IsSubevent": 'Which has subevent "{e}"?',
}
MAX_LEN = 4  # the kg-oracle's walk length (tasks/ev2/tasks.py, queries.oracle.KGOracle)
OPENERS = ["{who} had to {p} {where}.", "{who} decided to {p} {where}.", "That week {who} began to {p} {where}.",
           "{who} managed to {p} {where}."]


# --- EV² ------------------------------------------------------------------------------------

def schema_graph() -> tuple[list[tuple[str, str, str, str]], dict[str, str]]:
    """[(head, Relation, tail, scenario)] in forward names, and type -> scenario."""
    edges, scen = [], {}
    for name, s in world.SCENARIOS.items():
        for line in s["edges"].strip().splitlines():
            h, r, t = line.split()
            edges.append((h, REL[r], t, name))
            scen.setdefault(h, name)
            scen.setdefault(t, name)
    fam: dict[tuple[str, str, int], str] = {}
    for h, r, t, _ in edges:
        assert (t, h, FAMILY[r]) not in fam, f"contradiction: {h} {r} {t}"
        assert (h, t, FAMILY[r]) not in fam, f"duplicate: {h} {r} {t}"
        fam[(h, t, FAMILY[r])] = r
    return edges, scen


def eeckg_relations() -> list[tuple[str, str, str]]:
    """EECKG's sample rows that the loader stores as event relations (its ``EVENT_MAP``), head -> tail."""
    rows = [(start, rel, end) for rel, start, end, _ in world.EECKG_ASSERTIONS]
    rows += [(h, rel, t) for h, rel, t, _ in world.EECKG_TRIPLES]
    return [(h, EECKG_EVENT_MAP[rel], t) for h, rel, t in rows if rel in EECKG_EVENT_MAP]


def aser_relations() -> list[tuple[str, str, str]]:
    """ASER's sample senses that ``--map-events`` stores as event relations (its ``EVENT_MAPPING``)."""
    out = []
    for h, t, senses in world.ASER_RELATIONS:
        for sense, count in senses.items():
            if sense in ASER_EVENT_MAPPING and count:
                stored, forward = ASER_EVENT_MAPPING[sense]
                out.append((h, STORED_TO_FORWARD[stored], t) if forward else (t, STORED_TO_FORWARD[stored], h))
    return out


class UnionGraph:
    """The event relations of every sample as the demo stores them, one node per normalised text.

    ``held(a, b)`` is what the kg-oracle reads between two events: the relations Table 1
    induces over some walk of at most ``MAX_LEN`` edges (edges read both ways, a backward
    step reading the inverse relation; one edge induces itself).
    """

    def __init__(self, triples: list[tuple[str, str, str]]) -> None:
        self.adj: dict[str, set[tuple[str, int]]] = {}
        for h, r, t in triples:
            h, t = normalise_text(h), normalise_text(t)
            if h != t:
                self.adj.setdefault(h, set()).add((t, CODE[r]))
                self.adj.setdefault(t, set()).add((h, CODE[INVERSE[r]]))
        self._reach: dict[str, dict[str, set[str]]] = {}

    def direct(self, a: str, b: str) -> set[str]:
        b = normalise_text(b)
        names = {v: k for k, v in CODE.items()}
        return {names[c] for n, c in self.adj.get(normalise_text(a), ()) if n == b}

    def held(self, a: str, b: str) -> set[str]:
        a = normalise_text(a)
        if a not in self._reach:
            self._reach[a] = self._walk(a)
        return self._reach[a].get(normalise_text(b), set())

    def _walk(self, a: str) -> dict[str, set[str]]:
        names = {v: k for k, v in CODE.items()}
        out: dict[str, set[str]] = {}
        frontier = [(a, AUTOMATON.start)]
        seen = set(frontier)
        for _ in range(MAX_LEN):
            nxt = []
            for node, state in frontier:
                for nb, code in sorted(self.adj.get(node, ())):
                    ns = AUTOMATON.trans[state][code]
                    if ns == DEAD or (nb, ns) in seen:
                        continue
                    seen.add((nb, ns))
                    nxt.append((nb, ns))
                    if AUTOMATON.output[ns] != DEAD:
                        out.setdefault(nb, set()).add(names[AUTOMATON.output[ns]])
            frontier = nxt
        return out


def union_graph() -> UnionGraph:
    """World edges (EV²) + EECKG's and ASER's event relations: the graph the demo's oracle reads."""
    edges, _ = schema_graph()
    return UnionGraph([(h, r, t) for h, r, t, _ in edges] + eeckg_relations() + aser_relations())


def check_questions(files: dict[str, list[dict]], graph: UnionGraph) -> None:
    """Every row has exactly one right answer in ``graph`` (see the module docstring), else fail loudly."""
    for name, rows in files.items():
        for row in rows:
            types = row.get("event_type") or {}  # instance rows are read on their event types
            e0 = types.get(row["e0"], row["e0"])
            where = f"{name} {row['id']} {row['e0']} {row['rel']} {row['e1']}"
            if "negative_chosen" in row:
                right = [c for c in row["choices"] if row["rel"] in graph.held(e0, types.get(c, c))]
                assert right == [row["e1"]], f"{where}: right answers {right}"
            else:
                family = [r for r in row["choices"] if r != "Vague"]
                holding = [r for r in family if r in graph.held(e0, types.get(row["e1"], row["e1"]))]
                assert holding == ([] if row["rel"] == "Vague" else [row["rel"]]), f"{where}: {holding} hold"


class EV2:
    def __init__(self, seed: int = 2024) -> None:
        self.rng = random.Random(seed)
        self.qid_rng = random.Random(seed + 1)  # ids of their own stream: stable when question rules change
        self.edges, self.scenario = schema_graph()
        self.union = union_graph()
        self.by_family = {(h, t, FAMILY[r]) for h, r, t, _ in self.edges}
        self.adjacent: dict[str, list[tuple[str, str, str]]] = {}
        for h, r, t, _ in self.edges:
            self.adjacent.setdefault(h, []).append((h, r, t))
            self.adjacent.setdefault(t, []).append((h, r, t))
        self.next_comp = 1

    def linked(self, a: str, b: str, family: int | None = None) -> bool:
        """A direct edge of ``family`` (any, if None) between a and b in the union graph."""
        fams = [family] if family is not None else [0, 1, 2]
        return any(FAMILY[r] in fams for r in self.union.direct(a, b))

    def holding(self, a: str, b: str, family: int) -> list[str]:
        """Members of ``family`` the union graph holds from a to b (walks of <= MAX_LEN)."""
        return [r for r in FAMILIES[family][:2] if r in self.union.held(a, b)]

    def oriented(self, edge: tuple[str, str, str]) -> list[str]:
        h, r, t = edge
        return [h, r, t] if self.rng.random() < 0.6 else [t, INVERSE[r], h]

    def context(self, e0: str, e1: str, gold: tuple[str, str, str] | None) -> list[list[str]]:
        """1-3 background triples around e0 (not the gold edge, not touching e1)."""
        pool = [e for e in self.adjacent.get(e0, []) if e != gold and e1 not in (e[0], e[2])]
        self.rng.shuffle(pool)
        picked = pool[: self.rng.randint(1, 2)]
        if picked and self.rng.random() < 0.5:
            other = picked[0][0] if picked[0][2] == e0 else picked[0][2]
            more = [e for e in self.adjacent.get(other, []) if e not in picked and e != gold and e1 not in (e[0], e[2])]
            if more:
                picked.append(self.rng.choice(more))
        return [self.oriented(e) for e in picked]

    def negatives(self, e0: str, rel: str, e1: str) -> list[str]:
        """3 events of e0's scenario, not directly linked to e0 or e1, none of which ``rel`` reaches from e0."""
        same = sorted(t for t, s in self.scenario.items() if s == self.scenario[e0] and t not in (e0, e1))
        cands = [t for t in same if not self.linked(e0, t) and not self.linked(e1, t)
                 and rel not in self.union.held(e0, t)]
        self.rng.shuffle(cands)
        return cands[:3]

    def vague_partner(self, e0: str, family: int) -> str | None:
        """An event of e0's scenario that no member of ``family`` links to e0 (walks of <= MAX_LEN)."""
        same = sorted(t for t, s in self.scenario.items() if s == self.scenario[e0] and t != e0)
        cands = [t for t in same if not self.holding(e0, t, family)]
        return self.rng.choice(cands) if cands else None

    def qid(self) -> str:
        qid = f"{self.next_comp}-{self.qid_rng.randint(0, 2)}"
        self.next_comp += 1
        return qid

    def schema_row(self, task: str, qid: str, e0: str, rel: str, e1: str, family: list[str] | None,
                   ctx: list[list[str]]) -> dict:
        row: dict = {"id": qid, "e0": e0, "rel": rel, "e1": e1}
        if task == "CEC":
            row["negative_chosen"] = self.negatives(e0, rel, e1)
        row["context"] = " ".join(VERBAL[r].format(h=h, t=t) for h, r, t in ctx)
        if task == "CEC" or rel != "Vague":
            row["context_tpl"] = ctx
        if task == "CEC":
            row["question"] = CEC_QUESTION[rel].format(e=e0)
            choices = row["negative_chosen"] + [e1]
            self.rng.shuffle(choices)
            row["choices"] = choices
        else:
            row["question"] = f'Is "{e0}" "{family[0]}", "{family[1]}" or "Vague" "{e1}"?'
            row["choices"] = list(family)
        return row

    def instance_row(self, schema: dict, ctx: list[list[str]], gold: list[str] | None) -> dict:
        """The instance-level twin of a schema row: events become story sentences."""
        names = [schema["e0"], schema["e1"]] + (schema.get("negative_chosen") or []) + [x for h, _, t in ctx for x in (h, t)]
        ids: dict[str, str] = {}
        numbers = self.rng.sample(range(1, 100), len(set(names)))
        for name in names:
            if name not in ids:
                ids[name] = f"event{numbers[len(ids)]}"
        row = {k: v for k, v in schema.items() if k not in ("context", "context_tpl", "question", "choices")}
        row["e0"], row["e1"] = ids[schema["e0"]], ids[schema["e1"]]
        if "negative_chosen" in schema:
            row["negative_chosen"] = [ids[n] for n in schema["negative_chosen"]]
        inst_ctx = [[ids[h], r, ids[t]] for h, r, t in ctx]
        row["context"] = " ".join(VERBAL[r].format(h=h, t=t) for h, r, t in inst_ctx)
        if "context_tpl" in schema:
            row["context_tpl"] = inst_ctx
        if "negative_chosen" in schema:
            row["question"] = CEC_QUESTION[schema["rel"]].format(e=row["e0"])
            row["choices"] = [ids[c] for c in schema["choices"]]
        else:
            fam = schema["choices"]
            row["question"] = f'Is "{row["e0"]}" "{fam[0]}", "{fam[1]}" or "Vague" "{row["e1"]}"?'
            row["choices"] = list(fam)
        row["instances"] = {ids[n]: instance_text(n, self.scenario[n]) for n in ids}
        row["event_type"] = {ids[n]: n for n in ids}
        row["event_relation"] = ctx + ([gold] if gold else [])
        return row

    def build(self) -> dict[str, list[dict]]:
        files: dict[str, list[dict]] = {"S_CEC": [], "S_CRR": [], "I_CEC": [], "I_CRR": []}
        order = list(self.edges)
        self.rng.shuffle(order)
        plan = ["I_CEC"] * 26 + ["I_CRR"] * 22
        plan += ["S_CEC", "S_CRR"] * ((len(order) - len(plan)) // 2 + 1)
        for (h, r, t, _), target in zip(order, plan, strict=False):
            level, task = target.split("_")
            oriented = self.oriented((h, r, t))
            e0, rel, e1 = oriented
            if task == "CEC" and len(self.negatives(e0, rel, e1)) < 3:
                task, target = "CRR", f"{level}_CRR"
            if task == "CRR":  # the world is coherent: no walk makes the inverse hold too
                assert self.holding(e0, e1, FAMILY[rel]) == [rel], f"world.py: {e0} {rel} {e1} and its inverse hold"
            ctx = self.context(e0, e1, (h, r, t))
            qid = self.qid()
            row = self.schema_row(task, qid, e0, rel, e1, FAMILIES[FAMILY[rel]], ctx)
            rows = [(row, ctx)]
            if task == "CRR" and self.rng.random() < 0.3:  # the same pair asked in another family
                fam = self.rng.choice([f for f in range(3) if f != FAMILY[rel]])
                held = self.holding(e0, e1, fam)
                # one answer only, and a non-Vague gold must be an edge already: the loader stores it
                if not held or (len(held) == 1 and held[0] in self.union.direct(e0, e1)):
                    rel2 = held[0] if held else "Vague"
                    rows.append((self.schema_row("CRR", qid, e0, rel2, e1, FAMILIES[fam], ctx), ctx))
            if task == "CRR" and self.rng.random() < 0.35:  # a Vague pair around the same event
                fam = self.rng.randrange(3)
                partner = self.vague_partner(e0, fam)
                if partner:
                    vctx = self.context(e0, partner, None)
                    rows.append((self.schema_row("CRR", self.qid(), e0, "Vague", partner, FAMILIES[fam], vctx), vctx))
            for r2, c2 in rows:
                gold = None if r2["rel"] == "Vague" else [r2["e0"], r2["rel"], r2["e1"]]
                files[target].append(self.instance_row(r2, c2, gold) if level == "I" else r2)
        check_questions(files, self.union)
        return files

    def clustering(self) -> list[list[str]]:
        out = []
        for name in sorted(self.scenario):
            out.append([name.replace("_", " "), *world.SYNONYMS.get(name, [])])
        self.rng.shuffle(out)
        return out


def instance_text(event_type: str, scenario: str) -> str:
    s = world.SCENARIOS[scenario]
    opener = OPENERS[int(hashlib.sha1(event_type.encode()).hexdigest(), 16) % len(OPENERS)]
    text = opener.format(who=s["who"], p=event_type.replace("_", " "), where=s["setting"])
    return text[0].upper() + text[1:]


def context_only(row: dict) -> list[str]:
    """Instance ids a row names only in its context (not e0, e1 or a choice), in order."""
    asked = {row["e0"], row["e1"], *row.get("negative_chosen", [])}
    ids = [x for x in re.findall(r'"(event\d+)"', row["context"]) if x not in asked]
    return list(dict.fromkeys(ids))


def release_quirks(files: dict[str, list[dict]]) -> None:
    """Make four instance rows as odd as some in the official release, so tests cover them:
    an answer with no entry in ``instances`` (like I_CEC ``309-2``/``event13``), a context
    event with an empty text (``52-2``/``event75``), and a Vague CRR row (context only as
    text) with a context id known only by its ``event_type`` (``37-0``/``event30``) and one
    the row does not describe at all (``417-2``/``event90``). The types stay, so every
    question keeps its one right answer."""
    cec = files["I_CEC"][::-1]  # from the end: the docs' example question 1-2 stays whole
    del cec[0]["instances"][cec[0]["e1"]]
    empty = next(r for r in cec[1:] if context_only(r))
    empty["instances"][context_only(empty)[0]] = ""
    vague = next(r for r in files["I_CRR"] if r["rel"] == "Vague" and len(context_only(r)) >= 2)
    typed, unknown = context_only(vague)[:2]
    del vague["instances"][typed], vague["instances"][unknown], vague["event_type"][unknown]


def write_ev2(out: Path) -> None:
    ev2 = EV2()
    files = ev2.build()
    release_quirks(files)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "clustering.json").write_text(json.dumps(ev2.clustering(), ensure_ascii=False), encoding="utf-8")


# --- EECKG ----------------------------------------------------------------------------------

def write_eeckg(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "assertions.csv").open("w", encoding="utf-8") as fh:
        for rel, start, end, weight in world.EECKG_ASSERTIONS:
            uri = f"/a/[/r/{rel}/,/c/en/{start}/,/c/en/{end}/]"
            meta = {"dataset": "/d/eeckg", "license": "cc:by/4.0", "sources": [{"contributor": "/s/eeckg"}], "weight": weight}
            fh.write("\t".join([uri, f"/r/{rel}", f"/c/en/{start}", f"/c/en/{end}", json.dumps(meta)]) + "\n")
    with (out / "triples.tsv").open("w", encoding="utf-8") as fh:
        fh.write("head\trelation\ttail\tweight\n")
        for h, r, t, w in world.EECKG_TRIPLES:
            fh.write(f"{h}\t{r}\t{t}\t{w}\n")


# --- AbsPyramid -----------------------------------------------------------------------------

def abs_rows() -> dict[str, list[tuple[str, dict]]]:
    """kind -> [(split, row)] for noun/verb/event, Detection style (with label)."""
    out: dict[str, list[tuple[str, dict]]] = {"noun": [], "verb": [], "event": []}
    for head, noun, nouns, verb, verbs, events, split in world.ABS_HEADS:
        words = head.split()
        for kind, word, concepts in (("noun", noun, nouns), ("verb", verb, verbs)):
            if word is None:
                continue
            i = words.index(word)
            marked = " ".join(words[:i] + [f"<{word}>"] + words[i + 1:])
            for c, label in concepts:
                out[kind].append((split, {"event": marked, "concept": c, "label": label}))
        for c, label in events:
            out["event"].append((split, {"event": f"<{head}>", "concept": c, "label": label}))
    return out


def write_abspyramid(out: Path) -> None:
    rows = abs_rows()
    for task in ("Detection", "Generation"):
        for kind, items in rows.items():
            folder = out / task / f"{kind}_dataset"
            folder.mkdir(parents=True, exist_ok=True)
            for split in ("train", "valid", "test"):
                with (folder / f"{split}.json").open("w", encoding="utf-8") as fh:
                    for s, row in items:
                        if s != split:
                            continue
                        if task == "Generation":
                            if row["label"] != 1:
                                continue
                            row = {"event": row["event"], "concept": row["concept"]}
                        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    merged = out / "Detection" / "merged_dataset"
    merged.mkdir(parents=True, exist_ok=True)
    for split in ("train", "valid", "test"):
        with (merged / f"{split}.json").open("w", encoding="utf-8") as fh:
            for kind, items in rows.items():
                for s, row in items:
                    if s == split:
                        fh.write(json.dumps(dict(row, type=kind), ensure_ascii=False) + "\n")


# --- ASER -----------------------------------------------------------------------------------

SENSES = ["Precedence", "Succession", "Synchronous", "Reason", "Result", "Condition", "Contrast", "Concession",
          "Conjunction", "Instantiation", "Restatement", "ChosenAlternative", "Alternative", "Exception",
          "Co_Occurrence"]
SUBJECTS = {"i": "PRP", "we": "PRP", "he": "PRP", "she": "PRP", "someone": "NN", "personx": "NNP", "persony": "NNP"}
PREPS = {"for", "in", "to", "up"}


def parse_words(text: str, variant: int = 0) -> tuple[list[str], list[str], list[list], str]:
    """A plausible ASER parse of a lemmatised eventuality: (words, pos, dependencies, pattern)."""
    words = text.lower().split()
    pos = []
    for i, w in enumerate(words):
        if i == 0:
            pos.append(SUBJECTS.get(w, "NNS" if w.endswith("s") else "NN"))
        elif w in PREPS:
            pos.append("IN" if w != "up" else "RP")
        elif w == "be":
            pos.append("VB")
        elif i == 1 or (i == 2 and words[1] in ("be", "go", "smoke", "police", "jury", "court", "witness", "lawyer")):
            pos.append("VBP" if variant == 0 else "VB")
        else:
            pos.append("JJ" if w in ("late", "full", "tired", "stressed", "happy", "hungry", "relieved", "good") else "NN")
    verb = next((i for i, p in enumerate(pos) if p.startswith("VB")), 1)
    deps = [[verb, "nsubj", 0]] if verb != 0 else []
    pattern = ["s", "v"]
    for i in range(1, len(words)):
        if i == verb:
            continue
        if pos[i] == "IN":
            deps.append([min(i + 1, len(words) - 1), "case", i])
        elif pos[i] == "JJ":
            deps.append([verb, "acomp" if words[verb] == "be" else "advmod", i])
            pattern.append("a")
        elif pos[i].startswith("NN"):
            rel = "dobj" if i == verb + 1 else "nmod"
            deps.append([verb, rel, i])
            if rel == "dobj":
                pattern.append("o")
    if words[verb] == "be":
        pattern = ["s", "be"] + [p for p in pattern[2:]]
    return words, pos, sorted(deps), "-".join(dict.fromkeys(pattern)) if len(pattern) > 1 else "s-v"


def eventuality(text: str, variant: int = 0, frequency: float = 1.0) -> tuple:
    words, pos, deps, pattern = parse_words(text, variant)
    rendered = [[[g, words[g], pos[g]], r, [d, words[d], pos[d]]] for g, r, d in deps]
    eid = hashlib.sha1(json.dumps([rendered, words, pos]).encode("utf-8")).hexdigest()
    verbs = [w for w, p in zip(words, pos, strict=True) if p.startswith("VB")]
    skeleton = [i for i, p in enumerate(pos) if p[:2] in ("PR", "NN", "VB")]
    info = {
        "_dependencies": deps, "words": words, "pos_tags": pos, "_ners": ["O"] * len(words), "_mentions": {},
        "_verb_indices": [i for i, p in enumerate(pos) if p.startswith("VB")],
        "_skeleton_indices": skeleton, "_skeleton_dependency_indices": list(range(min(2, len(deps)))),
    }
    return (eid, frequency, pattern, " ".join(verbs), " ".join(words[i] for i in skeleton), " ".join(words),
            json.dumps(info).encode("utf-8"))


def write_aser(out: Path, seed: int = 7) -> None:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("KG.db", "concept.db"):
        (out / name).unlink(missing_ok=True)
    texts = [h[0] for h in world.ABS_HEADS] + world.ASER_EVENTUALITIES
    rows, eid_of = [], {}
    for text in texts:
        row = eventuality(text, 0, float(rng.randint(1, 9)))
        rows.append(row)
        eid_of[text] = row[0]
    # the same words under a second eid (another parse), as ASER stores them
    rows.append(eventuality("i pass exam", 1, 2.0))
    conn = sqlite3.connect(out / "KG.db")
    conn.execute("CREATE TABLE Eventualities (_id PRIMARY KEY,frequency REAL,pattern TEXT,verbs TEXT,skeleton_words TEXT,words TEXT,info BLOB)")
    conn.execute("CREATE TABLE Relations (_id PRIMARY KEY,hid TEXT,tid TEXT," + ",".join(f"{s} REAL" for s in SENSES) + ")")
    conn.executemany("INSERT INTO Eventualities VALUES (?,?,?,?,?,?,?)", rows)
    rels = []
    for h, t, senses in world.ASER_RELATIONS:
        hid, tid = eid_of[h], eid_of[t]
        rels.append((hashlib.sha1(f"{hid}${tid}".encode()).hexdigest(), hid, tid, *[float(senses.get(s, 0.0)) for s in SENSES]))
    conn.executemany(f"INSERT INTO Relations VALUES ({','.join('?' * 18)})", rels)
    conn.commit()
    conn.close()

    conn = sqlite3.connect(out / "concept.db")
    conn.execute("CREATE TABLE Concepts (_id PRIMARY KEY,pattern TEXT,info BLOB)")
    conn.execute("CREATE TABLE ConceptInstancePairs (_id PRIMARY KEY,cid TEXT,eid TEXT,pattern TEXT,score REAL)")
    patterns = {r[0]: r[2] for r in rows}
    for words, instances in world.ASER_CONCEPTS.items():
        cid = hashlib.sha1(words.encode("utf-8")).hexdigest()
        inst = [[eid_of[t], patterns[eid_of[t]], score] for t, score in instances]
        pattern = patterns[inst[0][0]]
        info = {"words": words.split(), "instances": inst, "cid": cid}
        conn.execute("INSERT INTO Concepts VALUES (?,?,?)", (cid, pattern, json.dumps(info).encode("utf-8")))
        for eid, pat, score in inst:
            conn.execute("INSERT INTO ConceptInstancePairs VALUES (?,?,?,?,?)",
                         (hashlib.sha1(f"{cid}${eid}".encode()).hexdigest(), cid, eid, pat, score))
    conn.commit()
    conn.close()


# --- CLoMo ----------------------------------------------------------------------------------

VERB = ["provides a necessary assumption to", "provides a sufficient assumption to", "strengthens", "weakens"]


def clomo_item(item: tuple, prompt: str, examples: list[dict]) -> dict:
    ids, split, qtype, p, o, om, q, outp = item
    argument = " ".join(f"Statement{i}: {s}" for i, s in enumerate(p, 1))
    modified = " ".join(f"Statement{i}: {s}" for i, s in enumerate(outp, 1))
    v = VERB[qtype]
    instruction = (f"In the following, you will see an argument and 2 premises, where Premise 1 {v} the Argument. "
                   f"Please modify the Statements in the Argument until Premise 2 {v} the Argument instead, while "
                   f"Premise 1 fails to {v} the Argument. Note that no additional statement should be added. ")
    body = f"Argument: {argument}\nPremise1: {o}\nPremise2: {om}\n\nPlease write the modified argument below: "
    if prompt == "few":
        shots = "".join(
            f"Argument: {e['input_info']['P']} \n{e['input_info']['O']} \n{e['input_info']['Om']}\n\n"
            f"Please write the modified argument below:\n\nModified Argument:\n{e['output']}\n\n" for e in examples)
        body = shots + body
    if prompt == "cot":
        body += "\n\nLet's think step by step. "
    return {"instruction": instruction, "input": body, "output": modified, "qtype": qtype, "id_string": ids,
            "input_info": {"Q": q, "Om": f"Premise2: {om}", "O": f"Premise1: {o}", "P": argument}}


def write_clomo(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for split in ("test", "dev"):
        others = [i for i in world.CLOMO_ITEMS if i[1] != split]
        examples = [clomo_item(i, "zero", []) for i in others[:1]]
        for prompt in ("zero", "few", "cot"):
            data = [clomo_item(i, prompt, examples) for i in world.CLOMO_ITEMS if i[1] == split]
            (out / f"{prompt}_{split}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def main(out: Path = SAMPLES_DIR) -> None:
    write_ev2(out / "ev2")
    write_eeckg(out / "eeckg")
    write_abspyramid(out / "abspyramid")
    write_aser(out / "aser")
    write_clomo(out / "clomo")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES_DIR)
