"""The ingest layer's failures: a bad row, file or database (named by file, line or row and why), an
unknown loader or option, an ingest cut off half-way.

They subclass :class:`eventkg.errors.EventKGError`, so the CLI prints them on one line and exits 2;
:class:`RowError` alone is internal: a loader turns it into a reject with its place.
"""

from __future__ import annotations

from eventkg.errors import EventKGError


def one_line(text: object, limit: int = 300) -> str:
    """Squash a reason onto one line (and cap it) so an error message never wraps oddly."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def where(file: str, line: int | str | None) -> str:
    """``file:12`` for a text line, ``file [row abc]`` for a database row, ``file`` alone."""
    if line is None or line == "":
        return str(file)
    if isinstance(line, int):
        return f"{file}:{line}"
    return f"{file} [{line}]"


class RowError(Exception):
    """Why one source row cannot become typed rows; loaders turn it into a Reject with its place."""


class IngestError(EventKGError):
    """Something in the input cannot be ingested; the message names file, line and reason.

    ``option`` is the keyword of the ingest option the error concerns (``on_error``,
    ``partial``...), so that the CLI can name its flag; the message itself names no flag.
    """

    def __init__(self, file: str, line: int | str | None, reason: str, *, option: str | None = None) -> None:
        self.file = str(file)
        self.line = line
        self.reason = one_line(reason)
        self.option = option
        super().__init__(f"{where(self.file, line)}: {self.reason}")


class BadRowError(IngestError):
    """One source row is malformed (broken JSON, missing field, unknown relation...)."""


class EmptyInputError(IngestError):
    """A source file holds no rows."""


class MissingFilesError(IngestError):
    """A path is missing, or a folder holds none of the files the source expects."""


class WrongSchemaError(IngestError):
    """A database file does not have the tables/columns the source expects."""


class PartialIngestError(EventKGError):
    """An ingest failed after part of it was written (Neo4j over Bolt, a crash of the final write):
    the message says what had landed; the store records the ingest as unfinished."""


class LoaderError(EventKGError):
    """An unknown source, or an option the source's loader does not take (``option``: its keyword)."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option
