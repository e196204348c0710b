"""The bulk session of the embedded store: what ``bulk_load()`` holds back, what waits, how it is written.

A session holds new rows in a :class:`~eventkg.graphstore.ladybug.spool.TableSpool` beside the
database and writes them table by table at its end, each from staged Parquet files in as few
COPYs as the memory budget allows. Its parts, one module each, share one
:class:`~eventkg.graphstore.ladybug.bulk.state.SessionState`:

* :mod:`.session` — :class:`BulkSession`, the facade the store uses: the session's life, all or nothing;
* :mod:`.planning` — which tables are deferred, looked up, or held without a key set;
* :mod:`.holding` — each batch split into held rows and rows that wait;
* :mod:`.held_tables` — the held tables written, nodes first, checkpointed by fixed budgets;
* :mod:`.staged_copies` — the COPYs from staged Parquet files, the buffer pool sized for each;
* :mod:`.waiting` — rows whose keys were held or stored: merged before a COPY, or upserted after
  it unless their digest proves them stored already.

Invariant: all or nothing (see :mod:`.session`), and what a session remembers of keys grows with
what it is sent, not with what the store holds (see :mod:`.planning`).
"""

from eventkg.graphstore.ladybug.bulk.session import BulkSession

__all__ = ["BulkSession"]
