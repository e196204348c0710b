"""EV²'s release adapter: the prompt the release's ``src/data.py`` builds for a stored row.

EV²'s ``src/data.py`` builds every CEC, CRR and alignment prompt (``EV2Dataset``'s ``S_CEC``,
``I_CEC``, ``I_CEC_DIRECT``, ``CEC_rq3``... on the stored row, ``k=0``), executed from the user's
checkout by :func:`eventkg.tasks.release.load_module`. Without ``--release``, the EV² styles use the
checkout the store's EV² questions were ingested from, when that folder is one (``data/`` beside
``src/``). Module-level draws (the alignment prompt's unseeded ``random.sample``) go through a
:class:`random.Random` seeded per item.
"""

from __future__ import annotations

import json
import random
import types
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import ReleaseError
from eventkg.tasks.release import load_module, require

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

#: the release styles (the prompt built by the release's own code)
RELEASE_STYLES = ("release", "release-direct")

EV2_WHAT = "the EV² release (github.com/TZWwww/EV2)"
EV2_PARTS = ("src/data.py", "data/clustering.json")


class EV2Release:
    """EV²'s ``src/data.py`` from a checkout: the prompt its ``EV2Dataset`` builds for a row."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = require(root, EV2_WHAT, EV2_PARTS)
        self.module = _ev2_data(self.root / "src" / "data.py")
        self.clustering_path = self.root / "data" / "clustering.json"
        self.clusters = json.loads(self.clustering_path.read_text(encoding="utf-8"))

    def prompt(self, method: str, row: dict[str, Any], draw: str | None = None) -> str:
        """What ``EV2Dataset.<method>`` (``k=0``) yields for ``row``; ``draw`` seeds the module's
        ``random`` for the one call (the alignment prompts' candidate draw)."""
        cls = self.module.EV2Dataset
        dataset = cls.__new__(cls)
        dataset.k, dataset.i, dataset.task_name, dataset.clusters = 0, None, method, self.clusters
        self.module.random = random.Random(draw) if draw is not None else random
        try:
            srcs, _choices, _label = next(getattr(dataset, method)(row))
        except (KeyError, ValueError, IndexError, TypeError) as exc:
            raise ReleaseError(f"{self.root}/src/data.py: {method} cannot build question {row.get('id')!r} "
                               f"({type(exc).__name__}: {exc})") from None
        finally:
            self.module.random = random
        return srcs[0]


@cache
def _ev2_data(path: Path) -> types.ModuleType:
    return load_module(path, "ev2_release_data")


def ingested_ev2_checkout(store: GraphStore) -> Path:
    """The EV² checkout the store's questions were ingested from.

    Args:
        store: The store whose EV² ingest recorded its folder (:meth:`GraphStore.ingest_origin`).

    Returns:
        The checkout: the parent of the recorded folder, when it holds ``src/data.py`` and
        ``data/clustering.json`` (the folder was the checkout's ``data/``).

    Raises:
        ReleaseError: The store records no EV² folder, or the folder is not in a checkout: one line
            saying to pass ``--release PATH``.
    """
    origin = store.ingest_origin("ev2")
    if origin is None:
        raise ReleaseError(f"{store.url}: it records no folder its EV² data was ingested from, and a release style "
                           f"builds its prompts with the code of {EV2_WHAT}, which eventkg does not ship: "
                           "pass --release PATH, a checkout of it (the folder holding src/data.py and data/clustering.json)")
    root = Path(origin).parent
    if all((root / part).exists() for part in EV2_PARTS):
        return root
    raise ReleaseError(f"{store.url}: its EV² data was ingested from {origin}, which is not "
                       f"the data/ folder of a checkout of {EV2_WHAT} (no src/data.py beside it): pass --release PATH, "
                       "the folder holding src/data.py and data/clustering.json")
