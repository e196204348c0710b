"""Hard negatives for CEC questions: events close to the answer that are not answers.

A negative for "which event is <relation> of Q?" (answer A) must look like A, so it is
drawn from A's nearest neighbours in the FAISS index (the EV² paper's section 3.3 had humans
pick candidates; here embeddings do). It must not be a right answer in
disguise, so it is rejected when:

- it is linked to Q by the relation's family anywhere near Q: within ``radius`` hops
  (default 2, either direction) over the stored types whose paths induce that family by
  Table 1 (temporal: BEFORE, CAUSES, HAS_SUBEVENT; causal: CAUSES, HAS_SUBEVENT;
  hierarchical: HAS_SUBEVENT), or reached by a walk of up to ``max_path`` (4, the paper's
  longest question path) edges whose relation sequence induces a relation of the family
  (``eventkg.queries.induction.induce``'s Table 1 automaton; were that module absent, the whole ``max_path``-hop
  neighbourhood over those types is excluded instead, which is stricter);
- it is a near-duplicate of A (cosine similarity >= ``similarity_cap``) or of a negative
  already chosen;
- it is Q, A, or in ``exclude``.

The first rule asks the store for Q's neighbourhood, a search in the engine per query that dominates
a run over a graph of ASER's size; a caller that vets every negative against an in-memory graph
itself (the question generator does, :mod:`eventkg.queries.questions.cec`) passes
``vet_links=False`` and skips it.

Negatives come from the answer's level (or ``level`` when given). With ``clusters`` set,
the index's vectors are split by ``faiss.Kmeans`` and negatives are taken from distinct
clusters first. With ``rng`` (a seed, ``random.Random`` or numpy ``Generator``) the k
are drawn from the best ``4k`` candidates, reproducibly; without it, the k nearest.
"""

from __future__ import annotations

import random
import warnings
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import FAMILIES, INVERSE, STORED_TO_FORWARD, check_event_level, family_of
from eventkg.queries.errors import NegativesError
from eventkg.queries.vectors.index import LEVELS, VectorIndex, open_index

if TYPE_CHECKING:  # imported where k-means runs: importing this module must not load faiss
    import faiss

#: stored types whose paths can induce a relation of each family (Table 1 of the EV² paper)
INDUCING_TYPES: dict[str, tuple[str, ...]] = {
    "temporal": ("BEFORE", "CAUSES", "HAS_SUBEVENT"),
    "causal": ("CAUSES", "HAS_SUBEVENT"),
    "hierarchical": ("HAS_SUBEVENT",),
}
POOL_FACTOR = 4
LINK_CACHE = 1024


def require_event_relations(store: GraphStore, family: str) -> None:
    """Raise a clear error when the store has none of the edges that ask/vet ``family``.

    An ASER store ingested without ``--map-events`` holds only discourse relations
    (PRECEDENCE, RESULT...), no CAUSES/BEFORE/HAS_SUBEVENT: the answer to a question and
    the links that disqualify a negative are both missing, so say how to get them.
    """
    from eventkg.graphstore.model import ASER_RELATIONS, upper_snake
    from eventkg.queries.graph.columnar import edge_counts

    types = INDUCING_TYPES[family]
    if any(edge_counts(store, list(types)).values()):
        return
    aser = sum(edge_counts(store, [upper_snake(a) for a in ASER_RELATIONS]).values())
    needed = "/".join(types)
    if aser:
        raise NegativesError(
            f"store {store.url} has no {needed} edges but {aser:,} ASER discourse relations: it was "
            "ingested from ASER without --map-events; re-ingest with `eventkg ingest aser KG.db --map-events` "
            "(it adds CAUSES/BEFORE edges from Result/Reason/Precedence/Succession) and ask again"
        )
    raise NegativesError(
        f"store {store.url} has no {needed} edges, which {family} questions and their negatives need; "
        "ingest EV² (`eventkg ingest ev2 ...`), EECKG, or ASER with --map-events"
    )


def _induction_automaton() -> tuple[Any, dict[str, int], int] | None:
    """``eventkg.queries.induction.induce``'s Table 1 automaton (AUTOMATON, CODE, DEAD), when that module is there."""
    try:
        from eventkg.queries.induction.table1 import AUTOMATON, CODE, DEAD
    except ImportError:
        return None
    return AUTOMATON, CODE, DEAD


