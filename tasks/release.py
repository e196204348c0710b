"""The generic release runner: a paper's release file executed or read from the user's own checkout.

eventkg ships none of a release's text. A ``release`` style asks the release itself, at run time,
from a checkout the user points to (``--release PATH``); each family's ``release.py``
(``tasks/ev2/release.py``, ``tasks/clomo/release.py``, ``tasks/abspyramid/release.py``) says which
files of its release it reads and how. This module holds what they share: :func:`require` (the
checkout, or a one-line error saying what to pass), :func:`load_module` and :class:`ReleaseError`.

A release module is executed from its file with its own globals; the imports it makes only for
training or for calling an API (torch, transformers, tqdm, openai, pandas) get inert stand-ins, so
nothing outside the module changes and no model library is needed.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import types
from pathlib import Path
from typing import Any

from eventkg.tasks.errors import ReleaseError

#: top-level modules the releases import only to train or call an API; each gets a stand-in
_STAND_INS: dict[str, dict[str, Any]] = {
    "torch": {}, "transformers": {"AutoTokenizer": None}, "tqdm": {"tqdm": lambda it, *a, **k: it},
    "openai": {}, "pandas": {}, "OpenaiAPI": {"OpenaiAPIMaster": None},
}


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
