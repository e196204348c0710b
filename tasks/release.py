"""The papers' releases, run from the user's own checkout: their prompt builders and SES prompts.

eventkg ships none of a release's text. A ``release`` style asks the release itself, at run time,
from a checkout the user points to (``--release PATH``): EV²'s ``src/data.py`` builds every CEC,
CRR and alignment prompt (``EV2Dataset``'s ``S_CEC``, ``I_CEC``, ``I_CEC_DIRECT``, ``CEC_rq3``...
on the stored row, ``k=0``), CLoMo's ``data/{zero,few,cot}_<split>.json`` hold its prompts as
``instruction`` (sent as the system message) and ``input`` (the user message), and CLoMo's
``SES/ses.py`` (with ``SES/eval_prompts.py``) writes the three judge queries, and AbsPyramid's
``generator_main.py`` holds the generation templates (read from its source, never run). Without
``--release``, the EV² styles use the checkout the store's EV² questions were ingested from, when
that folder is one (``data/`` beside ``src/``).

A release module is executed from its file with its own globals; the imports it makes only for
training or for calling an API (torch, transformers, tqdm, openai, pandas) get inert stand-ins, so
nothing outside the module changes and no model library is needed. Module-level draws (the
alignment prompt's unseeded ``random.sample``) go through a :class:`random.Random` seeded per item.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import random
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import TaskError

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore

#: the release styles and the release each reads
RELEASE_STYLES = ("release", "release-direct")

#: top-level modules the releases import only to train or call an API; each gets a stand-in
_STAND_INS: dict[str, dict[str, Any]] = {
    "torch": {}, "transformers": {"AutoTokenizer": None}, "tqdm": {"tqdm": lambda it, *a, **k: it},
    "openai": {}, "pandas": {}, "OpenaiAPI": {"OpenaiAPIMaster": None},
}


class ReleaseError(TaskError):
    """A release checkout is missing or is not the layout its style reads."""


def _stand_in(name: str) -> types.ModuleType:
    mod = types.ModuleType(name)
    for key, value in _STAND_INS[name.split(".")[0]].items():
        setattr(mod, key, value)
    mod.Dataset = object  # torch.utils.data.dataset.Dataset: a plain base class
    return mod


def load_module(path: Path, name: str, siblings: dict[str, types.ModuleType] | None = None) -> types.ModuleType:
    """Execute the release file ``path`` as module ``name`` (never entered in ``sys.modules``).

    Its imports of model or API libraries get stand-ins, and ``siblings`` answer imports of the
    release's own modules (``from eval_prompts import *``); every other import is the real one.
    """
    siblings = siblings or {}
    real_import = builtins.__import__

    def release_import(mod: str, globals_=None, locals_=None, fromlist=(), level=0):  # noqa: ANN001
        top = mod.split(".")[0]
        if level == 0 and mod in siblings:
            return siblings[mod]
        if level == 0 and top in _STAND_INS:
            return _stand_in(mod if fromlist else top)
        return real_import(mod, globals_, locals_, fromlist, level)

    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__builtins__ = dict(vars(builtins), __import__=release_import)
    try:
        code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, module.__dict__)  # noqa: S102 - the user's checkout of the paper's release
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read the release's file ({exc.strerror})") from None
    except SyntaxError as exc:
        raise ReleaseError(f"{path}:{exc.lineno}: the release's file does not compile ({exc.msg})") from None
    return module


def _need(root: Path, parts: tuple[str, ...], what: str, flag: str) -> None:
    missing = [p for p in parts if not (root / p).exists()]
    if missing:
        raise ReleaseError(f"{root}: not a checkout of {what} (no {', '.join(missing)}); "
                           f"pass {flag} PATH, the folder holding the release's {' and '.join(parts)}")


def require(path: str | Path | None, what: str, parts: tuple[str, ...], flag: str = "--release") -> Path:
    """The checkout folder, or a one-line error saying what to pass."""
    if path is None or str(path) == "":
        raise ReleaseError(f"a release style builds its prompts with the code of {what}, which eventkg does not ship: "
                           f"pass {flag} PATH, a checkout of it (the folder holding {' and '.join(parts)})")
    root = Path(path).expanduser()
    _need(root, parts, what, flag)
    return root.resolve()


# --- EV² ------------------------------------------------------------------------------------------

EV2_WHAT = "the EV² release (github.com/TZWwww/EV2)"
EV2_PARTS = ("src/data.py", "data/clustering.json")


class EV2Release:
    """EV²'s ``src/data.py`` from a checkout: the prompt its ``EV2Dataset`` builds for a row."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = require(root, EV2_WHAT, EV2_PARTS)
        self.module = _ev2_data(self.root / "src" / "data.py")
        self.clustering_path = self.root / "data" / "clustering.json"
        self.clusters = json.loads(self.clustering_path.read_text(encoding="utf-8"))

    def prompt(self, method: str, row: dict[str, Any], draw: str | None = None) -> str:
        """What ``EV2Dataset.<method>`` (``k=0``) yields for ``row``; ``draw`` seeds the module's
        ``random`` for the one call (the alignment prompts' candidate draw)."""
        cls = self.module.EV2Dataset
        dataset = cls.__new__(cls)
        dataset.k, dataset.i, dataset.task_name, dataset.clusters = 0, None, method, self.clusters
        self.module.random = random.Random(draw) if draw is not None else random
        try:
            srcs, _choices, _label = next(getattr(dataset, method)(row))
        except (KeyError, ValueError, IndexError, TypeError) as exc:
            raise ReleaseError(f"{self.root}/src/data.py: {method} cannot build question {row.get('id')!r} "
                               f"({type(exc).__name__}: {exc})") from None
        finally:
            self.module.random = random
        return srcs[0]


