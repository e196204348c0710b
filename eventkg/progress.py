"""The one progress callback and the one notice callback every layer's long work reports through.

A long call (an ingest, an index build, question generation, an evaluation, an export) takes
``progress`` and ``notice`` keyword arguments of these types; the CLI maps them onto its rich
bars (:class:`eventkg.cli.shared.Bars`), the demo onto its steps. Like :mod:`eventkg.errors`,
this module imports nothing of the package, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Callable

#: ``(stage, done, total)``: ``done`` units of the named ``stage`` so far, of ``total`` (None: not known).
#: ``stage`` names what is counted: a file being written, a model being evaluated, ``"rows"``
#: and ``"rejected"`` for an ingest, ``"encode"`` for an embedding, ``"questions"``, ``"items"``.
Progress = Callable[[str, int, int | None], None]

#: one line for a person watching (what is about to happen, how long it may take); never an error
Notice = Callable[[str], None]

__all__ = ["Notice", "Progress"]
