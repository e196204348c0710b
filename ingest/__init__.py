"""Loaders: one module per source, each a streaming pipeline parse -> validate -> normalise -> batch -> store.

>>> from graphstore import open_store
>>> from ingest import ev2
>>> report = ev2.load(open_store("/tmp/kg.lbug"), "ingest/samples/ev2", on_error="skip")  # doctest: +SKIP

Modules: :mod:`ingest.ev2`, :mod:`ingest.eeckg`, :mod:`ingest.aser`, :mod:`ingest.abspyramid`,
:mod:`ingest.clomo`; shared pieces in :mod:`ingest.pipeline`, :mod:`ingest.nodes`,
:mod:`ingest.errors`; the lazy registry behind ``eventkg ingest --list`` in :mod:`ingest.registry`.
"""
