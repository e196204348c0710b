"""A ``KG.db`` with the shape of one the ASER toolkit writes, for benchmarks and scale tests.

``tests.support.synthetic`` writes one distinct text per eventuality, one sense per relation and a
50-byte ``info``: an ingest of it is faster and smaller than one of a real file, so a bench
on it flatters the loader. This generator reproduces what a file written by the toolkit's
``ASERKGConnection(mode="insert")`` looks like at scale (``formats.md``; the sample in
``../shared/data/samples/aser``):

* **Eventualities**: sha1 ``_id``; ``words`` lower-case lemmas (``i take piece of pizza``);
  ``info`` the ``Eventuality.encode(minimum=True)`` JSON (dependencies, words, POS tags,
  NER tags, mentions, verb/skeleton indices: a few hundred bytes); ``frequency`` a skewed
  REAL. ``DUPLICATE_SHARE`` of the rows repeat the words of another row under another eid
  (other POS tags), spread over the whole file, so they fall into different loader chunks.
* **Relations**: ``_id`` = sha1(hid + "$" + tid), distinct (hid, tid) pairs in no particular
  order (the toolkit inserts rows in the order its caller hands them over); 60% of the rows
  carry one non-zero sense, 30% two, 10% three (~1.5 typed edges per row); senses skewed
  like ASER's (``SENSE_WEIGHTS``: Co_Occurrence ~27% of the edges, Exception ~0.2%); about
  half the counts fractional (discourse senses add ``1/(n1*n2)`` per occurrence); endpoint
  degrees log-normal (median ~5, p99 ~23 at 3 relations per eventuality) plus a few Zipf
  hubs (the biggest ~0.2% of all relation ends: ~12K at 1M/3M).

Deterministic for a seed; 1M eventualities / 3M relations take about a minute to write.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import numpy as np

from eventkg.graphstore.model import ASER_RELATIONS

DUPLICATE_SHARE = 0.035  # rows whose words another row already has
SENSES_PER_ROW = {1: 0.6, 2: 0.3, 3: 0.1}
FRACTIONAL_SHARE = 0.49  # counts that are not whole numbers
# edges per sense in a toolkit-written 1M/3M file (millions); their ratios are what matters
SENSE_WEIGHTS = {
    "Co_Occurrence": 1.2,
    "Conjunction": 0.56,
    "Reason": 0.44,
    "Precedence": 0.43,
    "Synchronous": 0.42,
    "Result": 0.37,
    "Contrast": 0.37,
    "Succession": 0.27,
    "Condition": 0.13,
    "Concession": 0.05,
    "Alternative": 0.04,
    "ChosenAlternative": 0.02,
    "Restatement": 0.015,
    "Instantiation": 0.012,
    "Exception": 0.01,
}
DEGREE_SIGMA = 0.6  # log-normal spread of endpoint weights: p50 ~5, p99 ~23 at 6 ends per eventuality
HUBS = 100  # eventualities with Zipf weights (``i be``, ``it be``, ... in real ASER)
HUB_SHARE = 0.002  # the biggest hub's share of all relation ends
CHUNK = 50_000

_SUBJECTS = (
    "i",
    "you",
    "he",
    "she",
    "we",
    "they",
    "it",
    "personx",
    "persony",
    "people",
    "someone",
    "mother",
    "friend",
    "teacher",
    "doctor",
    "child",
    "dog",
    "company",
    "team",
    "man",
    "woman",
    "student",
)
_FRACTIONS = (0.5, 0.25, 1 / 3, 1 / 6, 1.5, 2.25, 2 / 3, 0.125, 1.25, 0.75)
_PATTERNS = ("s-v-o", "s-v", "s-be-a", "s-be-o", "spass-v", "s-v-v-o", "s-v-v", "s-v-a", "s-v-o-o", "s-v-o-v-o")
_PREPOSITIONS = ("of", "at", "in", "with", "for", "on", "from", "to")


def _syllables(n: int, rng: np.random.Generator, lo: int = 2, hi: int = 4) -> list[str]:
    """``n`` distinct pronounceable pseudo-words."""
    cons, vows = "bcdfghklmnprstvwz", "aeiou"
    out: dict[str, None] = {}
    while len(out) < n:
        k = int(rng.integers(lo, hi + 1))
        out.setdefault(
            "".join(cons[int(rng.integers(len(cons)))] + vows[int(rng.integers(len(vows)))] for _ in range(k))
        )
    return list(out)


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class _Vocab:
    def __init__(self, rng: np.random.Generator) -> None:
        self.verbs = _syllables(800, rng)
        self.nouns = _syllables(2000, rng)
        self.adjs = _syllables(300, rng)


def _eventuality(k: int, dup: int, extras: np.ndarray, vocab: _Vocab) -> tuple[str, str, str, str, bytes, str]:
    """(words, verbs, skeleton_words, pattern, info, eid) of text number ``k`` (variant ``dup``).

    The first three tokens encode ``k`` (subject, verb, object in mixed radix), so texts of
    different ``k`` differ; ``extras`` (the text's own random numbers) add prepositional
    phrases; variants of one ``k`` differ in POS tags only, so in their eids.
    """
    ns, nv, nn = len(_SUBJECTS), len(vocab.verbs), len(vocab.nouns)
    subj, verb, obj = _SUBJECTS[k % ns], vocab.verbs[(k // ns) % nv], vocab.nouns[(k // (ns * nv)) % nn]
    words = [subj, verb, obj]
    pos = ["PRP", "VBP", "NN"]
    deps = [[1, "nsubj", 0], [1, "dobj", 2]]
    for j in range(int(extras[0]) % 4):
        head = len(words) - 1 if j else 2
        words += [_PREPOSITIONS[int(extras[1 + j]) % len(_PREPOSITIONS)], vocab.nouns[int(extras[1 + j]) % nn]]
        pos += ["IN", "NN"]
        deps += [[head, "nmod:" + words[-2], len(words) - 1], [len(words) - 1, "case", len(words) - 2]]
    if dup:  # another parse of the same words: other tags, so another eid
        pos[1] = ("VBD", "VBZ", "VB", "VBG")[dup % 4]
        pos[2] = ("NNS", "NNP", "NNPS")[(dup // 4) % 3] + "-" * (dup // 12)
    ners = ["O"] * len(words)
    mentions: dict = {}
    if subj.startswith("person") or subj in ("mother", "teacher"):
        ners[0] = "PERSON"
        mentions["(0, 1)"] = {"start": 0, "end": 1, "text": subj, "ner": "PERSON", "link": None, "entity": None}
    info = {
        "_dependencies": deps,
        "words": words,
        "pos_tags": pos,
        "_ners": ners,
        "_mentions": mentions,
        "_verb_indices": [1],
        "_skeleton_indices": [0, 1, 2],
        "_skeleton_dependency_indices": [0, 1],
    }
    # eid: sha1 of [deps, words, pos_tags] as the toolkit renders it (formats.md)
    rendered = [[[g, words[g], pos[g]], r, [d, words[d], pos[d]]] for g, r, d in deps]
    eid = _sha1(json.dumps([rendered, words, pos]))
    pattern = _PATTERNS[int(extras[0]) % len(_PATTERNS)]
    return " ".join(words), verb, f"{subj} {verb} {obj}", pattern, json.dumps(info).encode(), eid


def _endpoint_weights(n: int, rng: np.random.Generator) -> np.ndarray:
    w = rng.lognormal(0.0, DEGREE_SIGMA, n)
    w /= w.sum()
    hubs = rng.choice(n, size=min(HUBS, n), replace=False)
    w[hubs] += HUB_SHARE / (np.arange(len(hubs)) + 1)
    return w / w.sum()


def _pairs(n: int, relations: int, rng: np.random.Generator) -> np.ndarray:
    """``relations`` distinct (head, tail) index pairs, no self-loops, in random order."""
    if n < 2:
        raise ValueError("need at least two eventualities for relations")
    if relations > n * (n - 1) // 2:
        raise ValueError(f"{relations} distinct relations do not fit between {n} eventualities")
    cdf = np.cumsum(_endpoint_weights(n, rng))
    cdf[-1] = 1.0
    got = np.empty(0, np.int64)
    while len(got) < relations:
        want = int((relations - len(got)) * 1.1) + 16
        h = np.searchsorted(cdf, rng.random(want), side="right")
        t = np.searchsorted(cdf, rng.random(want), side="right")
        keys = (h * n + t)[h != t]
        both = np.concatenate([got, keys])
        _, first = np.unique(both, return_index=True)
        got = both[np.sort(first)]  # keep first occurrences, in drawing order
    got = got[:relations]
    return np.stack([got // n, got % n], axis=1)


def _counts(rows: int, rng: np.random.Generator) -> np.ndarray:
    """(rows, 15) sense counts: 1-3 distinct non-zero senses per row, skewed, half fractional."""
    names = list(ASER_RELATIONS)
    p = np.array([SENSE_WEIGHTS[s] for s in names])
    p /= p.sum()
    out = np.zeros((rows, len(names)))
    k = rng.choice(list(SENSES_PER_ROW), size=rows, p=list(SENSES_PER_ROW.values()))
    gumbel = np.log(p) - np.log(-np.log(rng.random((rows, len(names)))))  # sampling without replacement
    order = np.argsort(-gumbel, axis=1)
    for j in range(3):
        rows_j = np.flatnonzero(k > j)
        cols = order[rows_j, j]
        whole = np.minimum(rng.geometric(0.55, len(rows_j)), 50).astype(float)
        frac = np.array(_FRACTIONS)[rng.integers(len(_FRACTIONS), size=len(rows_j))]
        out[rows_j, cols] = np.where(rng.random(len(rows_j)) < FRACTIONAL_SHARE, frac, whole)
    return out


def make_aser_shape_kg(path: str | Path, eventualities: int, relations: int, *, seed: int = 7) -> Path:
    """Write a toolkit-shaped KG.db: ``eventualities`` rows, ``relations`` distinct (hid, tid) rows."""
    path = Path(path)
    path.unlink(missing_ok=True)
    rng = np.random.default_rng(seed)
    vocab = _Vocab(rng)
    n_dup = int(round(eventualities * DUPLICATE_SHARE))
    n_text = eventualities - n_dup
    # text number of each row: every text once, plus n_dup repeats, shuffled over the file
    text_of = np.concatenate([np.arange(n_text), rng.integers(0, max(n_text, 1), n_dup)])
    variant = np.concatenate([np.zeros(n_text, np.int64), np.arange(1, n_dup + 1)])
    order = rng.permutation(eventualities)
    text_of, variant = text_of[order], variant[order]
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-262144")  # 256 MB: the _id indexes take random sha1 keys
    conn.execute(
        "CREATE TABLE Eventualities (_id PRIMARY KEY,frequency REAL,pattern TEXT,verbs TEXT,"
        "skeleton_words TEXT,words TEXT,info BLOB)"
    )
    conn.execute(
        "CREATE TABLE Relations (_id PRIMARY KEY,hid TEXT,tid TEXT,"
        + ",".join(f"{s} REAL" for s in ASER_RELATIONS)
        + ")"
    )
    extras = rng.integers(0, 1 << 30, size=(max(n_text, 1), 4))
    freq = np.minimum(rng.zipf(2.2, eventualities), 10_000).astype(float)
    eids: list[str] = []
    seen: set[str] = set()
    for start in range(0, eventualities, CHUNK):
        rows = []
        for i in range(start, min(start + CHUNK, eventualities)):
            dup = int(variant[i])
            k = int(text_of[i])
            while True:
                words, verbs, skeleton, pattern, info, eid = _eventuality(k, dup, extras[k], vocab)
                if eid not in seen:  # a variant whose tags repeat another's: tag it again
                    break
                dup += 4
            seen.add(eid)
            eids.append(eid)
            rows.append((eid, float(freq[i]), pattern, verbs, skeleton, words, info))
        conn.executemany("INSERT INTO Eventualities VALUES (?,?,?,?,?,?,?)", rows)
    del seen
    pairs = _pairs(eventualities, relations, rng) if relations else np.empty((0, 2), np.int64)
    insert = f"INSERT INTO Relations VALUES ({','.join('?' * (3 + len(ASER_RELATIONS)))})"
    for start in range(0, relations, CHUNK * 4):
        part = pairs[start : start + CHUNK * 4]
        counts = _counts(len(part), rng).tolist()
        rows = []
        for (h, t), c in zip(part.tolist(), counts, strict=True):
            hid, tid = eids[h], eids[t]
            rows.append((_sha1(f"{hid}${tid}"), hid, tid, *c))
        conn.executemany(insert, rows)
    conn.commit()
    conn.close()
    return path
