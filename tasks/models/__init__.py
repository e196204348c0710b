"""Model adapters chosen by a ``--model`` spec.

=========================  ==================================================================
``openai:MODEL@BASE_URL``  any OpenAI-compatible chat API (key from ``OPENAI_API_KEY`` or
                           ``EVENTKG_API_KEY``); ``openai:MODEL`` uses api.openai.com
``hf:PATH``                a local transformers model folder (extra ``eventkg[hf]``)
``random[:SEED]``          uniform over the choices, seeded
``majority``               the most frequent gold answer of the train split / label prior
``embed-sim[:PATH]``       sentence-embedding similarity (bundled all-MiniLM-L6-v2 offline)
``kg-oracle``              answers read from the store's graph
``kg-rag``                 EV² under ``--style rag``: answers from the prompt's retrieved facts alone
=========================  ==================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import ModelSpecError
from eventkg.tasks.models.base import Model

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

__all__ = ["SPEC_HELP", "load_model"]

SPEC_HELP = "openai:MODEL@BASE_URL, hf:PATH, random[:SEED], majority, embed-sim[:PATH], kg-oracle or kg-rag"


def load_model(spec: str, *, store: GraphStore | None = None, seed: int = 0, **options: Any) -> Model:
    """The adapter for a model spec.

    Args:
        spec: ``openai:MODEL@BASE_URL``, ``hf:PATH``, ``random[:SEED]``, ``majority``, ``embed-sim[:PATH]``,
            ``kg-oracle`` or ``kg-rag``.
        store: The store the offline baselines read (``majority``, ``kg-oracle``).
        seed: The seed of seeded baselines.
        **options: The HTTP adapter's options (timeout, concurrency, cache, generation settings).

    Returns:
        The model.

    Raises:
        ModelSpecError: A spec that names no adapter, or one it cannot use.
    """
    kind, _, rest = (spec or "").strip().partition(":")
    if kind == "openai":
        from eventkg.tasks.models.openai_compat import DEFAULT_BASE_URL, OpenAICompatModel

        model, _, base = rest.partition("@")
        if not model:
            raise ModelSpecError(f"model spec {spec!r}: expected openai:MODEL@BASE_URL")
        return OpenAICompatModel(model, base or DEFAULT_BASE_URL, **options)
    if kind == "hf":
        from eventkg.tasks.models.hf import HFModel

        return HFModel(rest)
    from eventkg.tasks.models import baselines

    if kind == "random":
        if rest and not rest.isdigit():
            raise ModelSpecError(f"model spec {spec!r}: the random seed must be an integer")
        return baselines.RandomModel(int(rest) if rest else seed)
    if kind == "majority" and not rest:
        return baselines.MajorityModel()
    if kind == "embed-sim":
        return baselines.EmbedSimModel(rest or None)
    if kind == "kg-oracle" and not rest:
        from eventkg.tasks.models.kg_oracle import KGOracleModel

        return KGOracleModel(store)
    if kind == "kg-rag" and not rest:
        from eventkg.tasks.models.kg_rag import KGRagModel

        return KGRagModel()
    raise ModelSpecError(f"unknown model spec {spec!r}: use {SPEC_HELP}")
