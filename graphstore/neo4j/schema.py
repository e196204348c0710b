"""The uniqueness constraints and indexes a Neo4j store declares, created when it is first opened.

Every label gets a uniqueness constraint on ``id``: it makes each endpoint lookup of the write
path (``MATCH (a:Label {id: ...})``) an index seek, where an unlabelled MATCH scans. The labels
in :data:`INDEXED` also get range indexes on the properties the queries look up by.
"""

from __future__ import annotations

import neo4j

from eventkg.graphstore.model import NODE_TYPES

#: Label -> property with a (non-unique) range index, beside the unique ``id`` of every label.
INDEXED = {
    "Event": ["text"],
    "Concept": ["name"],
    "Argument": ["text", "id_string"],
    "Statement": ["text"],
    "Premise": ["text"],
    "Question": ["qid"],
}


def schema_statements() -> list[tuple[str, str]]:
    """(name, DDL) of the uniqueness constraints and indexes the store declares."""
    stmts = [
        (
            f"{label.lower()}_id",
            f"CREATE CONSTRAINT {label.lower()}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE",
        )
        for label in NODE_TYPES
    ]
    for label, props in INDEXED.items():
        for prop in props:
            name = f"{label.lower()}_{prop}"
            stmts.append((name, f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"))
    return stmts


def creation_order(stmts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``stmts`` with the plain indexes first, then the constraints.

    Why: ``CREATE INDEX`` returns at once and the index fills in the background, where
    ``CREATE CONSTRAINT`` waits until its own index is filled; indexes first, their population
    overlaps the constraints' (figures: ``docs/performance.md``, "Figures moved from docstrings (Neo4j)").
    """
    return sorted(stmts, key=lambda item: item[1].startswith("CREATE CONSTRAINT"))


def ensure_schema(driver: neo4j.Driver, database: str | None) -> None:
    """Create the missing constraints/indexes (once per database, not on every open).

    Each DDL runs in a managed transaction of its own: two processes opening a fresh database
    at once (an ingest and a reader in a second terminal) may deadlock on the label locks, a
    transient error the driver retries; a rule the other process created meanwhile is what we
    wanted (``IF NOT EXISTS`` does not cover a race: the server says it already exists).
    """
    with driver.session(database=database, default_access_mode=neo4j.WRITE_ACCESS) as s:
        have = {r["name"] for r in s.run("SHOW CONSTRAINTS YIELD name")}
        have |= {r["name"] for r in s.run("SHOW INDEXES YIELD name")}
        todo = [ddl for name, ddl in creation_order(schema_statements()) if name not in have]
        for ddl in todo:
            try:
                s.execute_write(_run_ddl, ddl)
            except neo4j.exceptions.ClientError as exc:
                if not (exc.code or "").startswith(_ALREADY_THERE):
                    raise
        if todo:
            s.run("CALL db.awaitIndexes(300)").consume()


def _run_ddl(tx: neo4j.ManagedTransaction, ddl: str) -> None:
    tx.run(ddl).consume()


#: the Neo4j status codes of a schema rule created by another process between our check and our DDL
_ALREADY_THERE = tuple(f"Neo.ClientError.Schema.{c}" for c in (
    "EquivalentSchemaRuleAlreadyExists", "IndexAlreadyExists", "ConstraintAlreadyExists"))
