"""Transparent huge pages for the Neo4j importer's JVM, where the kernel offers them.

Why: the importer (``neo4j-admin database import full``) allocates its heap and large off-heap
arrays and page cache (malloc'd by Neo4j); on 4 KB pages that is hundreds of thousands of page
faults, and a page fault costs more in a VM. Its heap goes on huge pages through the JVM's flag
(:data:`JVM_FLAG`), its off-heap memory through glibc's ``malloc.hugetlb`` tunable
(:data:`MALLOC_TUNABLE`; glibc >= 2.35, older ones ignore it). The server's JVM does not get them:
no gain within the noise through Bolt (figures: ``docs/performance.md``, "Figures moved from
docstrings (Neo4j)"). Invariant: a ``GLIBC_TUNABLES`` choice of the caller's own is kept.
"""

from __future__ import annotations

from pathlib import Path

JVM_FLAG = "-XX:+UseTransparentHugePages"
SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")
MALLOC_TUNABLE = "glibc.malloc.hugetlb=1"


def offered(setting: Path = SETTING) -> bool:
    """True when the kernel hands out transparent huge pages to a process that asks (``madvise`` or ``always``)."""
    try:
        return "[never]" not in setting.read_text()
    except OSError:  # not Linux, or no THP in this kernel
        return False


def with_malloc_huge_pages(java_env: dict[str, str]) -> dict[str, str]:
    """``java_env`` with glibc's malloc asking for huge pages, unless its ``GLIBC_TUNABLES`` already chose."""
    tunables = java_env.get("GLIBC_TUNABLES", "")
    if "glibc.malloc.hugetlb=" in tunables:
        return java_env
    return dict(java_env, GLIBC_TUNABLES=":".join(t for t in (tunables, MALLOC_TUNABLE) if t))
