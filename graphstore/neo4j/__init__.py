"""The server backend: Neo4j 5 through the official ``neo4j`` driver (Bolt).

``store`` is the :class:`~eventkg.graphstore.neo4j.store.Neo4jStore`; ``connect`` and ``schema``
open a database; ``reads`` answers the read side of the contract; ``writes`` sends a batch in
bounded transactions, cut by ``typed_parts``, written by ``upsert`` and ``pairs`` with the node
ids of ``node_ids``; ``admin_import`` writes an embedded store as ``neo4j-admin`` import files.
The server process itself (tests, local use) is :mod:`eventkg.graphstore.neo4j.server`.
"""
