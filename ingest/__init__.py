"""Loaders: one module per source, each a streaming pipeline parse -> validate -> normalise -> batch -> store.

One entry point, the registry's :func:`~eventkg.ingest.registry.ingest_source` (also
``eventkg.ingest_source``); each source's defaults are declared in its registry entry::

    >>> from eventkg import ingest_source, open_store
    >>> report = ingest_source(open_store("kg.lbug"), "ev2", "ingest/samples/ev2", on_error="skip")  # doctest: +SKIP

Modules: :mod:`eventkg.ingest.ev2`, :mod:`eventkg.ingest.eeckg`, :mod:`eventkg.ingest.aser`, :mod:`eventkg.ingest.abspyramid`,
:mod:`eventkg.ingest.clomo`; shared pieces in :mod:`eventkg.ingest.pipeline`, :mod:`eventkg.ingest.nodes`,
:mod:`eventkg.ingest.errors`; the lazy registry behind ``eventkg ingest --list`` in :mod:`eventkg.ingest.registry`.
"""
