"""A local Neo4j 5 Community server from Maven Central jars, apart from the store that talks to it.

``launch`` resolves the jars (``pom.xml``), writes the configuration, starts and stops the JVM;
``cds`` keeps class-data-sharing archives so the JVMs start faster; ``huge_pages`` offers
transparent huge pages to the importer's JVM where the kernel has them.
"""
