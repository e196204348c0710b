"""The registered loaders, with their sources, formats and own options (``eventkg ingest --list``).

Kept lazy (lm-evaluation-harness lesson): listing loaders imports no loader module. Each entry
declares the options its ``load()`` takes beyond the common ones (:data:`COMMON_OPTIONS`), so
the CLI's one ``eventkg ingest SOURCE PATH`` command can offer and check them without knowing
any source.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from eventkg.ingest.errors import LoaderError

if TYPE_CHECKING:
    from eventkg.graphstore.base import GraphStore
    from eventkg.ingest.pipeline import IngestReport

#: what every loader accepts, whatever its source
COMMON_OPTIONS = ("on_error", "rejects", "limit", "batch_size", "progress")
#: table rows per store write, unless a loader's entry declares its own (:attr:`LoaderSpec.batch_size`)
DEFAULT_BATCH_SIZE = 50_000


@dataclass(frozen=True)
class LoaderOption:
    """One option a loader takes beyond the common ones: keyword, its type and what it does.

    ``type`` is ``bool`` (a flag), ``Path``, ``int`` or ``str``; the CLI spells the keyword
    ``--kebab-case`` (``map_events`` -> ``--map-events``).
    """

    name: str
    type: type
    help: str

    @property
    def flag(self) -> str:
        return option_flag(self.name)


def option_flag(keyword: str) -> str:
    """How the CLI spells a loader keyword: ``map_events`` -> ``--map-events``."""
    return "--" + keyword.replace("_", "-")


@dataclass(frozen=True)
class LoaderSpec:
    """One source: the module that parses it, what it reads, an example, its own options and defaults.

    ``batch_size`` is the default number of table rows per store write for this source (the
    ``--batch-size`` a user leaves unset).
    """

    name: str
    module: str
    title: str
    formats: str
    citation: str
    size: str
    example: str = ""
    options: tuple[LoaderOption, ...] = field(default=())
    batch_size: int = DEFAULT_BATCH_SIZE

    def load_module(self) -> ModuleType:
        return importlib.import_module(self.module)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``eventkg ingest --list --json`` prints."""
        return {"name": self.name, "module": self.module, "title": self.title, "formats": self.formats,
                "citation": self.citation, "size": self.size, "example": self.example, "batch_size": self.batch_size,
                "options": [{"name": o.flag, "type": o.type.__name__, "help": o.help} for o in self.options]}


#: a folder lacking some files of its dataset is ingested all the same (an error otherwise)
PARTIAL = LoaderOption("partial", bool, "Accept a folder that lacks some files of the dataset; the summary names them.")

LOADERS: dict[str, LoaderSpec] = {
    info.name: info
    for info in [
        LoaderSpec(
            "ev2", "eventkg.ingest.ev2", "EV² event-relation reasoning benchmark",
            "S_CEC/S_CRR/I_CEC/I_CRR .jsonl + clustering.json",
            "EV²: Tao et al., A Comprehensive Evaluation on Event Reasoning of LLMs, arXiv:2404.17513, 2024 (TZWwww/EV2)",
            "2,442 questions; ~1,570 event types; 1,000 clusters",
            "eventkg ingest ev2 ingest/samples/ev2",
            (PARTIAL,),
        ),
        LoaderSpec(
            "eeckg", "eventkg.ingest.eeckg", "EECKG eventuality-centric commonsense graph",
            "ConceptNet 5 assertions CSV (tab) or head,relation,tail[,weight] TSV/CSV",
            "EECKG: Wang, Cao, Chen and Wang, An Eventuality-Centric Commonsense KG, KSEM 2022 (used by EV², §3.1)",
            "verb-phrase events; Causes/Before/HasSubevent",
            "eventkg ingest eeckg ingest/samples/eeckg --on-error skip --rejects rejects.jsonl",
        ),
        LoaderSpec(
            "aser", "eventkg.ingest.aser", "ASER eventuality graph (streamed)",
            "KG.db SQLite (Eventualities, Relations) [+ concept.db]",
            "ASER: Zhang et al., a large-scale eventuality knowledge graph, WWW 2020 / AIJ 2022 (HKUST-KnowComp/ASER)",
            "tens of millions of eventualities; 15 discourse relations",
            "eventkg ingest aser ingest/samples/aser/KG.db --map-events --concepts ingest/samples/aser/concept.db",
            (
                LoaderOption("map_events", bool, "Also add CAUSES/BEFORE from Result/Reason/Precedence/Succession."),
                LoaderOption("concepts", Path, "An ASER concept.db to add Concept nodes + ABSTRACTS_TO."),
            ),
            # bigger writes are faster on LadybugDB for ASER's many small rows (docs/performance.md)
            batch_size=200_000,
        ),
        LoaderSpec(
            "abspyramid", "eventkg.ingest.abspyramid", "AbsPyramid abstraction benchmark",
            "{Detection,Generation}/{noun,verb,event,merged}_dataset/{train,valid,test}.json (JSON lines)",
            "AbsPyramid: Wang et al., Benchmarking the Abstraction Ability of LMs, arXiv:2311.09174, 2023 (HKUST-KnowComp/AbsPyramid)",
            "220,797 tuples; Noun/Verb/Event-Entail",
            "eventkg ingest abspyramid ingest/samples/abspyramid",
        ),
        LoaderSpec(
            "clomo", "eventkg.ingest.clomo", "CLoMo counterfactual logical modification",
            "zero_/few_/cot_<split>.json (JSON lists)",
            "CLoMo: Huang, Hong et al., Counterfactual Logical Modification with LLMs, ACL 2024 (Eleanor-H/CLOMO)",
            "1,000 items (600/200/200)",
            "eventkg ingest clomo ingest/samples/clomo",
            (PARTIAL,),
        ),
    ]
}


