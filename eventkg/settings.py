"""Every environment variable eventkg honours: declared once, read when asked.

Why one module: the variables used to be read in nine modules, some at import time, and
``EVENTKG_CACHE`` meant "the cache root" in one place and "the response folder" in another.
Here each variable is a :class:`Setting` (name, default, meaning) in :data:`REGISTRY`, and a
typed accessor function reads it **at call time** (so a test's ``monkeypatch.setenv`` or a
user's ``export`` between two calls is seen). A bad value is a :class:`SettingError` naming
the variable. An empty variable counts as unset, as the XDG base-directory spec says.

Caches: one root, ``$EVENTKG_CACHE`` (default ``$XDG_CACHE_HOME/eventkg``, else
``~/.cache/eventkg``), with one documented sub-folder per kind (:data:`CACHE_FOLDERS`):
``indexes/`` (FAISS indexes of stores without a file, e.g. Neo4j), ``neo4j/`` (the test
server's resolved classpaths), ``responses/`` (model API responses) and ``nltk_data/``
(WordNet for METEOR). With the variable unset every folder is where it was before. Before,
``EVENTKG_CACHE`` set also named the response folder itself (``$EVENTKG_CACHE/ab/<key>.json``),
mixed with ``indexes/``; responses cached that way are not found any more (move them into
``$EVENTKG_CACHE/responses/``). The Neo4j classpath cache ignored ``EVENTKG_CACHE``; it now
follows it like the others.

``python -m eventkg.settings`` prints the README's "Settings" table from :data:`REGISTRY`
(a test checks the README holds exactly that table).

The test suite's own variables (``EVENTKG_TEST_BACKENDS``, ``EVENTKG_SHARED``,
``EVENTKG_NEO4J_AUTH``, ``EVENTKG_CHROMIUM``, ``CI``) are read by ``tests/`` and described in
the README's "Tests" section; the package never reads them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from eventkg.errors import SettingError


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, what applies when it is unset, and what it does."""

    name: str
    default: str
    meaning: str
    choices: tuple[str, ...] = ()

    def raw(self) -> str | None:
        """The variable's value now, stripped; None when unset or empty."""
        value = os.environ.get(self.name, "").strip()
        return value or None

    def error(self, value: str, expected: str) -> SettingError:
        return SettingError(f"environment variable {self.name}={value!r}: expected {expected} (unset it for the default)")


# -- the registry -------------------------------------------------------------------------------

STORE = Setting("EVENTKG_STORE", "`$XDG_DATA_HOME/eventkg/store.lbug`",
                "Store URL when `--store` is not given: a path / `ladybug://PATH`, or `neo4j://` / `bolt://`.")
XDG_DATA_HOME = Setting("XDG_DATA_HOME", "`~/.local/share`", "Base folder of the default embedded store.")
XDG_CACHE_HOME = Setting("XDG_CACHE_HOME", "`~/.cache`", "Base folder of the default cache root.")
CACHE = Setting("EVENTKG_CACHE", "`$XDG_CACHE_HOME/eventkg`",
                "Cache root; sub-folders `indexes/` (FAISS indexes of Neo4j stores), `neo4j/` (test-server "
                "classpaths, JVM class-data archives), `responses/` (model API responses), `nltk_data/` (WordNet).")
NLTK_DATA = Setting("EVENTKG_NLTK_DATA", "`$EVENTKG_CACHE/nltk_data`",
                    "Where the WordNet copy for METEOR is built (nltk data folder).")
KEYSET_MAX = Setting("EVENTKG_KEYSET_MAX", "`20000000`",
                     "Keys an embedded store remembers in memory (16 bytes each); raise it for big ingests "
                     "(ASER core: `150000000`).")
MEMORY_MB = Setting("EVENTKG_MEMORY_MB", "`2048`",
                    "Memory (MiB) an embedded store plans to stay within: half is the engine's buffer pool when "
                    "reading; an ingest's node COPYs get a quarter (a bigger table goes in several), its rel "
                    "COPYs what the process leaves, at most three quarters; raise it to go faster.")
NEO4J_USER = Setting("NEO4J_USER", "`neo4j` when only a password is set",
                     "Neo4j user when the store URL carries none.")
NEO4J_PASSWORD = Setting("NEO4J_PASSWORD", "none (no auth; a random one for the test server)",
                         "Neo4j password when the store URL carries none; the test server's initial password.")
