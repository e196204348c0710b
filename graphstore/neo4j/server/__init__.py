"""A local Neo4j 5 Community server from Maven Central jars, apart from the store that talks to it.

``jars`` resolves the jars (``pom.xml``) and caches them; ``home`` writes a server's folder, its
``neo4j.conf`` and initial password; ``jvm`` builds the java command lines of the server and of
``neo4j-admin``; ``launch`` is the lifecycle (prepare, start, wait, stop, bulk import) that
``eventkg neo4j`` runs; ``cds`` keeps class-data-sharing archives so the JVMs start faster;
``huge_pages`` offers transparent huge pages to the importer's JVM where the kernel has them.
The store package never imports this one; this one uses the store (to train an archive) and
the import files of ``admin_import``.
"""
