"""The root of every error eventkg raises on purpose, and the errors of the top level (settings, demo, CLI).

Catch :class:`EventKGError` to handle anything eventkg refuses (bad input, an unreachable
server, an unknown task...); the CLI prints it as one line and exits with code 2. Each layer
names its failures in its own errors module, subclasses of this root: :mod:`eventkg.graphstore.errors`,
:mod:`eventkg.ingest.errors`, :mod:`eventkg.queries.errors`, :mod:`eventkg.tasks.errors`; the top
level's are here (:class:`SettingError`, :class:`DemoError`, the CLI's :class:`UsageError`). It
imports nothing of eventkg, so every module may import it. :class:`CommandModuleError` alone is no
EventKGError: a broken install is a bug, shown with its traceback.
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


class SettingError(EventKGError):
    """An environment variable holds a value eventkg cannot use."""


class DemoError(EventKGError):
    """A bad demo option, or a bundled sample missing from the checkout."""


class CommandModuleError(ImportError):
    """A command module of :data:`eventkg.cli.app.COMMAND_MODULES` failed to import: a broken install or a
    bug, never a command that silently goes missing from ``eventkg --help``."""
