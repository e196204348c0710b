"""Transparent huge pages for the Neo4j importer's JVM, where the kernel offers them.

Why: the importer (``neo4j-admin database import full``) allocates ~1.8 GB at ASER 1M/3M, its heap
and its off-heap arrays and page cache (malloc'd by Neo4j); on 4 KB pages it takes ~600K page
faults, and a page fault costs more in a VM. Its heap goes on huge pages through the JVM's flag,
its off-heap memory through glibc's ``malloc.hugetlb`` tunable (glibc >= 2.35; older ones ignore
it). Measured on 2 cores, 1M events / 4.5M edges, three interleaved pairs: page faults 597K ->
318K, system CPU 8.0/6.5/6.4 s -> 5.8/5.5/5.2 s, wall 24.8/22.0/21.1 s -> 22.4/21.7/17.9 s. The
server's JVM does not get them: through Bolt at 330K/1M, two pairs, 20.8/21.4K edges/s without
and 14.8/19.9K with (no gain within the noise).
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
