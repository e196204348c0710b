"""The embedded backend: LadybugDB (the maintained fork of Kùzu), a single-file Cypher database.

``store`` is :class:`~eventkg.graphstore.ladybug.store.LadybugStore`, composed of parts:
``database`` (the open database: connection, buffer pool, transactions, checkpoints),
``digest_file`` (the tables' digests, on disk and pending), ``stored_keys`` (which keys each table
holds), ``writer`` (every write, keeping digests and key sets true) and ``bulk`` (the bulk session:
held and waiting rows, written table by table). ``engine`` holds the stateless engine helpers and
the memory budget's pools, ``reads`` the read side of the contract, ``upsert`` the writing of rows
whose keys may be stored, ``spool`` the files a session holds rows in.
"""