NEO4J_VERSION = Setting("EVENTKG_NEO4J_VERSION", "`5.26.0`", "`org.neo4j:neo4j` 5.x version the test server runs.")
NEO4J_JVM_FLAGS = Setting("EVENTKG_NEO4J_JVM_FLAGS", "none",
                          "Extra JVM flags (space-separated) for the test server's `java` command.")
NEO4J_IMPORT_MEMORY = Setting("EVENTKG_NEO4J_IMPORT_MEMORY", "`2g`",
                              "`neo4j-admin database import --max-off-heap-memory` (e.g. `8g`, `90%`).")
NEO4J_CDS = Setting("EVENTKG_NEO4J_CDS", "`1`",
                    "`0`: the test server's and `neo4j-admin`'s JVMs start without class-data archives.",
                    choices=("0", "1"))
EMBED_MODEL = Setting("EVENTKG_EMBED_MODEL", "bundled all-MiniLM-L6-v2",
                      "Sentence-embedding model: a local folder or a sentence-transformers name.")
INDEX = Setting("EVENTKG_INDEX", "`auto`", "FAISS index kind built for retrieval and negatives.",
                choices=("auto", "flat", "ivf", "ivfpq", "hnsw"))
HF_HUB_OFFLINE = Setting("HF_HUB_OFFLINE", "`1` (eventkg sets it when unset)",
                         "`0` lets sentence-transformers download a model by name from the hub.")
TRANSFORMERS_OFFLINE = Setting("TRANSFORMERS_OFFLINE", "`$HF_HUB_OFFLINE` (set when unset)",
                               "transformers' own offline switch, kept equal to `HF_HUB_OFFLINE`.")
OPENAI_API_KEY = Setting("OPENAI_API_KEY", "none", "API key of `openai:` models.")
API_KEY = Setting("EVENTKG_API_KEY", "none", "API key of `openai:` models when `OPENAI_API_KEY` is unset.")

REGISTRY: tuple[Setting, ...] = (
    STORE, XDG_DATA_HOME, CACHE, XDG_CACHE_HOME, NLTK_DATA, KEYSET_MAX, MEMORY_MB,
    NEO4J_USER, NEO4J_PASSWORD, NEO4J_VERSION, NEO4J_JVM_FLAGS, NEO4J_IMPORT_MEMORY, NEO4J_CDS,
    EMBED_MODEL, INDEX, HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE, OPENAI_API_KEY, API_KEY,
)

#: the cache root's sub-folders and what each holds
CACHE_FOLDERS = {
    "indexes": "FAISS indexes of stores without a file (Neo4j), at most 8 stores, least recently used removed",
    "neo4j": "the Neo4j test server's resolved classpaths and its JVMs' class-data archives (~150 MB; the jars "
             "stay in Maven's ~/.m2)",
    "responses": "model API responses (eventkg eval), capped at 512 MB",
    "nltk_data": "the WordNet copy METEOR reads (unless EVENTKG_NLTK_DATA says otherwise)",
}


# -- accessors (read at call time) --------------------------------------------------------------


def _path(setting: Setting) -> Path | None:
    value = setting.raw()
    return Path(value).expanduser() if value else None


def data_home() -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share``."""
    return _path(XDG_DATA_HOME) or Path.home() / ".local" / "share"


def default_store() -> str:
    """The embedded store used when neither ``--store`` nor ``$EVENTKG_STORE`` says."""
    return str(data_home() / "eventkg" / "store.lbug")


def store_url() -> str | None:
    """``$EVENTKG_STORE`` (a store URL), or None."""
    return STORE.raw()


def cache_root() -> Path:
    """``$EVENTKG_CACHE``, else ``$XDG_CACHE_HOME/eventkg``, else ``~/.cache/eventkg``."""
    return _path(CACHE) or (_path(XDG_CACHE_HOME) or Path.home() / ".cache") / "eventkg"


def cache_dir(kind: str) -> Path:
    """The cache root's sub-folder for ``kind`` (one of :data:`CACHE_FOLDERS`)."""
    if kind not in CACHE_FOLDERS:
        raise ValueError(f"unknown cache folder {kind!r}; expected one of {', '.join(CACHE_FOLDERS)}")
    return cache_root() / kind


def nltk_data_dir() -> Path:
    """``$EVENTKG_NLTK_DATA``, else ``<cache root>/nltk_data``."""
    return _path(NLTK_DATA) or cache_dir("nltk_data")