@cache
def _ev2_data(path: Path) -> types.ModuleType:
    return load_module(path, "ev2_release_data")


def ingested_ev2_checkout(store: GraphStore) -> Path:
    """The EV² checkout the store's questions were ingested from.

    Args:
        store: The store whose EV² ingest recorded its folder (:meth:`GraphStore.ingest_origin`).

    Returns:
        The checkout: the parent of the recorded folder, when it holds ``src/data.py`` and
        ``data/clustering.json`` (the folder was the checkout's ``data/``).

    Raises:
        ReleaseError: The store records no EV² folder, or the folder is not in a checkout: one line
            saying to pass ``--release PATH``.
    """
    origin = store.ingest_origin("ev2")
    if origin is None:
        raise ReleaseError(f"{store.url}: it records no folder its EV² data was ingested from, and a release style "
                           f"builds its prompts with the code of {EV2_WHAT}, which eventkg does not ship: "
                           "pass --release PATH, a checkout of it (the folder holding src/data.py and data/clustering.json)")
    root = Path(origin).parent
    if all((root / part).exists() for part in EV2_PARTS):
        return root
    raise ReleaseError(f"{store.url}: its EV² data was ingested from {origin}, which is not "
                       f"the data/ folder of a checkout of {EV2_WHAT} (no src/data.py beside it): pass --release PATH, "
                       "the folder holding src/data.py and data/clustering.json")


# --- CLoMo ----------------------------------------------------------------------------------------

CLOMO_WHAT = "the CLoMo release (github.com/Eleanor-H/CLOMO)"
CLOMO_PARTS = ("data", "SES/ses.py", "SES/eval_prompts.py")


