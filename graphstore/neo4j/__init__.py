"""The server backend: Neo4j 5 through the official ``neo4j`` driver (Bolt).

``store`` is the :class:`~eventkg.graphstore.neo4j.store.Neo4jStore`, composed of a ``connect``
Connection (opening creates the ``schema``), a ``writer`` BatchWriter and the ``reads`` functions.
The write path, one job a module: ``typed_parts`` types a batch's rows; ``writer`` decides which are
known new (and keeps a bulk session's key sets and ``node_ids``); ``transactions`` cuts them into
bounded transactions and commits each with retries; ``upsert`` and ``pair_edges`` are the statements
one transaction runs. ``admin_import`` writes an embedded store as ``neo4j-admin`` import files.
The server process itself (tests, local use) is :mod:`eventkg.graphstore.neo4j.server`.
"""
