"""Errors the evaluation layer raises; all are StoreErrors so the CLI prints one line."""

from __future__ import annotations

from graphstore.base import StoreError


class TaskError(StoreError):
    """A task cannot be built or run (unknown task, empty dataset, bad option)."""


class ModelSpecError(TaskError):
    """A ``--model`` spec that names no adapter or is malformed."""


class ModelUnreachable(TaskError):
    """A model server did not answer after the retries (connection, timeout, HTTP error)."""
