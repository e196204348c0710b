"""The shortcut checks: each one a way to pick the answer without the reasoning, scored on a file.

Every check gives a :class:`Finding`: its accuracy (ties share the credit, so a feature that
says nothing scores chance), the chance level, ``n``, a Wilson 95% interval and, for the answer
position, a chi-square p-value. The learned baselines (choice-only, form-only, CRR's label prior
with and without the pair's similarity) are scored by 5-fold cross-validation grouped by question
(scikit-learn): a question's choices are never both trained on and tested.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from eventkg.queries.audit.items import Item

#: how far a shortcut may stray from chance before the file fails the audit
TOLERANCE = 0.10
#: the smallest chi-square p-value of the answer positions a file passes with
POSITION_P = 0.01
FOLDS = 5
_WORD = re.compile(r"[a-z0-9]+")
#: the words an EV² context states each relation with (both subevent directions read alike)
RELATION_PHRASES = {"Causes": "causes", "IsResult": "is a result of", "Before": "is before", "After": "is after",
                    "HasSubevent": "is a subevent of", "IsSubevent": "is a subevent of"}
_PHRASES = sorted(set(RELATION_PHRASES.values()))
_SENTENCE = re.compile(r'"([^"]+)" (' + "|".join(map(re.escape, _PHRASES)) + r') "([^"]+)"')
_STOP = frozenset("a an the of to in on and or is was be for with by at as it its his her their he she they that "
                  "this which what who".split())


@dataclass
class Finding:
    """One check on one file."""

    check: str
    score: float  # accuracy of the shortcut (position: share of the commonest answer position)
    chance: float
    n: int
    ci: tuple[float, float]
    p: float | None = None  # chi-square p-value (answer position)
    note: str = ""

    @property
    def passed(self) -> bool:
        """Within the tolerance of chance (position: uniform at p >= POSITION_P; duplicates: none)."""
        if self.check == "position":
            return self.p is None or self.p >= POSITION_P
        if self.check == "duplicates":
            return self.score == 0
        return abs(self.score - self.chance) <= TOLERANCE

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ci": list(self.ci), "passed": self.passed}


def wilson(p: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` over ``n`` trials."""
    if n == 0:
        return (0.0, 1.0)
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (round(max(0.0, c - h), 4), round(min(1.0, c + h), 4))


def finding(check: str, credit: Sequence[float], chance: float, note: str = "") -> Finding:
    """A :class:`Finding` from per-question credit (1 right, 0 wrong, 1/t for a t-way tie)."""
    n = len(credit)
    score = float(np.mean(credit)) if n else 0.0
    return Finding(check, round(score, 4), round(chance, 4), n, wilson(score, n), note=note)


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def pick_credit(values: Sequence[float], gold: int, largest: bool = True) -> float:
    """Credit of picking the choice with the largest (or smallest) value, ties shared."""
    v = np.asarray(values, dtype=float)
    best = v.max() if largest else v.min()
    tied = np.flatnonzero(np.isclose(v, best))
    return 1.0 / len(tied) if gold in tied else 0.0


def extreme_pair(name: str, items: list[Item], values: Callable[[Item], Sequence[float]], note: str = "") -> list[Finding]:
    """``name_max`` and ``name_min``: pick the choice with the most / least of a feature."""
    vals = [values(it) for it in items]
    chance = 1 / len(items[0].choices)
    return [finding(f"{name}_max", [pick_credit(v, it.gold, True) for v, it in zip(vals, items, strict=True)], chance, note),
            finding(f"{name}_min", [pick_credit(v, it.gold, False) for v, it in zip(vals, items, strict=True)], chance, note)]


# -- position and duplicates -----------------------------------------------------------------
def position(items: list[Item]) -> Finding:
    """Share of the commonest answer position; chi-square of the positions against uniform."""
    from scipy.stats import chisquare

    k = len(items[0].choices)
    counts = np.bincount([it.gold for it in items], minlength=k)
    p = float(chisquare(counts).pvalue) if len(items) > 1 else 1.0
    share = counts.max() / len(items)
    f = Finding("position", round(float(share), 4), round(1 / k, 4), len(items), wilson(share, len(items)), round(p, 6),
                note="answers per position " + "/".join(map(str, counts.tolist())))
    return f


def duplicates(items: list[Item]) -> Finding:
    """Share of questions whose (event, relation, answer) an earlier question already asked."""
    seen: set[tuple[str, str, str]] = set()
    dup = 0
    for it in items:
        key = (it.e0_key if it.level == "schema" else it.e0, it.rel, it.e1)
        dup += key in seen
        seen.add(key)
    share = dup / len(items)
    return Finding("duplicates", round(share, 4), 0.0, len(items), wilson(share, len(items)), note=f"{dup} repeated")


