"""eventkg.settings: the one reader of the environment, its README table, and its errors."""

from __future__ import annotations

import ast
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from eventkg import settings
from eventkg.errors import EventKGError, SettingError

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = ("graphstore", "ingest", "queries", "tasks", "eventkg")


@pytest.fixture
def clean_env(monkeypatch):
    """Every registered variable unset (monkeypatch puts them back afterwards)."""
    for s in settings.REGISTRY:
        monkeypatch.delenv(s.name, raising=False)
    return monkeypatch


# -- the README table ---------------------------------------------------------------------------


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Settings\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def test_readme_table_lists_exactly_the_registry():
    section = _readme_section()
    names = re.findall(r"^\| `([A-Z0-9_]+)` \|", section, flags=re.MULTILINE)
    assert sorted(names) == sorted(s.name for s in settings.REGISTRY)
    assert len(names) == len(set(names))


def test_readme_table_is_the_generated_one():
    assert settings.markdown_table() in _readme_section(), "regenerate it with: python -m eventkg.settings"


def test_registry_names_are_unique_and_documented():
    names = [s.name for s in settings.REGISTRY]
    assert len(names) == len(set(names))
    assert all(s.default and s.meaning.endswith(".") for s in settings.REGISTRY)


def test_documented_defaults_are_the_applied_ones(clean_env):
    from eventkg.queries.vectors.faiss_build import resolve_index_kind

    assert settings.KEYSET_MAX.default == f"`{settings.keyset_max()}`" == "`20000000`"
    assert settings.NEO4J_VERSION.default == f"`{settings.neo4j_version()}`"
    assert settings.NEO4J_IMPORT_MEMORY.default == f"`{settings.neo4j_import_memory()}`"
    assert settings.INDEX.default == f"`{resolve_index_kind()}`"
    assert settings.neo4j_jvm_flags() == [] and settings.api_key() is None and settings.embed_model() is None
    home = Path.home()
    assert settings.cache_root() == home / ".cache" / "eventkg"
    assert settings.default_store() == str(home / ".local" / "share" / "eventkg" / "store.lbug")


# -- nobody else reads the environment ----------------------------------------------------------


