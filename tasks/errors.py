"""Errors the evaluation layer raises; all are EventKGErrors so the CLI prints one line (exit 2)."""

from __future__ import annotations

from eventkg.errors import EventKGError


class TaskError(EventKGError):
    """A task cannot be built or run (unknown task, empty dataset, bad option)."""


class ModelSpecError(TaskError):
    """A ``--model`` spec that names no adapter or is malformed."""


class ModelUnreachable(TaskError):
    """A model server did not answer after the retries (connection, timeout, HTTP error)."""
