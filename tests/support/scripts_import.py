"""Import a maintainer script from ``scripts/`` (not part of the installed package) by file."""
from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.paths import CHECKOUT

SCRIPTS = CHECKOUT / "scripts"


def load_script_module(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module, loaded once."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