def _whole_number(setting: Setting, default: int, minimum: int, not_a_number: str, too_small: str) -> int:
    """A whole-number setting at least ``minimum`` (``default`` when unset); each bad value named."""
    value = setting.raw()
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise setting.error(value, not_a_number) from None
    if number < minimum:
        raise setting.error(value, too_small)
    return number


def memory_mb() -> int:
    """``$EVENTKG_MEMORY_MB``: a whole number of MiB >= 512 (default 2,048)."""
    return _whole_number(MEMORY_MB, 2048, 512, "a whole number of MiB", "at least 512 (MiB)")


def keyset_max() -> int:
    """``$EVENTKG_KEYSET_MAX``: a whole number >= 0 (default 20,000,000)."""
    return _whole_number(KEYSET_MAX, 20_000_000, 0, "a whole number of keys, e.g. 150000000",
                         "a whole number of keys >= 0")


def neo4j_credentials() -> tuple[str | None, str | None]:
    """``($NEO4J_USER, $NEO4J_PASSWORD)``, each None when unset."""
    return NEO4J_USER.raw(), NEO4J_PASSWORD.raw()


def neo4j_version() -> str:
    """``$EVENTKG_NEO4J_VERSION`` (default 5.26.0)."""
    value = NEO4J_VERSION.raw() or "5.26.0"
    if not re.fullmatch(r"5\.\d+\.\d+", value):
        raise NEO4J_VERSION.error(value, "a Neo4j 5 version such as 5.26.0")
    return value


def neo4j_jvm_flags() -> list[str]:
    """``$EVENTKG_NEO4J_JVM_FLAGS`` split on white space."""
    return (NEO4J_JVM_FLAGS.raw() or "").split()


def neo4j_import_memory() -> str:
    """``$EVENTKG_NEO4J_IMPORT_MEMORY`` (default ``2g``): a size (``512m``, ``8g``) or a share (``90%``)."""
    value = NEO4J_IMPORT_MEMORY.raw() or "2g"
    if not re.fullmatch(r"\d+[kKmMgGtT]?|\d{1,2}%|100%", value):
        raise NEO4J_IMPORT_MEMORY.error(value, "a size such as 2g or 512m, or a share of the RAM such as 90%")
    return value


def neo4j_cds() -> bool:
    """``$EVENTKG_NEO4J_CDS`` (default ``1``): whether the Neo4j JVMs use class-data archives."""
    value = NEO4J_CDS.raw() or "1"
    if value not in NEO4J_CDS.choices:
        raise NEO4J_CDS.error(value, "1 (archives on) or 0 (off)")
    return value == "1"


def embed_model() -> str | None:
    """``$EVENTKG_EMBED_MODEL`` (a model folder or name), or None for the bundled model."""
    return EMBED_MODEL.raw()


def index_kind() -> str | None:
    """``$EVENTKG_INDEX`` lower-cased, one of ``INDEX.choices``; None when unset."""
    value = INDEX.raw()
    if value is None:
        return None
    if value.lower() not in INDEX.choices:
        raise INDEX.error(value, f"one of {', '.join(INDEX.choices)}")
    return value.lower()


def api_key() -> str | None:
    """``$OPENAI_API_KEY``, else ``$EVENTKG_API_KEY``, else None."""
    return OPENAI_API_KEY.raw() or API_KEY.raw()


def default_hub_offline() -> None:
    """Set ``HF_HUB_OFFLINE=1`` (and ``TRANSFORMERS_OFFLINE`` to match) unless the user set them.

    The one place eventkg writes the environment: huggingface_hub reads these variables when
    it is imported, so they must be set before sentence-transformers loads, and nothing is
    downloaded unless the user asks for it.
    """
    offline = HF_HUB_OFFLINE.raw() or "1"
    os.environ[HF_HUB_OFFLINE.name] = offline
    if TRANSFORMERS_OFFLINE.raw() is None:
        os.environ[TRANSFORMERS_OFFLINE.name] = offline


# -- documentation ------------------------------------------------------------------------------


def markdown_table() -> str:
    """The README's table of :data:`REGISTRY` (variable, default, meaning)."""
    lines = ["| Variable | Default | Meaning |", "| --- | --- | --- |"]
    for s in REGISTRY:
        meaning = s.meaning + (f" One of {', '.join(f'`{c}`' for c in s.choices)}." if s.choices else "")
        lines.append(f"| `{s.name}` | {s.default} | {meaning} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
