"""Hard negatives for one question named by text: what ``eventkg negatives`` prints.

Names -> ids (:mod:`eventkg.queries.lookup`), the store's vector index opened (built on first
use, resumable) and :class:`~eventkg.queries.negatives.nearest.NearestNegatives` asked; the result is
plain data (the CLI's ``--json`` shape). FAISS and the encoder are imported only when called.
"""

from __future__ import annotations

from typing import Any

from eventkg.graphstore.base import GraphStore
from eventkg.progress import Notice, Progress


def negatives_for(
    store: GraphStore,
    event: str,
    relation: str,
    *,
    k: int = 3,
    answer: str | None = None,
    level: str | None = None,
    embed_model: str | None = None,
    clusters: int | None = None,
    similarity_cap: float = 0.9,
    seed: int | None = None,
    rebuild: bool = False,
    device: str = "auto",
    index_kind: str | None = None,
    progress: Progress | None = None,
    notice: Notice | None = None,
) -> dict[str, Any]:
    """``k`` events close to the answer and not linked to ``event`` by ``relation``'s family.

    ``answer`` defaults to a direct ``relation`` neighbour of ``event``. Returns
    ``{"event", "relation", "answer", "negatives": [{"id", "text", "similarity"}], "index"}``
    (fewer than ``k`` negatives when fewer candidates pass the filters).

    >>> negatives_for(store, "learn", "Causes", k=3, level="schema")["negatives"]  # doctest: +SKIP
    """
    from eventkg.graphstore.model import CANONICAL, check_event_level, family_of
    from eventkg.queries.errors import NegativesError
    from eventkg.queries.lookup import LEVELS, default_answer, find_event
    from eventkg.queries.negatives.nearest import NearestNegatives, require_event_relations
    from eventkg.queries.vectors.files import index_dir
    from eventkg.queries.vectors.index import clear_index, open_index

    check_event_level(level, NegativesError)
    if relation not in CANONICAL:
        raise NegativesError(f"relation {relation!r}: expected one of {', '.join(CANONICAL)}")
    require_event_relations(store, family_of(relation))
    qid, _ = find_event(store, event, level)
    aid = find_event(store, answer, level)[0] if answer else default_answer(store, qid, relation)
    if rebuild:
        clear_index(store)
    sampler = NearestNegatives(store, embed_model=embed_model, level=level, similarity_cap=similarity_cap, clusters=clusters)
    ans_level = level or store.get_nodes("Event", [aid])[aid].get("level")
    vi = open_index(store, embed_model, ans_level if ans_level in LEVELS else None, progress=progress, notice=notice,
                    device=device, index_kind=index_kind)
    scored = sampler.sample_scored(qid, relation, aid, k=k, rng=seed)
    nodes = store.get_nodes("Event", [qid, aid, *(i for i, _ in scored)])
    text = {i: n.get("text") for i, n in nodes.items()}
    return {
        "event": {"id": qid, "text": text.get(qid)},
        "relation": relation,
        "answer": {"id": aid, "text": text.get(aid)},
        "negatives": [{"id": i, "text": text.get(i), "similarity": round(s, 4)} for i, s in scored],
        "index": {"path": str(index_dir(store)), "built": vi.built, "size": len(vi), "model": vi.manifest["model"],
                  "kind": vi.manifest["params"]["kind"]},
    }
