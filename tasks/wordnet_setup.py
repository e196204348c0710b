"""WordNet for nltk's METEOR without nltk's downloader (no network here).

Debian ships WordNet 3.0 (``apt-get install -y wordnet-base wordnet-sense-index``) under
``/usr/share/wordnet``. nltk wants it at ``<nltk_data>/corpora/wordnet/`` with a ``lexnames``
file Debian lacks, and (nltk 3.10) refuses corpus paths outside its data roots, so we build
an nltk_data folder in a cache dir and put that folder on ``nltk.data.path``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from eventkg import settings
from eventkg.tasks.errors import TaskError

DEBIAN_WORDNET = Path("/usr/share/wordnet")

# The 45 lexicographer files of WordNet 3.0: number, name, syntactic category.
LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
    "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession",
    "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption",
    "verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
    "verb.social", "verb.stative", "verb.weather", "adj.ppl",
]
_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
_FILES = ("data.adj", "data.adv", "data.noun", "data.verb", "index.adj", "index.adv", "index.noun", "index.verb",
          "adj.exc", "adv.exc", "noun.exc", "verb.exc", "index.sense", "cntlist", "frames.vrb")


def build_nltk_wordnet(source: Path = DEBIAN_WORDNET, target: Path | None = None) -> Path:
    """Copy Debian's WordNet into ``target/corpora/wordnet`` (once) and return ``target``.

    ``target`` None is ``$EVENTKG_NLTK_DATA``, else the cache root's ``nltk_data/`` (eventkg.settings).
    """
    target = target or settings.nltk_data_dir()
    dest = target / "corpora" / "wordnet"
    if (dest / "lexnames").is_file() and (dest / "data.noun").is_file():
        return target
    missing = [f for f in _FILES if not (source / f).is_file()]
    if missing:
        raise TaskError(
            f"WordNet not found in {source} (missing {', '.join(missing[:3])}...): METEOR needs it; "
            "run: apt-get update && apt-get install -y wordnet-base wordnet-sense-index"
        )
    dest.mkdir(parents=True, exist_ok=True)
    for f in _FILES:
        shutil.copyfile(source / f, dest / f)
    lines = [f"{i:02d}\t{name}\t{_POS[name.split('.')[0]]}" for i, name in enumerate(LEXNAMES)]
    (dest / "lexnames").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def ensure_wordnet() -> None:
    """Make ``nltk.corpus.wordnet`` loadable: use nltk's own copy if present, else Debian's."""
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
        return
    except LookupError:
        pass
    root = build_nltk_wordnet()
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
