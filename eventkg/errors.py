"""The root of every error eventkg raises on purpose.

Catch :class:`EventKGError` to handle anything eventkg refuses (bad input, an unreachable
server, an unknown task...); the CLI prints it as one line and exits with code 2. Each layer
subclasses it where the error arises (``StoreError`` in :mod:`eventkg.graphstore`,
``IngestError`` in :mod:`eventkg.ingest.errors`, ``TaskError`` in :mod:`eventkg.tasks.errors`,
and the query errors in their modules), so this module imports nothing of eventkg.
"""

from __future__ import annotations

#: the CLI's exit code for an EventKGError (typer/click use 2 for usage errors too)
EXIT_CODE = 2


class EventKGError(Exception):
    """A problem the user can fix; ``str(err)`` is one line that says what and where."""


class UsageError(EventKGError):
    """A command line used wrongly (an argument missing, options that do not go together): the CLI's
    own refusals, apart from what the library refuses; exit code :data:`EXIT_CODE` like typer's."""


class OutputError(EventKGError):
    """A file or folder eventkg was asked to write cannot be written (a missing folder, a folder
    where a file was asked, no permission, a read-only file system); nothing of it was left behind."""


class DiskFullError(OutputError):
    """The file system ran out of space (or would, by the estimate made before the work); the
    message says where and how much was free, and what was half-written has been removed."""
