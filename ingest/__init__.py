"""Loaders: one module per source, each a streaming pipeline parse -> validate -> normalise -> batch -> store.

>>> from eventkg import open_store
>>> from eventkg.ingest import ev2
>>> report = ev2.load(open_store("/tmp/kg.lbug"), "ingest/samples/ev2", on_error="skip")  # doctest: +SKIP

Modules: :mod:`eventkg.ingest.ev2`, :mod:`eventkg.ingest.eeckg`, :mod:`eventkg.ingest.aser`, :mod:`eventkg.ingest.abspyramid`,
:mod:`eventkg.ingest.clomo`; shared pieces in :mod:`eventkg.ingest.pipeline`, :mod:`eventkg.ingest.nodes`,
:mod:`eventkg.ingest.errors`; the lazy registry behind ``eventkg ingest --list`` in :mod:`eventkg.ingest.registry`.
"""