def _random_or_none(rng: Any) -> random.Random | None:
    """None stays None (take the nearest, no draw); an int seed, a ``random.Random`` or a numpy ``Generator`` -> ``random.Random``."""
    if rng is None or isinstance(rng, random.Random):
        return rng
    if isinstance(rng, int | np.integer):
        return random.Random(int(rng))
    if isinstance(rng, np.random.Generator):
        return random.Random(int(rng.integers(2**63)))
    raise TypeError(f"rng must be None, an int, random.Random or numpy Generator, not {type(rng).__name__}")


class NearestNegatives:
    """Samples hard negative events for (query, relation, answer) triples of one store.

    ``embed_model`` is the sentence-embedding model of the store's vector index (default:
    ``$EVENTKG_EMBED_MODEL``, else the bundled one); ``model_name=`` is its deprecated spelling
    (a ``DeprecationWarning``; it goes in the next release).
    """

    def __init__(
        self,
        store: GraphStore,
        embed_model: str | None = None,
        level: str | None = None,
        similarity_cap: float = 0.9,
        clusters: int | None = None,
        *,
        radius: int = 2,
        max_path: int = 4,
        rebuild: bool = False,
        vet_links: bool = True,
        model_name: str | None = None,
    ) -> None:
        check_event_level(level, NegativesError)
        if model_name is not None:
            warnings.warn("NearestNegatives(model_name=...) is deprecated: use embed_model=; model_name goes in the "
                          "next release", DeprecationWarning, stacklevel=2)
            embed_model = embed_model or model_name
        if clusters is not None and clusters < 2:
            raise NegativesError("clusters must be at least 2")
        self.store = store
        self.embed_model = embed_model
        self.level = level
        self.similarity_cap = similarity_cap
        self.clusters = clusters
        self.radius = radius
        self.max_path = max_path
        self._rebuild = rebuild
        self.vet_links = vet_links
        self._indexes: dict[str | None, VectorIndex] = {}
        self._kmeans: dict[str | None, faiss.Kmeans] = {}
        self._links: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()
        self._automaton = _induction_automaton()

    # -- public -----------------------------------------------------------------------------
    def sample(
        self,
        query_event_id: str,
        relation: str,
        answer_id: str,
        k: int = 3,
        exclude: set[str] = frozenset(),  # type: ignore[assignment]
        rng=None,
    ) -> list[str]:
        """Up to ``k`` negative event ids, hardest (most similar to the answer) first."""
        return [cid for cid, _ in self.sample_scored(query_event_id, relation, answer_id, k, exclude, rng)]

    def sample_scored(
        self,
        query_event_id: str,
        relation: str,
        answer_id: str,
        k: int = 3,
        exclude: Iterable[str] = frozenset(),
        rng=None,
    ) -> list[tuple[str, float]]:
        """Like :meth:`sample`, with each negative's cosine similarity to the answer."""
        try:
            family = family_of(relation)
        except ValueError as exc:
            raise NegativesError(str(exc)) from exc
        rnd = _random_or_none(rng)
        vi = self.index_for(answer_id)
        anchor = vi.vector(answer_id)
        banned = {query_event_id, answer_id, *exclude}
        if self.vet_links:  # else the caller vets every negative against its own graph
            banned |= self.linked(query_event_id, family)
        pool_size = k * POOL_FACTOR if rnd is not None else k
        pool = self._candidates(vi, anchor, banned, pool_size + (k * 4 if self.clusters else 0))
        if rnd is not None:
            head = pool[:pool_size]
            rnd.shuffle(head)
            pool = head + pool[pool_size:]
        chosen = self._select(vi, pool, k)
        return sorted(chosen, key=lambda c: -c[1])

    def linked(self, query_event_id: str, family: str) -> frozenset[str]:
        """Events linked to the query by the family (see the module docstring); cached."""
        key = (query_event_id, family)
        if key in self._links:
            self._links.move_to_end(key)
            return self._links[key]
        types = INDUCING_TYPES[family]
        near = self.store.neighbourhood([query_event_id], hops=self.radius, rel_types=types, direction="both")
        out = set(near.nodes)
        if self.max_path > self.radius:
            far = self.store.neighbourhood([query_event_id], hops=self.max_path, rel_types=types, direction="both")
            out |= self._induced(far, query_event_id, family) if self._automaton else set(far.nodes)
        out.discard(query_event_id)
        linked = frozenset(out)
        self._links[key] = linked
        if len(self._links) > LINK_CACHE:
            self._links.popitem(last=False)
        return linked

    def index_for(self, answer_id: str) -> VectorIndex:
        """The vector index of the answer's level (or the sampler's level)."""
        level = self.level
        if level is None:
            node = self.store.get_nodes("Event", [answer_id]).get(answer_id)
            if node is None:
                raise NegativesError(f"answer event {answer_id} is not in the store")
            level = node.get("level") if node.get("level") in LEVELS else None
        if level not in self._indexes:
            self._indexes[level] = open_index(self.store, self.embed_model, level, rebuild=self._rebuild)
        vi = self._indexes[level]
        if answer_id not in vi:
            raise NegativesError(f"answer event {answer_id} has no text in the {level or 'all'} vector index")
        return vi

    # -- internals --------------------------------------------------------------------------
    def _induced(self, g, start: str, family: str) -> set[str]:
        """Nodes reached from ``start`` by a walk whose relation sequence induces the family.

        The walk carries the Table 1 automaton state (from ``eventkg.queries.induction.induce``), so
        sequences no rule can complete are dropped at once. Walks may revisit nodes, which
        can only add links (the safe side for negatives).
        """
        automaton, code, dead = self._automaton  # type: ignore[misc]
        members = {code[r] for r in FAMILIES[family]}
        steps: dict[str, list[tuple[str, int]]] = {}
        for src, dst, rtype in g.edges(keys=True):
            fwd = STORED_TO_FORWARD.get(rtype)
            if fwd is None:
                continue
            steps.setdefault(src, []).append((dst, code[fwd]))
            steps.setdefault(dst, []).append((src, code[INVERSE[fwd]]))
        found: set[str] = set()
        frontier = {(start, automaton.start)}
        for _ in range(self.max_path):
            nxt = set()
            for node, state in frontier:
                for other, c in steps.get(node, ()):
                    ns = automaton.trans[state][c]
                    if ns == dead or (other, ns) in nxt:
                        continue
                    nxt.add((other, ns))
                    if automaton.output[ns] in members:
                        found.add(other)
            frontier = nxt
        return found

    def _candidates(
        self, vi: VectorIndex, anchor: np.ndarray, banned: set[str], want: int
    ) -> list[tuple[str, float, np.ndarray]]:
        """Nearest neighbours of the anchor that pass the link, exclusion and cap filters."""
        n = len(vi)
        fetch = min(n, want * 4 + len(banned) + 16)
        while True:
            hits = vi.search(anchor, fetch)[0]
            pool = [(cid, s) for cid, s in hits if cid not in banned and s < self.similarity_cap]
            if len(pool) >= want or fetch >= n:
                break
            fetch = min(n, fetch * 4)
        vecs = vi.vectors([cid for cid, _ in pool])
        return [(cid, s, vecs[cid]) for cid, s in pool]

    def _select(self, vi: VectorIndex, pool: list[tuple[str, float, np.ndarray]], k: int) -> list[tuple[str, float]]:
        """Take k from the pool in order, no two near-duplicates, distinct clusters first."""
        labels = self.cluster_labels(vi, [p[2] for p in pool]) if self.clusters else None
        chosen: list[tuple[str, float, np.ndarray]] = []
        used_clusters: set[int] = set()
        for spread in ((True, False) if labels is not None else (False,)):
            for i, (cid, s, vec) in enumerate(pool):
                if len(chosen) >= k:
                    break
                if any(c[0] == cid for c in chosen):
                    continue
                if spread and labels[i] in used_clusters:  # type: ignore[index]
                    continue
                if any(float(vec @ c[2]) >= self.similarity_cap for c in chosen):
                    continue
                chosen.append((cid, s, vec))
                if labels is not None:
                    used_clusters.add(int(labels[i]))
        return [(cid, s) for cid, s, _ in chosen]

    def cluster_labels(self, vi: VectorIndex, vectors: list[np.ndarray]) -> np.ndarray:
        """k-means cluster of each vector (centroids trained once per index on a sample)."""
        key = vi.manifest.get("level")
        if key not in self._kmeans:
            n, d = len(vi), int(vi.manifest["dim"])
            n_clusters = min(self.clusters or 2, max(1, n))
            take = np.random.default_rng(1234).choice(n, size=min(n, n_clusters * 256), replace=False)
            sample = vi.row_vectors(np.sort(take))
            import faiss

            km = faiss.Kmeans(d, n_clusters, niter=20, seed=1234, verbose=False)
            km.train(sample)
            self._kmeans[key] = km
        if not vectors:
            return np.zeros(0, dtype=np.int64)
        _, labels = self._kmeans[key].index.search(np.stack(vectors), 1)
        return labels[:, 0]
