"""Where the embedded store keeps its tables' digests: a small JSON file beside the database.

A digest (:class:`~eventkg.graphstore.digest.TableDigest`) says "table T holds exactly these rows";
a re-run after a crash that sends exactly those rows again has nothing to upsert
(``WaitingRows.apply_late`` in :mod:`eventkg.graphstore.ladybug.bulk.waiting`). A false "equal" would lose
an update, so a digest in this file must never describe anything but T's durable content.

Why a sidecar file (``<store>.digests``) and not a table in the database: a node table would be
seen by every ``MATCH (n)`` of users and tools (counts, stats, exports, the browser); a sidecar is
seen by nobody, and costs one small atomic file write per change (~0.1 ms; only a drop waits for
the disk, see below).

The rules that keep it true (the store object follows them; see ``LadybugStore``):

1. Drop before write. Any write to T by the store first drops T's digest here, and the file is
   written (fsynced, then atomically renamed) before the write starts. Only the bulk COPY path
   knows what it writes: it adds the COPYed rows' digest to T's old digest, in memory.
2. Set only when durable. ladybug 0.22 makes an auto-commit COPY durable at the next CHECKPOINT
   (the WAL does not grow with it), so the COPY path's digests are written here only after a
   CHECKPOINT returned. A crash anywhere before leaves T without a digest: the re-run compares
   row by row (slow and always right).
3. Stamp. The file records the size, mtime and inode of the database file and of its WAL, taken
   at every save and after each change of this store's (a COPY, which writes pages into the database
   file before any CHECKPOINT; a committed transaction; a checkpoint, open or close). A read-write
   open whose files do not match the stamp was preceded by a writer that did not keep this file
   (another program, an older eventkg) or by a crash in the middle of a write: every digest is
   dropped before anything else. Restamping is safe at any moment because of rule 1: whatever this
   store changed since a table's digest was saved, that table's digest is no longer in the file.
4. Empty is known. A new store, and a table whose row count is 0, have the empty digest.

Only a drop (rule 1) is fsynced before it returns. Every other save (a set, a restamp) may be lost
in a crash without harm: the file then left is an older one, whose stamp no longer matches the
store's files, so every digest is dropped (rule 3), or a cut one, which does not parse (the same).
Why: a save follows every committed transaction, and an fsync doubled a small upsert's overhead
(``docs/performance.md``).

What the stamp cannot see: a write through the store's ``connection`` in this process, or a
foreign writer that changed neither file's size, mtime nor inode. Writers of a store are the
store object; the rest is a guard. The re-run also checks the table's row count against the
digest's before trusting it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from eventkg.graphstore.atomic import atomic_file
from eventkg.graphstore.digest import EMPTY, TableDigest
from eventkg.graphstore.ladybug.events import EventHook, StoreEvent
from eventkg.graphstore.model import NODE_TYPES, REL_TYPES

FORMAT = 1
SUFFIX = ".digests"


def _file_state(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class DigestBook:
    """The digests of one store's tables, kept in ``<store>.digests`` (see the module's rules)."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.path = store.with_name(store.name + SUFFIX)
        self.tables: dict[str, TableDigest] = {}

    @classmethod
    def load(cls, store: Path) -> DigestBook:
        """The book of ``store`` as its file says, or an empty one when the file is missing,
        unreadable, of another format, or its stamp does not match the store's files (rule 3).
        Call it before the database is opened: opening may replay and fold the WAL."""
        book = cls(store)
        try:
            saved = json.loads(book.path.read_text())
            if saved.get("format") == FORMAT and saved.get("stamp") == book.stamp():
                book.tables = {name: TableDigest.from_json(v) for name, v in saved["tables"].items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            pass
        return book

    def stamp(self) -> dict[str, list[int] | None]:
        """The database file's and its WAL's (size, mtime_ns, inode), None for a missing file."""
        return {"db": _file_state(self.store), "wal": _file_state(self.store.with_name(self.store.name + ".wal"))}

    def get(self, name: str) -> TableDigest | None:
        return self.tables.get(name)

    def drop(self, names: list[str] | None = None) -> None:
        """Forget the digests of ``names`` (default: all), on disk before returning (rule 1)."""
        names = list(self.tables) if names is None else [n for n in names if n in self.tables]
        if names:
            for name in names:
                del self.tables[name]
            self.save(durable=True)

    def set(self, digests: dict[str, TableDigest]) -> None:
        """Record durable tables' digests (rule 2) with a fresh stamp."""
        self.tables.update(digests)
        self.save()

    def save(self, *, durable: bool = False) -> None:
        """Write the book with the store's current stamp: a temporary file renamed over the book,
        fsynced first when ``durable`` (a drop; any other save may be lost, see the module docstring)."""
        body = {"format": FORMAT, "stamp": self.stamp(),
                "tables": {name: d.to_json() for name, d in sorted(self.tables.items())}}
        with atomic_file(self.path, durable=durable) as fh:  # a failure leaves no temporary file
            json.dump(body, fh)


class DigestTracker:
    """Each table's digest as the store's writes change it (the store's side of the rules): the
    book on disk plus the digests a COPY gave since the last CHECKPOINT (``pending``, set in the
    book only once a CHECKPOINT made them durable, rule 2). Without a book (a read-only store)
    nothing is kept and every digest is unknown.

    ``wrote`` is set by every write stamped (:meth:`stamp`) and cleared by whoever asks "did the
    store change since...": an ingest's beginning (``GraphStore.begin_ingest``), a bulk session's
    beginning, a failed session's undo."""

    def __init__(self, book: DigestBook | None, emit: EventHook | None = None) -> None:
        self.book, self.emit = book, emit
        self.pending: dict[str, TableDigest | None] = {}  # tables changed since the last CHECKPOINT
        self.wrote = False

    def now(self, name: str) -> TableDigest | None:
        """The digest of what ``name`` holds now (written since the last CHECKPOINT included), if known."""
        if name in self.pending:
            return self.pending[name]
        return self.book.get(name) if self.book is not None else None

    def forget(self, names: Sequence[str] | None = None) -> None:
        """Before a write the digest cannot follow: the tables' digests dropped, on disk first (rule 1)."""
        if self.book is None:
            return
        names = [*NODE_TYPES, *REL_TYPES] if names is None else list(names)
        self.pending.update(dict.fromkeys(names))
        self.book.drop(names)
        if self.emit is not None:
            for name in names:
                self.emit(StoreEvent("dropped", name))

    def note(self, name: str, digest: TableDigest) -> None:
        """``name`` holds ``digest`` once the next CHECKPOINT returns (a COPY's rows added, or a
        table found unchanged)."""
        self.pending[name] = digest

    def note_all_empty(self) -> None:
        """Every table was emptied: each holds the empty digest at the next CHECKPOINT (rule 4)."""
        self.pending.update(dict.fromkeys([*NODE_TYPES, *REL_TYPES], EMPTY))

    def any_pending(self) -> bool:
        return any(self.pending.values())

    def abandon_pending(self) -> None:
        """A write failed part way: what the pending digests describe is not known; their tables'
        digests were dropped on disk before the writes (rule 1), so they stay unknown."""
        self.pending.clear()

    def durable(self) -> None:
        """After a CHECKPOINT: the digests of what it made durable are set on disk (rule 2)."""
        if self.book is None:
            return
        durable = {name: d for name, d in self.pending.items() if d is not None}
        self.pending.clear()
        self.book.set(durable)

    def stamp(self) -> None:
        """After a write of this store's: its files as it left them (rule 3), so a crash from here on
        does not drop the digests of tables it did not touch."""
        self.wrote = True
        self.save()

    def save(self) -> None:
        """The book written with the store's files as they are now (after opening or closing them)."""
        if self.book is not None:
            self.book.save()
