"""Type lifting: from the events nearest a text to the schema event types it instantiates.

A store with a type layer (schema events, instance events linked to them by ``HAS_TYPE``, as
EV² ingests) holds the knowledge a question needs at the type level, but a new sentence is
nearest to other stories' instance sentences, not to a type name. :func:`lift` turns the
ranked seeds into ranked types:

- each seed instance event votes for its ``HAS_TYPE`` types with its seed score;
- each seed schema event votes for itself (the text names the type) with its score times
  :data:`NAME_WEIGHT`;
- a type's schema neighbours that are seeds too add :data:`NEIGHBOUR_WEIGHT` times their score
  (the text names what the type causes or follows);
- types of one synonym cluster (``Event.cluster``, from EV²'s ``clustering.json``) are one type:
  their votes add up, and their facts are one list.

A vote is the seed's score relative to the best seed, raised to :data:`SHARPNESS`, so the
nearest few decide. :class:`TypeLayer` is the store's type layer read once (schema events,
their clusters, the event-relation edges within each level, and every instance's types) and kept in the process
while the vector index's size is unchanged; a store without schema types gives an empty layer
and no lifting.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from eventkg.graphstore.base import GraphStore

#: the schema relations lifted types bring (stored types)
SCHEMA_RELATIONS = ("CAUSES", "BEFORE", "HAS_SUBEVENT")
NAME_WEIGHT = 1.0
NEIGHBOUR_WEIGHT = 0.25
SHARPNESS = 2.0


@dataclass(frozen=True)
class TypeScore:
    """One lifted type (a synonym cluster, or a type without one): its name, members and score."""

    name: str
    ids: tuple[str, ...]
    score: float
    #: (seed id, vote) of what voted for it, best first
    votes: tuple[tuple[str, float], ...] = ()


@dataclass
class TypeLayer:
    """The schema events of a store, their clusters, the event-relation edges and the instances' types."""

    text: dict[str, str] = field(default_factory=dict)
    cluster_of: dict[str, str] = field(default_factory=dict)  # type id -> cluster key
    members: dict[str, list[str]] = field(default_factory=dict)  # cluster key -> type ids
    #: event id -> [(stored type, other id, True when the event is the edge's source)], between
    #: events of one level (types with types, instances with instances)
    edges: dict[str, list[tuple[str, str, bool]]] = field(default_factory=dict)
    types_of: dict[str, list[str]] = field(default_factory=dict)  # instance id -> type ids

    def __bool__(self) -> bool:
        return bool(self.types_of)

    def live(self, type_id: str) -> bool:
        """Whether the type's cluster has any schema edge (a type without one brings no fact)."""
        return any(self.edges.get(m) for m in self.members.get(self.cluster_of.get(type_id, type_id), [type_id]))

    def cluster_name(self, key: str) -> str:
        """The member with most schema edges names the cluster (ties: the shortest, then by text)."""
        ms = self.members.get(key, [key])
        return self.text.get(min(ms, key=lambda m: (-len(self.edges.get(m, [])), len(self.text.get(m, "")), self.text.get(m, ""))), key)


_LAYERS: dict[tuple[str, int], TypeLayer] = {}


def type_layer(store: GraphStore, key: tuple[str, int]) -> TypeLayer:
    """The store's type layer, read once per ``key`` (index folder, indexed events)."""
    if key in _LAYERS:
        return _LAYERS[key]
    layer = TypeLayer()
    has = store.query("MATCH (a:Event)-[:HAS_TYPE]->(b:Event) RETURN a.id AS i, b.id AS t")
    if has:
        for row in store.query("MATCH (e:Event) WHERE e.level = 'schema' RETURN e.id AS id, e.text AS text, e.cluster AS c"):
            layer.text[row["id"]] = row["text"] or ""
            ck = f"c{row['c']}" if row["c"] is not None else row["id"]
            layer.cluster_of[row["id"]] = ck
            layer.members.setdefault(ck, []).append(row["id"])
        for row in has:
            layer.types_of.setdefault(row["i"], []).append(row["t"])
        for rtype in SCHEMA_RELATIONS:
            for row in store.query(
                f"MATCH (a:Event)-[:{rtype}]->(b:Event) WHERE a.level = b.level RETURN a.id AS h, b.id AS t"
            ):
                layer.edges.setdefault(row["h"], []).append((rtype, row["t"], True))
                layer.edges.setdefault(row["t"], []).append((rtype, row["h"], False))
        for ms in layer.members.values():
            ms.sort()
    if len(_LAYERS) > 8:
        _LAYERS.clear()
    _LAYERS[key] = layer
    return layer


def lift(
    layer: TypeLayer,
    seeds: Sequence[tuple[str, float]],
    *,
    exclude: Collection[str] = (),
) -> list[TypeScore]:
    """Ranked types of the text from its ranked seeds (see the module docstring).

    Args:
        layer: The store's type layer.
        seeds: (event id, score) of the hybrid seeds, best first; scores in [0, 1].
        exclude: Event ids that may not vote (a hidden story's instances).

    Returns:
        The types, best first, only those whose cluster has a schema edge.
    """
    if not seeds:
        return []
    top = max(s for _, s in seeds) or 1.0
    votes: dict[str, dict[str, float]] = defaultdict(dict)
    seed_score = {i: s for i, s in seeds}
    for sid, s in seeds:
        if sid in exclude:
            continue
        w = (max(s, 0.0) / top) ** SHARPNESS
        for t in layer.types_of.get(sid, []) if sid not in layer.text else [sid]:
            ck = layer.cluster_of.get(t, t)
            weight = w * (NAME_WEIGHT if sid in layer.text else 1.0)
            votes[ck][sid] = max(votes[ck].get(sid, 0.0), weight)
    for ck in list(votes):  # neighbours named by the text
        for m in layer.members.get(ck, [ck]):
            for _, other, _ in layer.edges.get(m, []):
                if other in seed_score and other not in exclude:
                    w = NEIGHBOUR_WEIGHT * (max(seed_score[other], 0.0) / top) ** SHARPNESS
                    votes[ck][f"~{other}"] = max(votes[ck].get(f"~{other}", 0.0), w)
    out = []
    for ck, vs in votes.items():
        ids = tuple(layer.members.get(ck, [ck]))
        if not any(layer.edges.get(m) for m in ids):
            continue
        ranked = tuple(sorted(vs.items(), key=lambda x: -x[1]))
        out.append(TypeScore(layer.cluster_name(ck), ids, sum(vs.values()), ranked))
    out.sort(key=lambda t: (-t.score, t.name))
    return out
