"""The embedded backend: LadybugDB (the maintained fork of Kùzu), a single-file Cypher database.

``store`` is the :class:`~eventkg.graphstore.ladybug.store.LadybugStore` itself; ``engine`` talks
to the engine (DDL, COPY, the memory budget's buffer pools); ``reads`` answers the read side of
the contract; ``bulk`` holds an ingest's rows and writes them table by table; ``upsert`` writes
rows whose keys may be stored; ``spool`` and ``digest_book`` are the files beside the database.
"""