class ClomoRelease:
    """CLoMo's prompt files and SES judge queries from a checkout."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = require(root, CLOMO_WHAT, CLOMO_PARTS)
        self.ses = _clomo_ses(self.root / "SES")

    def rows(self, setup: str, split: str | None) -> dict[str, dict[str, Any]]:
        """``id_string`` -> row of ``data/<setup>_<split>.json`` (``type_picked/`` for a subset such
        as ``ona_test``); the test split unless told."""
        name = f"{setup}_{split or 'test'}.json"
        path = next((p for p in (self.root / "data" / name, self.root / "data" / "type_picked" / name) if p.is_file()), None)
        if path is None:
            raise ReleaseError(f"{self.root}/data: no {name} (the release has {setup}_test.json, {setup}_dev.json, "
                               f"{setup}_train.json and type_picked/{setup}_o*_test.json)")
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReleaseError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        return {r["id_string"]: r for r in rows}

    def judge_queries(self, input_info: dict[str, Any], prediction: str, qtype: int) -> dict[str, list[dict[str, str]]]:
        """The three chat queries ``SES/ses.py``'s ``eval_func_decomposed`` sends for one item
        (``c_p1_a`` = its query_11, ``c_p2_ap`` = query_12_22, ``c_p2_a`` = query_21), recorded from
        the release's own function, and the generation arguments it sends them with."""
        sent: list[tuple[list[dict[str, str]], dict[str, Any]]] = []

        class Recorder:
            def chat_query(self, query, retry=True, generate_args=None):  # noqa: ANN001, ARG002
                sent.append((query, dict(generate_args or {})))
                return {"choices": [{"message": {"content": "yes"}}]}

        self.ses.eval_func_decomposed(input_info=input_info, pred_info={"pred_str": prediction}, qtype=qtype,
                                      id="eventkg", api_master=Recorder())
        names = ("c_p1_a", "c_p2_ap", "c_p2_a")
        if len(sent) != len(names):
            raise ReleaseError(f"{self.root}/SES/ses.py: eval_func_decomposed sent {len(sent)} queries, not 3")
        self.judge_args = sent[0][1]
        return {n: q for n, (q, _args) in zip(names, sent, strict=True)}


@cache
def _clomo_ses(folder: Path) -> types.ModuleType:
    prompts = load_module(folder / "eval_prompts.py", "clomo_release_eval_prompts")
    return load_module(folder / "ses.py", "clomo_release_ses", siblings={"eval_prompts": prompts})


# --- AbsPyramid -----------------------------------------------------------------------------------

ABSPYRAMID_WHAT = "the AbsPyramid release (github.com/HKUST-KnowComp/AbsPyramid)"
ABSPYRAMID_PARTS = ("generator_main.py",)


class AbsPyramidRelease:
    """AbsPyramid's generation prompts from a checkout: the ``template_map`` literal of the
    ``tokenize_function`` nested in ``generator_main.py``'s ``main()``, read with :mod:`ast`
    (the module imports torch, transformers and peft at its top, so it is not run)."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = require(root, ABSPYRAMID_WHAT, ABSPYRAMID_PARTS)
        self.templates = generation_templates(self.root / "generator_main.py")

    def prompt(self, relation: str, event: str, instance: str) -> str:
        """The input the release builds for a Generation row of type ``relation`` (noun, verb or
        event): ``event`` is the row's event with the ``<``/``>`` marks removed and ``instance``
        the marked words. Noun and verb templates take the event then the instance, the event
        template the instance alone, as ``tokenize_function`` formats them."""
        template = self.templates.get(relation)
        if template is None:
            raise ReleaseError(f"{self.root}/generator_main.py: template_map has no {relation!r} template "
                               f"(it has {', '.join(sorted(self.templates))})")
        return template.format(event, instance) if relation in ("noun", "verb") else template.format(instance)


def generation_templates(path: Path) -> dict[str, str]:
    """``main()`` -> ``tokenize_function`` -> ``template_map = {...}`` of ``path``, evaluated as a literal."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read the release's file ({exc.strerror})") from None
    except SyntaxError as exc:
        raise ReleaseError(f"{path}:{exc.lineno}: the release's file does not parse ({exc.msg})") from None
    main = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"), None)
    tokenize = next((n for n in ast.walk(main) if isinstance(n, ast.FunctionDef) and n.name == "tokenize_function"),
                    None) if main is not None else None
    assign = next((n for n in ast.walk(tokenize) if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "template_map" for t in n.targets)),
                  None) if tokenize is not None else None
    if assign is None:
        raise ReleaseError(f"{path}: no template_map assignment in main()'s tokenize_function "
                           "(not the release's generator_main.py)")
    try:
        templates = ast.literal_eval(assign.value)
    except ValueError:
        raise ReleaseError(f"{path}:{assign.lineno}: template_map is not a literal dict of strings") from None
    if not (isinstance(templates, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in templates.items())):
        raise ReleaseError(f"{path}:{assign.lineno}: template_map is not a dict of relation -> format string")
    return templates


def release_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a release function with its prints kept off the terminal."""
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)
