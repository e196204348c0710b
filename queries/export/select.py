"""The subgraph an export writes when asked for one: ``eventkg subgraph``'s selection, complete.

:func:`select_subgraph` makes the same calls as the ``subgraph`` command (open the vector
index, then :func:`eventkg.queries.retrieval.retrieve.retrieve`), so ``export ... --text T -k 5 --hops 2``
holds exactly the nodes and edges ``subgraph --text T -k 5 --hops 2`` retrieves. Retrieval
reads Event->Event edges from its ranked adjacency, which keeps only the weight, so the
edges' other stored properties (``sources``, ...) are read back from the store for the
selected edges only: the selection itself is never widened.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from eventkg.graphstore.base import GraphStore
from eventkg.graphstore.model import check_event_level
from eventkg.progress import Notice, Progress
from eventkg.queries.errors import RetrieveError
from eventkg.queries.retrieval.retrieve import retrieve
from eventkg.queries.vectors.index import open_index


def select_subgraph(
    store: GraphStore,
    text: str,
    *,
    k: int = 5,
    hops: int = 2,
    rel_types: Sequence[str] | None = None,
    level: str | None = None,
    embed_model: str | None = None,
    device: str | None = "auto",
    index_kind: str | None = None,
    progress: Progress | None = None,
    notice: Notice | None = None,
) -> nx.MultiDiGraph:
    """The subgraph ``eventkg subgraph`` retrieves for ``text``, with every stored property.

    Arguments mean what the ``subgraph`` command's options mean (``-k``, ``--hops``,
    ``--rel``, ``--level``, ``--embed-model``, ``--device``, ``--index-kind``); ``progress`` and
    ``notice`` report a first build of the vector index (see :func:`open_index`).
    """
    check_event_level(level, RetrieveError)
    index = open_index(store, embed_model, level, progress=progress, notice=notice, device=device,
                       index_kind=index_kind)
    sub = retrieve(store, text, k=k, hops=hops, rel_types=rel_types, level=level, embed_model=embed_model,
                   index=index)
    return with_stored_properties(store, sub.graph)


def with_stored_properties(store: GraphStore, graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy of ``graph`` (same nodes, same edges) whose attributes are the store's own."""
    types = sorted({key for _, _, key in graph.edges(keys=True)})
    stored = store.neighbourhood(list(graph.nodes), hops=0, rel_types=types or None, induced=True)
    out = nx.MultiDiGraph()
    for nid, attrs in graph.nodes(data=True):
        out.add_node(nid, **(stored.nodes[nid] if nid in stored else attrs))
    for src, dst, key, attrs in graph.edges(keys=True, data=True):
        props = stored.get_edge_data(src, dst, key)
        out.add_edge(src, dst, key=key, **(props if props is not None else attrs))
    return out
