"""The jars a local Neo4j server runs from: ``org.neo4j:neo4j`` (and Browser) resolved by Maven, cached.

Why not Docker: CI machines and laptops without Docker can still run the Neo4j half of the
contract suite. Owns resolving the class path (:func:`resolve`, ``pom.xml`` beside this module,
downloading on first use), its cache (:func:`cache_dir`: the ``neo4j/`` folder of
``$EVENTKG_CACHE``, which also holds the JVMs' class-data archives) and the check for the
tools it needs (:func:`missing_tools`). Invariant: a cached class path is used only while every
entry on it exists, and it lists jars and folders only (:func:`eventkg.graphstore.neo4j.server.cds.jars_only`).
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
import subprocess
from pathlib import Path

from eventkg import settings as env
from eventkg.graphstore.errors import Neo4jServerError
from eventkg.graphstore.neo4j.server.cds import jars_only

__all__ = ["POM", "Neo4jServerError", "cache_dir", "missing_tools", "resolve"]

POM = Path(str(importlib.resources.files(__package__).joinpath("pom.xml")))


def missing_tools() -> list[str]:
    """The external programs a local server needs that are not on PATH."""
    return [t for t in ("java", "mvn") if shutil.which(t) is None]


def cache_dir() -> Path:
    """Where resolved classpaths are cached: ``<cache root>/neo4j`` (see :mod:`eventkg.settings`)."""
    return env.cache_dir("neo4j")


def resolve(version: str, with_browser: bool = False, refresh: bool = False) -> list[str]:
    """The class path of ``org.neo4j:neo4j`` (and Browser), jars only, resolved by Maven once and cached."""
    name = f"classpath-{version}{'-browser' if with_browser else ''}.txt"
    cached = cache_dir() / name
    if cached.exists() and not refresh:
        entries = [p for p in cached.read_text().strip().split(os.pathsep) if p]
        if entries and all(Path(p).exists() for p in entries):
            return jars_only(entries)
    if missing_tools():
        raise Neo4jServerError(f"cannot prepare the Neo4j test server: {', '.join(missing_tools())} not on PATH")
    cached.parent.mkdir(parents=True, exist_ok=True)
    out = cached.with_suffix(".tmp")
    cmd = ["mvn", "-q", "-B", "-f", str(POM), f"-Dneo4j.version={version}"]
    cmd += ["-Pbrowser"] if with_browser else []
    cmd += ["dependency:build-classpath", f"-Dmdep.outputFile={out}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise Neo4jServerError(f"mvn could not resolve org.neo4j:neo4j:{version} (exit {proc.returncode}):\n{tail}")
    out.replace(cached)
    return jars_only([p for p in cached.read_text().strip().split(os.pathsep) if p])