def get_loader(name: str) -> LoaderSpec:
    """The loader registered as ``name``; a one-line error lists the known ones."""
    try:
        return LOADERS[name]
    except KeyError:
        raise LoaderError(f"unknown source {name!r}; known: {', '.join(LOADERS)}") from None


def loader_options() -> dict[str, LoaderOption]:
    """Every source-specific option of every loader, by keyword (one declaration per keyword)."""
    return {o.name: o for info in LOADERS.values() for o in info.options}


def option_owners(keyword: str) -> list[str]:
    """The sources whose loader takes ``keyword`` as its own option."""
    return [i.name for i in LOADERS.values() if any(o.name == keyword for o in i.options)]


def check_options(info: LoaderSpec, options: dict[str, Any]) -> None:
    """Refuse, in one line, an option ``info``'s loader does not take (before anything is opened)."""
    own = {o.name for o in info.options}
    for name in options:
        if name in COMMON_OPTIONS or name in own:
            continue
        owners = option_owners(name)
        takes = ", ".join(o.name for o in info.options) or "only the common options"
        whose = f" (an option of {', '.join(owners)})" if owners else ""
        raise LoaderError(f"source {info.name!r} does not take {name}{whose}; {info.name} takes {takes}", name)


def ingest_source(store: GraphStore, source: str, path: str | Path, **options: Any) -> IngestReport:
    """Ingest ``path`` into ``store`` with the loader registered as ``source``.

    The registry runs the pipeline (:func:`eventkg.ingest.pipeline.ingest`) on the loader's
    ``parse``, so a loader module is its parse and row functions; its defaults are its entry's
    (:attr:`LoaderSpec.batch_size`). Exported as ``eventkg.ingest_source``.

    Args:
        store: An open, writable store.
        source: A key of :data:`LOADERS` (``ev2``, ``eeckg``, ``aser``, ``abspyramid``, ``clomo``).
        path: The source's file or folder (see its entry's ``reads``).
        **options: The common options (``on_error``, ``rejects``, ``limit``, ``batch_size``,
            ``progress``) and the source's own (:attr:`LoaderSpec.options`).

    Returns:
        The ingest's :class:`~eventkg.ingest.pipeline.IngestReport` (rows read, written, rejected).

    Raises:
        LoaderError: An unknown source, or an option its loader does not take (naming the sources that do).
        IngestError: A bad row (with ``on_error="raise"``) or an unreadable file: one line naming file,
            line and reason.
        DiskFullError: The embedded store's disk cannot hold what the ingest will add (checked first,
            :func:`eventkg.ingest.checks.check_disk_room`), or it filled up meanwhile.

    Examples:
        >>> ingest_source(store, "ev2", "ingest/samples/ev2", on_error="skip")  # doctest: +SKIP
    """
    from eventkg.ingest.checks import check_disk_room
    from eventkg.ingest.pipeline import ingest

    info = get_loader(source)
    check_options(info, options)
    check_disk_room(getattr(store, "url", ""), path, info.name, limit=options.get("limit"))  # refused first
    module = info.load_module()
    if options.get("batch_size") is None:
        options["batch_size"] = info.batch_size
    return ingest(store, info.name, module.parse, path, **options)


def __getattr__(name: str) -> Any:
    """``LoaderInfo``, the entry's former name: :class:`LoaderSpec` with a DeprecationWarning (kept one release)."""
    if name == "LoaderInfo":
        import warnings

        warnings.warn("eventkg.ingest.registry.LoaderInfo is deprecated: use LoaderSpec (the name of a registry "
                      "entry, as the task registry's TaskSpec)", DeprecationWarning, stacklevel=2)
        return LoaderSpec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
