"""The query layer's failures: induction, the event graph, questions, negatives, vectors, retrieval, exports, audit.

Every one is an :class:`~eventkg.errors.EventKGError`, so the CLI prints ``str(err)`` on one line
and exits 2; each message says what and where, never a flag. Two are also the built-in error a
Python caller expects (:class:`UnknownRelationError` a ``ValueError``, :class:`UnknownEventError`
a ``KeyError``).
"""

from __future__ import annotations

from eventkg.errors import EventKGError


class UnknownRelationError(EventKGError, ValueError):
    """A relation name that is not one of the six event relations."""


class UnknownEventError(EventKGError, KeyError):
    """An event named on the command line or in a question row is not in the graph."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class QuestionError(EventKGError):
    """Bad arguments to question generation, or a question row the graph cannot answer."""


class NegativesError(EventKGError):
    """A negatives request names an unknown relation or a missing event."""


class EmbeddingModelError(EventKGError):
    """The embedding model cannot be found or loaded."""


class VectorIndexError(EventKGError):
    """The vector index cannot be built or read."""


class RetrieveError(EventKGError):
    """A retrieval request names an unknown relation type, style or level."""


class BadPredictionError(EventKGError):
    """A model's schema output cannot be read as event types and triplets."""


class ExportError(EventKGError):
    """An export that cannot be written as asked (unknown file suffix, a graph not in the store's shape)."""


class AuditError(EventKGError):
    """A file the audit cannot read (named with its line and the reason)."""
