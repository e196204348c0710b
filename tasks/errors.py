"""The evaluation layer's failures: a task, a model spec or server, a release checkout.

All are EventKGErrors, so the CLI prints one line and exits 2.
"""

from __future__ import annotations

from eventkg.errors import EventKGError


class TaskError(EventKGError):
    """A task cannot be built or run (unknown task, empty dataset, bad option)."""


class ModelSpecError(TaskError):
    """A ``--model`` spec that names no adapter or is malformed."""


class ModelUnreachable(TaskError):
    """A model server did not answer after the retries (connection, timeout, HTTP error)."""


class ReleaseError(TaskError):
    """A release checkout is missing or is not the layout its style reads."""