# -- learned baselines -------------------------------------------------------------------------
def _folds(groups: Sequence[Any], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Grouped folds (every row of a question in one fold), groups shuffled by ``seed``."""
    uniq = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(uniq))
    fold_of = {uniq[i]: k % FOLDS for k, i in enumerate(order)}
    f = np.array([fold_of[g] for g in groups])
    return [(np.flatnonzero(f != k), np.flatnonzero(f == k)) for k in range(FOLDS) if (f == k).any()]


def cec_classifier(items: list[Item], featurise: Callable[[list[str], list[str]], Any], seed: int) -> list[float]:
    """Per-question credit of a choice scorer trained on other questions' choices (gold vs not).

    ``featurise(train_texts, test_texts)`` gives the two feature matrices (fitted on train only)."""
    from sklearn.linear_model import LogisticRegression

    texts = [c for it in items for c in it.choices]
    y = np.array([int(j == it.gold) for it in items for j in range(len(it.choices))])
    q = np.array([i for i, it in enumerate(items) for _ in it.choices])
    credit = np.zeros(len(items))
    for tr, te in _folds(q.tolist(), seed):
        xtr, xte = featurise([texts[i] for i in tr], [texts[i] for i in te])
        if len(set(y[tr])) < 2:
            credit[np.unique(q[te])] = 1 / len(items[0].choices)
            continue
        model = LogisticRegression(max_iter=2000, class_weight="balanced").fit(xtr, y[tr])
        s = model.decision_function(xte)
        by_q: dict[int, list[float]] = defaultdict(list)
        for qi, si in zip(q[te], s, strict=True):
            by_q[int(qi)].append(float(si))
        for qi, scores in by_q.items():
            credit[qi] = pick_credit(scores, items[qi].gold)
    return credit.tolist()


def label_classifier(items: list[Item], features: Callable[[list[int], list[int]], tuple[Any, Any]],
                     seed: int, groups: Sequence[Any] | None = None) -> list[float]:
    """Per-question credit of a CRR label classifier (label = answer index) trained on other questions
    (``groups``: questions kept in one fold, e.g. those sharing a context; None: each its own)."""
    from sklearn.linear_model import LogisticRegression

    y = np.array([it.gold for it in items])
    credit = np.zeros(len(items))
    for tr, te in _folds(list(groups) if groups is not None else [it.qid + f"#{i}" for i, it in enumerate(items)],
                         seed):
        xtr, xte = features(tr.tolist(), te.tolist())
        if len(set(y[tr])) < 2:
            credit[te] = (y[te] == y[tr][0]).astype(float)
            continue
        model = LogisticRegression(max_iter=2000).fit(xtr, y[tr])
        proba = model.predict_proba(xte)
        for row, i in zip(proba, te, strict=True):
            full = np.full(len(items[i].choices), -1.0)
            full[model.classes_] = row
            credit[i] = pick_credit(full, int(y[i]))
    return credit.tolist()


def tfidf_features(train: list[str], test: list[str]) -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    try:
        return vec.fit_transform(train), vec.transform(test)
    except ValueError:  # no term occurs twice
        vec = TfidfVectorizer(ngram_range=(1, 1), sublinear_tf=True)
        return vec.fit_transform(train), vec.transform(test)


def form(text: str) -> list[float]:
    """Surface form of a text: length in words and characters, mean word length, punctuation, capitals, digits."""
    toks = text.split()
    return [math.log1p(len(toks)), math.log1p(len(text)), (sum(map(len, toks)) / len(toks)) if toks else 0.0,
            sum(text.count(c) for c in ",;:"), sum(t[:1].isupper() for t in toks), sum(ch.isdigit() for ch in text),
            text.count("_"), float(text.rstrip().endswith("."))]


def form_features(train: list[str], test: list[str]) -> tuple[Any, Any]:
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit([form(t) for t in train])
    return sc.transform([form(t) for t in train]), sc.transform([form(t) for t in test])


# -- the checks per task -----------------------------------------------------------------------
class Similarity:
    """Cosine similarity of texts under the configured sentence model, encoded once per text."""

    def __init__(self, embed_model: str | None) -> None:
        from eventkg.queries.vectors.embeddings import Embedder

        self.embedder = Embedder(embed_model, device="cpu")
        self.vec: dict[str, np.ndarray] = {}

    def prepare(self, texts: set[str]) -> None:
        todo = sorted(t for t in texts if t not in self.vec)
        if todo:
            for t, v in zip(todo, self.embedder.encode(todo), strict=True):
                self.vec[t] = v

    def __call__(self, a: str, b: str) -> float:
        return float(self.vec[a] @ self.vec[b])


def infile_named(items: list[Item]) -> Callable[[int, str], int]:
    """How many OTHER questions of the file name a text as their queried event or in their context.

    The answers of a generated file are often the events other questions ask about: the choice named
    most so (or, by elimination, least) picks the answer without reading the question."""
    rows: dict[str, set[int]] = defaultdict(set)
    for i, it in enumerate(items):
        for x in {it.e0, *(y for tr in it.context_triples for y in (tr[0], tr[2]))}:
            rows[x].add(i)

    def named(i: int, text: str) -> int:
        got = rows.get(text)
        return 0 if got is None else len(got) - (i in got)

    return named


def infile_graph(items: list[Item]) -> tuple[Callable[[int, str], int], Callable[[int, str], int]]:
    """(degree, mentions) of a text in the graph the OTHER questions of the file state.

    Degree: distinct neighbours over the other questions' context triples; mentions: how many
    other questions name the text anywhere (context, queried event, choices)."""
    nbr_rows: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    mention_rows: dict[str, set[int]] = defaultdict(set)
    for i, it in enumerate(items):
        for h, _, t in it.context_triples:
            nbr_rows[h][t].add(i)
            nbr_rows[t][h].add(i)
        for x in {it.e0, *(it.choices if it.task == "CEC" else (it.e1,)),
                  *(y for tr in it.context_triples for y in (tr[0], tr[2]))}:
            mention_rows[x].add(i)

    def degree(i: int, text: str) -> int:
        return sum(1 for rows in nbr_rows.get(text, {}).values() if rows - {i})

    def mentions(i: int, text: str) -> int:
        return len(mention_rows.get(text, set()) - {i})

    return degree, mentions


def cec_checks(items: list[Item], seed: int, sim: Similarity | None, store: StoreView | None) -> list[Finding]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    out = [position(items), finding("choice_only", cec_classifier(items, tfidf_features, seed), 0.25),
           finding("form_only", cec_classifier(items, form_features, seed), 0.25)]
    chance = 1 / len(items[0].choices)
    for f in out[1:]:
        f.chance = round(chance, 4)
    prompt = [f"{it.question} {it.context}".replace("_", " ") for it in items]  # names read as words
    out += extreme_pair("word_overlap", items,
                        lambda it: [len(words(c) & words(prompt[it.index])) / max(1, len(words(c))) for c in it.choices])
    vec = TfidfVectorizer(sublinear_tf=True).fit(prompt + [c for it in items for c in it.choices])
    tf_prompt = vec.transform(prompt)
    tf_choice = [vec.transform(it.choices) for it in items]
    out += extreme_pair("tfidf_overlap", items, lambda it: (tf_choice[it.index] @ tf_prompt[it.index].T).toarray().ravel())
    if sim is not None:
        sim.prepare({t for it in items for t in (it.e0, *it.choices)})
        out += extreme_pair("similar_to_event", items, lambda it: [sim(it.e0, c) for c in it.choices])
    degree, mentions = infile_graph(items)
    out += extreme_pair("infile_degree", items, lambda it: [degree(it.index, c) for c in it.choices])
    out += extreme_pair("infile_mentions", items, lambda it: [mentions(it.index, c) for c in it.choices])
    named = infile_named(items)
    out += extreme_pair("infile_named", items, lambda it: [named(it.index, c) for c in it.choices])
    if store is not None:
        out += extreme_pair("store_degree", items, lambda it: [store.degree(it, j) for j in range(len(it.choices))])
        out += extreme_pair("store_frequency", items, lambda it: [store.frequency(it, j) for j in range(len(it.choices))])
    out.append(duplicates(items))
    return out


def relation_words(it: Item) -> list[float]:
    """CRR: how often the context states each choice's relation in words ("... is after ..." -> After); Vague 0."""
    text = it.context.lower()
    return [float(text.count(RELATION_PHRASES[c])) if c in RELATION_PHRASES else 0.0 for c in it.choices]


def context_relations(it: Item) -> list[float]:
    """CRR: the relations the context states, by phrase and by where the queried event stands in the
    sentence (head, tail, neither): what a classifier may read from the context's relations alone."""
    out = [0.0] * (3 * len(_PHRASES))
    e0 = {it.e0_key, it.e0}
    for h, phrase, t in _SENTENCE.findall(it.context):
        side = 0 if h in e0 else 1 if t in e0 else 2
        out[3 * _PHRASES.index(phrase) + side] += 1.0
    return out


def crr_checks(items: list[Item], seed: int, sim: Similarity | None, store: StoreView | None) -> list[Finding]:
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    chance = 1 / len(items[0].choices)
    fam = OneHotEncoder(handle_unknown="ignore").fit([[it.family] for it in items])
    famx = fam.transform([[it.family] for it in items]).toarray()

    def with_family(cols: np.ndarray | None) -> Callable[[list[int], list[int]], tuple[Any, Any]]:
        def features(tr: list[int], te: list[int]) -> tuple[Any, Any]:
            if cols is None:
                return famx[tr], famx[te]
            sc = StandardScaler().fit(cols[tr])
            x = sc.transform(cols)
            # the pair's feature interacts with the family: its meaning may differ per family
            full = np.hstack([famx, x, *(x * famx[:, [k]] for k in range(famx.shape[1]))])
            return full[tr], full[te]
        return features

    out = [position(items), finding("label_prior", label_classifier(items, with_family(None), seed), chance)]
    lexical = np.array([[len(words(it.e0) & words(it.e1)) / max(1, len(words(it.e0) | words(it.e1)))] for it in items])
    out.append(finding("prior_word_overlap", label_classifier(items, with_family(lexical), seed), chance))
    if sim is not None:
        sim.prepare({t for it in items for t in (it.e0, it.e1)})
        cos = np.array([[sim(it.e0, it.e1)] for it in items])
        out.append(finding("prior_similarity", label_classifier(items, with_family(cos), seed), chance))
    pair = [f"{it.e0} || {it.e1}" for it in items]

    def pair_text(tr: list[int], te: list[int]) -> tuple[Any, Any]:
        from scipy.sparse import csr_matrix, hstack

        a, b = tfidf_features([pair[i] for i in tr], [pair[i] for i in te])
        return hstack([a, csr_matrix(famx[tr])]).tocsr(), hstack([b, csr_matrix(famx[te])]).tocsr()

    # a related question and its Vague twin share e0 with different labels: folds keep an e0 whole, or
    # the classifier is tested on the twin of what it learned and reads below chance
    out.append(finding("pair_only", label_classifier(items, pair_text, seed,
                                                     groups=[it.e0_key or it.e0 for it in items]), chance))
    forms = np.array([form(it.e0) + form(it.e1) for it in items])
    out.append(finding("form_only", label_classifier(items, with_family(forms), seed), chance))
    degree, mentions = infile_graph(items)
    graph = np.array([[math.log1p(degree(i, it.e1)), math.log1p(mentions(i, it.e1)),
                       math.log1p(degree(i, it.e0)), math.log1p(mentions(i, it.e0))] for i, it in enumerate(items)])
    out.append(finding("prior_infile_graph", label_classifier(items, with_family(graph), seed), chance))
    out.append(finding("context_relation_word", [pick_credit(relation_words(it), it.gold) for it in items], chance))
    stated = np.array([context_relations(it) for it in items])
    out.append(finding("context_relations", label_classifier(items, with_family(stated), seed,
                                                              groups=[it.context or it.qid for it in items]), chance))
    if store is not None:
        st = np.array([[math.log1p(store.degree_of(it.e1_type)), math.log1p(store.frequency_of(it.e1_type))]
                       for it in items])
        out.append(finding("prior_store_graph", label_classifier(items, with_family(st), seed), chance))
    out.append(duplicates(items))
    return out


class StoreView:
    """Degree and frequency in a store's graph of the events a question names (by name or type)."""

    def __init__(self, csr: Any, frequency: dict[int, float] | None = None) -> None:
        self.csr = csr
        self.freq = frequency
        keep = np.flatnonzero(csr.level == 0)
        self.pos = {csr.name(int(p)): int(p) for p in keep}

    def _p(self, name: str) -> int | None:
        return self.pos.get(name)

    def degree_of(self, name: str) -> float:
        p = self._p(name)
        return float(self.csr.degree(p)) if p is not None else 0.0

    def frequency_of(self, name: str) -> float:
        p = self._p(name)
        if p is None:
            return 0.0
        if self.freq is not None:
            return float(self.freq.get(p, 0.0))
        return float(self.csr.inst_indptr[p + 1] - self.csr.inst_indptr[p])

    def degree(self, it: Item, j: int) -> float:
        return self.degree_of(it.choice_types[j])

    def frequency(self, it: Item, j: int) -> float:
        return self.frequency_of(it.choice_types[j])


