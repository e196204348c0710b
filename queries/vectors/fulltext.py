"""Full-text search over event texts, beside the vector index: the keyword half of hybrid seeds.

A dense index misses what a sentence embedding blurs (a rare name, an exact phrase); keyword
search finds it. :func:`open_fulltext` gives, for a :class:`~eventkg.queries.vectors.index.VectorIndex`,
a BM25 index over the texts of the very events it indexes, in the same order (position ``i`` is
``vi.ids[i]``), so both halves name events alike. BM25 is the ``bm25s`` library's (sparse
matrices, no server); texts are lower-cased, split into words of two or more characters,
English stop words dropped, Porter-stemmed (nltk). The index is saved in the store's index
folder as ``bm25-<level>-<fingerprint>/`` and rebuilt exactly when the vector index's fingerprint
changes, so the two are always of the same events; older folders are removed. On a Neo4j
store, :func:`open_fulltext` gives Neo4j's own full-text index over ``Event.text`` instead
(:data:`NEO4J_INDEX`, created once through the store, kept by the server as the graph changes).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from eventkg.graphstore.base import GraphStore
from eventkg.progress import Notice

_WORD = re.compile(r"\w\w+")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    return str(_stemmer().stem(word))


def terms(text: str) -> list[str]:
    """The BM25 terms of a text (lower case, stop words dropped, stemmed)."""
    stop = _stopwords()
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in stop]


@dataclass
class FullTextIndex:
    """BM25 over the texts of one vector index's events (position ``i`` = ``ids[i]``)."""

    bm25: Any
    ids: np.ndarray

    def scores(self, text: str) -> np.ndarray:
        """The BM25 score of every indexed event for ``text`` (zeros when no term is known)."""
        vocab = self.bm25.vocab_dict
        q = [t for t in terms(text) if t in vocab]
        if not q or not len(self.ids):
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self.bm25.get_scores(q), dtype=np.float32)

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (event id, BM25 score), best first; events sharing no term are left out."""
        s = self.scores(text)
        k = min(k, int((s > 0).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-s, k - 1)[:k]
        top = top[np.lexsort((top, -s[top]))]
        return [(self.ids[p].decode(), float(s[p])) for p in top]


#: the Neo4j full-text index over ``Event.text`` (Lucene's standard analyzer)
NEO4J_INDEX = "event_text_fulltext"


@dataclass
class Neo4jFullText:
    """Neo4j's own full-text index over ``Event.text``, asked through the store's Cypher."""

    store: GraphStore
    level: str | None

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (event id, Lucene score), best first; the words of ``text`` OR-ed."""
        words = [w for w in _WORD.findall(text.lower()) if w not in ("and", "or", "not", "to")]
        if not words or k <= 0:
            return []
        where = " AND node.level = $level" if self.level else ""
        rows = self.store.query(
            f"CALL db.index.fulltext.queryNodes('{NEO4J_INDEX}', $q, {{limit: $k}}) YIELD node, score "
            f"WHERE node.text <> ''{where} RETURN node.id AS id, score ORDER BY score DESC, id LIMIT $k",
            {"q": " ".join(words), "k": int(k), "level": self.level},
        )
        return [(r["id"], float(r["score"])) for r in rows]


def neo4j_fulltext(store: GraphStore, level: str | None) -> Neo4jFullText | None:
    """The store's full-text index when it is a Neo4j store (created once, waited for), else None.

    None too when the index cannot be created (a read-only user): BM25 beside the vector index
    stands in."""
    from eventkg.graphstore.errors import StoreError
    from eventkg.graphstore.saved_cypher import backend_of

    if backend_of(store) != "neo4j":
        return None
    if store.url not in _NEO4J:  # whether the server holds the index, asked once per server
        try:
            store.query(f"CREATE FULLTEXT INDEX {NEO4J_INDEX} IF NOT EXISTS FOR (e:Event) ON EACH [e.text]", write=True)
            store.query(f"CALL db.awaitIndex('{NEO4J_INDEX}', 300)")
            _NEO4J[store.url] = True
        except StoreError:
            _NEO4J[store.url] = False
    # the caller's store, never one cached from an earlier opening (it may be closed by now)
    return Neo4jFullText(store, level) if _NEO4J[store.url] else None


_NEO4J: dict[str, bool] = {}
_LOADED: dict[str, FullTextIndex] = {}


def _folder(vi: Any, folder: Path) -> Path:
    level = vi.manifest.get("level") or "all"
    return folder / f"bm25-{level}-{vi.manifest['fingerprint']['hash'][:16]}"


def open_fulltext(store: GraphStore, vi: Any, notice: Notice | None = None) -> FullTextIndex | Neo4jFullText:
    """The full-text index of the events ``vi`` indexes: Neo4j's own on a Neo4j store, else BM25
    loaded from the index folder, or built and saved there.

    Args:
        store: The store whose event texts are indexed.
        vi: The vector index (its fingerprint names the folder; its ids give the order).
        notice: Told once when a build starts.

    Returns:
        The index (its ``search(text, k)`` gives (event id, score), best first); kept in this
        process for the next call with the same fingerprint.
    """
    import bm25s

    from eventkg.queries.vectors.files import index_dir

    server_side = neo4j_fulltext(store, vi.manifest.get("level"))
    if server_side is not None:
        return server_side
    from eventkg.queries.vectors.index import _sorted_texts

    root = index_dir(store)
    path = _folder(vi, root)
    key = str(path)
    if key in _LOADED and len(_LOADED[key].ids) == len(vi.ids):
        return _LOADED[key]
    index: FullTextIndex | None = None
    if (path / "params.index.json").is_file():
        try:
            index = FullTextIndex(bm25s.BM25.load(str(path)), vi.ids)
        except (OSError, ValueError):
            index = None
    if index is None:
        table = _sorted_texts(store, vi.manifest.get("level"))
        if notice:
            notice(f"building the BM25 full-text index over {table.num_rows:,} event texts")
        bm25 = bm25s.BM25()
        docs = [terms(t or "") or [""] for t in table.column("text").to_pylist()]
        bm25.index(docs, show_progress=False)
        tmp = root / f".{path.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True, exist_ok=True)
        bm25.save(str(tmp), show_progress=False)
        for old in root.glob(f"bm25-{vi.manifest.get('level') or 'all'}-*"):
            shutil.rmtree(old, ignore_errors=True)
        tmp.replace(path)
        index = FullTextIndex(bm25, vi.ids)
    _LOADED[key] = index
    return index
