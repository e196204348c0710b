"""Order-independent content digests of tables: are these rows exactly the rows a table holds?

A re-run after a crash sends every stored row again. Comparing them with the stored rows costs
a read of the table and a column-by-column comparison (half of a re-run's time, see
``docs/performance.md``); comparing two digests costs nothing. The digest of a set of rows is its row count and, in each
of two 64-bit lanes, the sum (mod 2^64) of a 128-bit hash of every row over ALL its columns,
column names and null-ness included. A sum, so:

* it is independent of row order, and the digest of a union of disjoint row sets is the sum of
  their digests (a COPY adds the digest of the rows it wrote; parts of a table split by key
  add up to the whole);
* two different sets of rows with the same count have the same digest only when their hashes
  collide (both lanes, ~2^-128 for rows that are not built against these hash functions).

Hashes are computed with numpy over the Arrow buffers (no Python object per row); strings are
hashed by :func:`eventkg.graphstore.hashing.string_hashes` (the store's one string hash; its values
are what the saved digests hold, so they must not change). Digests are computed beside the
COPY that writes the rows (:func:`digest_beside`), so they cost little wall time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from eventkg.graphstore.hashing import mix, string_hashes

MASK64 = (1 << 64) - 1
_LANE_SEEDS = (np.uint64(0x8CB92BA72F3D8DD7), np.uint64(0x2545F4914F6CDD1D))
_NULL = tuple(mix(np.array([s ^ np.uint64(0xA0761D6478BD642F)]))[0] for s in _LANE_SEEDS)
DIGEST_ROWS = 65_536  # rows hashed at a time (temporaries ~150 B per row)
FEW_SAMPLE = 2_000  # rows sampled to decide whether a string column repeats a few values


@dataclass(frozen=True)
class TableDigest:
    """A set of rows' count and the two lanes of the sum of their 128-bit hashes."""

    rows: int
    d1: int
    d2: int

    def __add__(self, other: TableDigest) -> TableDigest:
        return TableDigest(self.rows + other.rows, (self.d1 + other.d1) & MASK64, (self.d2 + other.d2) & MASK64)

    def __sub__(self, other: TableDigest) -> TableDigest:
        return TableDigest(self.rows - other.rows, (self.d1 - other.d1) & MASK64, (self.d2 - other.d2) & MASK64)

    def to_json(self) -> list[int]:
        return [self.rows, self.d1, self.d2]

    @classmethod
    def from_json(cls, value: list[int]) -> TableDigest:
        rows, d1, d2 = (int(v) for v in value)
        return cls(rows, d1 & MASK64, d2 & MASK64)


EMPTY = TableDigest(0, 0, 0)


def table_digest(table: pa.Table) -> TableDigest:
    """The digest of a table's rows (every column, in the table's order, by name), ``DIGEST_ROWS``
    rows at a time so the temporaries stay small whatever the table's size."""
    total = EMPTY
    for start in range(0, table.num_rows, DIGEST_ROWS):
        part = table.slice(start, DIGEST_ROWS)
        r1, r2 = row_hashes(part)
        total += TableDigest(part.num_rows, int(r1.sum(dtype=np.uint64)), int(r2.sum(dtype=np.uint64)))
    return total


def digest_beside(table: pa.Table) -> Callable[[], TableDigest]:
    """Start :func:`table_digest` of ``table`` in a thread; returns the function that waits for it.

    Why: ladybug's COPY and numpy both release the GIL, so the digest of rows being COPYed costs no
    wall time next to it. Tables under ``DIGEST_ROWS`` rows are digested at once.
    """
    if table.num_rows < DIGEST_ROWS:
        digest = table_digest(table)
        return lambda: digest
    box: list = []

    def work() -> None:
        try:
            box.append(table_digest(table))
        except BaseException as exc:  # handed to the waiter
            box.append(exc)

    thread = threading.Thread(target=work, name="eventkg-digest", daemon=True)
    thread.start()

    def wait() -> TableDigest:
        thread.join()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    return wait


def row_hashes(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The two 64-bit lanes of each row's hash over all columns (names and positions included)."""
    n = table.num_rows
    acc = [np.zeros(n, np.uint64), np.zeros(n, np.uint64)]
    for i, name in enumerate(table.column_names):
        for lane, h in enumerate(column_hashes(table.column(name))):
            acc[lane] += mix(h ^ _column_key(name, i, lane))
    return mix(acc[0] ^ np.uint64(table.num_columns)), mix(acc[1] ^ np.uint64(table.num_columns))


def _column_key(name: str, position: int, lane: int) -> np.uint64:
    """A lane's constant for a column (its name and position): the same value hashes differently per column."""
    h = _lane_hashes(pa.array([name], pa.string()))[lane]
    return mix(h ^ _LANE_SEEDS[lane] ^ np.uint64(position))[0]


def column_hashes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Both lanes' 64-bit hash of each value of a column (strings, numbers, lists of strings; nulls)."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = [_array_hashes(c) for c in chunks if len(c)]
    if not parts:
        return np.empty(0, np.uint64), np.empty(0, np.uint64)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _array_hashes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        lanes = _few_strings_hashes(arr) or _lane_hashes(pc.fill_null(arr, "") if arr.null_count else arr)
    elif pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t):
        values = pc.fill_null(arr, pa.scalar(0, t) if not pa.types.is_boolean(t) else False) if arr.null_count else arr
        values = values.cast(pa.int64()) if not (pa.types.is_float64(t) or pa.types.is_int64(t)) else values
        bits = values.to_numpy(zero_copy_only=False).view(np.uint64)
        lanes = (mix(bits ^ _LANE_SEEDS[0]), mix(bits ^ _LANE_SEEDS[1]))
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        lanes = _list_hashes(arr)
    else:  # a type the store does not declare: refuse rather than digest it wrongly
        raise TypeError(f"no digest for Arrow type {t}")
    if arr.null_count:
        valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
        lanes = tuple(np.where(valid, h, null) for h, null in zip(lanes, _NULL, strict=True))
    return lanes


def _few_strings_hashes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Hashes through a dictionary when the first rows repeat a few values (``sources``, ``level``:
    hashing each distinct value once is cheaper than hashing every row), else None."""
    if len(arr) < 4 * FEW_SAMPLE or len(pc.unique(arr.slice(0, FEW_SAMPLE))) > FEW_SAMPLE // 20:
        return None
    encoded = pc.dictionary_encode(arr)
    if not len(encoded.dictionary) or len(encoded.dictionary) > len(arr) // 20:  # none: every row null
        return None
    dictionary = encoded.dictionary
    lanes = _lane_hashes(pc.fill_null(dictionary, "") if dictionary.null_count else dictionary)
    index = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False)
    return lanes[0][index], lanes[1][index]


def _lane_hashes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Both lanes' hash of each string (no nulls)."""
    return string_hashes(arr, _LANE_SEEDS)


def _list_hashes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Hash each list: its items' hashes mixed with their position, summed, mixed with its length."""
    lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    items = column_hashes(arr.flatten())
    ends = np.cumsum(lengths)
    starts = ends - lengths
    position = np.arange(len(items[0]), dtype=np.uint64) - np.repeat(starts, lengths).astype(np.uint64)
    out = []
    for lane, seed in enumerate(_LANE_SEEDS):
        mixed = mix(items[lane] ^ mix(position * np.uint64(0xC2B2AE3D27D4EB4F) + seed))
        sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(mixed, dtype=np.uint64)])
        out.append(mix(sums[ends] - sums[starts] + mix(lengths.astype(np.uint64) ^ seed ^ np.uint64(1))))
    return out[0], out[1]