def environment_reads(source: str) -> list[int]:
    """Lines that read an environment variable: ``os.environ[...]``, ``os.environ.<method>(...)``,
    ``os.getenv``, ``os.putenv``, or ``from os import environ/getenv``. Passing the whole
    ``os.environ`` on (``dict(os.environ, X=...)`` for a child process) is not a read."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(a.name in ("environ", "getenv", "environb", "getenvb") for a in node.names):
                lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            if node.attr in ("getenv", "getenvb", "putenv", "unsetenv"):
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript | ast.Attribute) and _is_os_environ(node.value):
            lines.append(node.lineno)
    return sorted(lines)


def _is_os_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute) and node.attr in ("environ", "environb")
        and isinstance(node.value, ast.Name) and node.value.id == "os"
    )


def test_the_scan_finds_every_way_of_reading():
    source = (
        "import os\nfrom os import getenv\n"
        "a = os.environ['A']\nb = os.environ.get('B')\nc = os.getenv('C')\n"
        "os.environ.setdefault('D', '1')\nenv = dict(os.environ, E='1')\n"
    )
    assert environment_reads(source) == [2, 3, 4, 5, 6]


def test_only_settings_reads_the_environment():
    offenders = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "eventkg" / "settings.py":
                continue
            offenders += [f"{path.relative_to(ROOT)}:{n}" for n in environment_reads(path.read_text())]
    assert offenders == [], "read environment variables through eventkg.settings"


def test_no_module_changes_the_umask():
    calls = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr == "umask" or (
                    isinstance(node, ast.ImportFrom) and any(a.name == "umask" for a in node.names)
                ):
                    calls.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert calls == []


# -- read at call time ---------------------------------------------------------------------------


def test_read_when_asked_not_at_import(clean_env, tmp_path):
    clean_env.setenv("EVENTKG_KEYSET_MAX", "123")
    assert settings.keyset_max() == 123
    clean_env.setenv("EVENTKG_KEYSET_MAX", "1_000")
    assert settings.keyset_max() == 1000
    clean_env.setenv("EVENTKG_STORE", "neo4j://db:7687")
    from eventkg.graphstore.open import resolve_store_url

    assert resolve_store_url() == "neo4j://db:7687" and resolve_store_url("x.lbug") == "x.lbug"
    clean_env.setenv("EVENTKG_STORE", "")  # empty counts as unset
    clean_env.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_store_url() == str(tmp_path / "data" / "eventkg" / "store.lbug")


def test_one_cache_root_with_named_folders(clean_env, tmp_path):
    from eventkg.graphstore.neo4j.server import jars
    from eventkg.tasks.models.cache import ResponseCache

    clean_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings.cache_root() == tmp_path / "xdg" / "eventkg"
    assert ResponseCache().directory == tmp_path / "xdg" / "eventkg" / "responses"  # as before the change
    clean_env.setenv("EVENTKG_CACHE", str(tmp_path / "c"))
    assert ResponseCache().directory == tmp_path / "c" / "responses"
    assert jars.cache_dir() == tmp_path / "c" / "neo4j"
    assert settings.nltk_data_dir() == tmp_path / "c" / "nltk_data"
    clean_env.setenv("EVENTKG_NLTK_DATA", str(tmp_path / "nltk"))
    assert settings.nltk_data_dir() == tmp_path / "nltk"
    with pytest.raises(ValueError, match="unknown cache folder"):
        settings.cache_dir("models")


def test_credentials_and_api_key(clean_env):
    clean_env.setenv("NEO4J_PASSWORD", "pw")
    assert settings.neo4j_credentials() == (None, "pw")
    clean_env.setenv("EVENTKG_API_KEY", "k2")
    assert settings.api_key() == "k2"
    clean_env.setenv("OPENAI_API_KEY", "k1")
    assert settings.api_key() == "k1"
    clean_env.setenv("EVENTKG_NEO4J_JVM_FLAGS", " -Xss2m  -Dx=1 ")
    assert settings.neo4j_jvm_flags() == ["-Xss2m", "-Dx=1"]


def test_hub_offline_unless_the_user_says(clean_env):
    clean_env.setenv("HF_HUB_OFFLINE", "")  # recorded, so monkeypatch restores the original
    clean_env.setenv("TRANSFORMERS_OFFLINE", "")
    settings.default_hub_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    clean_env.setenv("HF_HUB_OFFLINE", "0")
    clean_env.setenv("TRANSFORMERS_OFFLINE", "")
    settings.default_hub_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "0" and os.environ["TRANSFORMERS_OFFLINE"] == "0"
    clean_env.setenv("TRANSFORMERS_OFFLINE", "1")
    settings.default_hub_offline()
    assert os.environ["TRANSFORMERS_OFFLINE"] == "1"


# -- bad values ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "accessor"),
    [
        ("EVENTKG_KEYSET_MAX", "abc", settings.keyset_max),
        ("EVENTKG_KEYSET_MAX", "-5", settings.keyset_max),
        ("EVENTKG_KEYSET_MAX", "2e7", settings.keyset_max),
        ("EVENTKG_INDEX", "annoy", settings.index_kind),
        ("EVENTKG_NEO4J_IMPORT_MEMORY", "lots", settings.neo4j_import_memory),
        ("EVENTKG_NEO4J_IMPORT_MEMORY", "150%", settings.neo4j_import_memory),
        ("EVENTKG_NEO4J_VERSION", "4.4.0", settings.neo4j_version),
        ("EVENTKG_NEO4J_CDS", "off", settings.neo4j_cds),
    ],
)
def test_bad_value_names_the_variable(clean_env, name, value, accessor):
    clean_env.setenv(name, value)
    with pytest.raises(SettingError) as err:
        accessor()
    message = str(err.value)
    assert isinstance(err.value, EventKGError) and "\n" not in message
    assert message.startswith(f"environment variable {name}={value!r}: expected ")


def test_good_values_pass(clean_env):
    for value in ("512m", "8g", "90%", "100%", "4096"):
        clean_env.setenv("EVENTKG_NEO4J_IMPORT_MEMORY", value)
        assert settings.neo4j_import_memory() == value
    clean_env.setenv("EVENTKG_INDEX", "HNSW")
    assert settings.index_kind() == "hnsw"
    clean_env.setenv("EVENTKG_NEO4J_VERSION", "5.20.0")
    assert settings.neo4j_version() == "5.20.0"


def test_cli_reports_a_bad_value_in_one_line(tmp_path):
    from eventkg.graphstore import open_store

    with open_store(str(tmp_path / "s.lbug")):  # a store that exists: reading a missing one is another error
        pass
    env = dict(os.environ, EVENTKG_KEYSET_MAX="abc")
    proc = subprocess.run(
        [sys.executable, "-m", "eventkg", "--store", str(tmp_path / "s.lbug"), "stats"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: environment variable EVENTKG_KEYSET_MAX='abc': expected a whole number of keys, "
        "e.g. 150000000 (unset it for the default)"
    ]


# -- side effects of importing -------------------------------------------------------------------


def test_importing_the_embedding_modules_loads_no_heavy_library():
    code = (
        "import sys, eventkg.settings, eventkg.queries.vectors.embeddings, eventkg.queries.vectors.index\n"
        "import eventkg.queries.negatives.nearest, eventkg.queries.retrieval.retrieve\n"
        "heavy = ('faiss', 'torch', 'sentence_transformers', 'sklearn', 'nltk', 'transformers')\n"
        "print(' '.join(m for m in heavy if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.strip() == ""


def test_index_files_get_the_mode_open_gives(tmp_path):
    from eventkg.queries.vectors.files import atomic_write

    before = os.umask(0o027)
    try:
        plain = tmp_path / "plain"
        plain.write_text("x")
        target = tmp_path / "written.json"
        atomic_write(tmp_path, target, lambda tmp: Path(tmp).write_text("{}"))
    finally:
        os.umask(before)
    assert target.read_text() == "{}"
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []
