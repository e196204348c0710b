"""The shape of the package, checked over its source with ``ast`` (nothing is imported).

* No import cycle among eventkg modules: a cycle means two modules are one job split in two
  files, and it breaks as soon as either gains a top-level name the other needs at import.
  Only module-level imports count; imports inside functions and under ``if TYPE_CHECKING:``
  run later or never, so they cannot deadlock an import.
* Layers only point down (``docs/architecture.md``): graphstore imports no ingest, queries,
  tasks or CLI module; ingest no queries, tasks or CLI; queries no ingest, tasks or CLI;
  tasks no ingest or CLI. Imports inside functions count here too (a lazy import is still a
  dependency); ``if TYPE_CHECKING:`` imports do not. The CLI (the ``eventkg.cli`` package and
  every other module directly in ``eventkg/`` except the package root, ``errors``,
  ``progress`` and ``settings``, which every layer may use) may import anything.
* No function or method over :data:`MAX_FUNCTION_LINES` lines of code (its docstring not counted)
  unless its docstring says why with ``Long:`` and a reason.
* No module over :data:`MAX_MODULE_LINES` lines (a warning past :data:`WARN_MODULE_LINES`).
* Typed seams: the store interface's, ``Batch``'s and both backends' row methods say ``NodeRow`` /
  ``EdgeRow``, and no public signature has ``Any`` in a union (``X | Any`` is ``Any``).
* ``tests/`` mirrors the package: a folder per layer, ``tests/queries/<subpackage>/`` for the tests of
  each queries subpackage.
* Every error class (a class deriving, directly or not, from ``Exception``) is defined in its
  layer's ``errors`` module (:data:`ERRORS_MODULES`), which imports only other errors modules.

The module list and each folder's import name come from ``pyproject.toml``'s
``[tool.setuptools.package-dir]``, so a new layer folder is checked without editing this file.
"""

from __future__ import annotations

import ast
import builtins
import re
import tomllib
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 60
#: a module is split by job, not by size: past ``WARN_MODULE_LINES`` lines the suite warns (look for
#: two jobs in one file), past ``MAX_MODULE_LINES`` it fails. A hard limit at 600 cut modules apart
#: where no seam was, so the line to act on is the warning.
WARN_MODULE_LINES = 1000
MAX_MODULE_LINES = 1500
LAYERS = ("graphstore", "ingest", "queries", "tasks")
#: layer -> the layers (and "cli") it must not import
FORBIDDEN = {
    "graphstore": {"ingest", "queries", "tasks", "cli"},
    "ingest": {"queries", "tasks", "cli"},
    "queries": {"ingest", "tasks", "cli"},
    "tasks": {"ingest", "cli"},
}
SHARED = {"eventkg", "eventkg.errors", "eventkg.progress", "eventkg.settings"}  # usable from every layer
LONG_REASON = re.compile(r"Long:\s*\S")


@dataclass(frozen=True)
class Import:
    """One import statement's target module, and where the statement sits."""

    target: str
    line: int
    top_level: bool  # runs when the module is imported (not inside a function)
    type_checking: bool  # under ``if TYPE_CHECKING:``


@cache
def modules() -> dict[str, tuple[Path, bool]]:
    """Every eventkg module: import name -> (file, is a package ``__init__``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dirs: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    out: dict[str, tuple[Path, bool]] = {}
    for package, folder in package_dirs.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join([package, *parts])] = (path, is_package)
    return out


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name][0].read_text(encoding="utf-8"))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(name: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The eventkg modules an import statement in module ``name`` loads."""
    known = modules()
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = name if known[name][1] else name.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    out = []
    for target in targets:
        while target and target not in known:  # ``import eventkg.x.y`` of a name inside a module
            target = target.rpartition(".")[0]
        if target.startswith("eventkg") and target not in out:
            out.append(target)
    return out


@cache
def imports(name: str) -> list[Import]:
    """Every import of an eventkg module in module ``name``."""
    found: list[Import] = []

    def visit(node: ast.AST, top_level: bool, type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.extend(Import(t, child.lineno, top_level, type_checking) for t in _resolve(name, child))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, False, type_checking)
            elif isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), top_level, True)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), top_level, type_checking)
            else:
                visit(child, top_level, type_checking)

    visit(tree(name), True, False)
    return found


def layer(name: str) -> str | None:
    """``graphstore``/``ingest``/``queries``/``tasks``, ``cli``, or None for the shared modules."""
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return None if name in SHARED else "cli"


def import_graph() -> nx.DiGraph:
    """Module -> module for every import that runs at import time."""
    g = nx.DiGraph()
    g.add_nodes_from(modules())
    for name in modules():
        for imp in imports(name):
            if imp.top_level and not imp.type_checking and imp.target != name:
                g.add_edge(name, imp.target, line=imp.line)
    return g


def test_the_checks_see_every_layer_and_resolve_imports() -> None:
    """Guards the checks themselves: a wrong package-dir reading would make them pass vacuously."""
    names = modules()
    assert {"eventkg.graphstore.ladybug.store", "eventkg.ingest.pipeline", "eventkg.queries.retrieval.subgraphs",
            "eventkg.tasks.runner", "eventkg.cli.app"} <= names.keys()
    targets = {imp.target for imp in imports("eventkg.graphstore.ladybug.store")}
    assert {"eventkg.graphstore.base", "eventkg.graphstore.ladybug.bulk", "eventkg.graphstore.ladybug.reads"} <= targets
    lazy = [imp for imp in imports("eventkg.queries.retrieval.subgraphs") if imp.target == "eventkg.queries.induction.induce"]
    assert lazy and not any(imp.top_level for imp in lazy)  # imported inside answer_path only
    assert layer("eventkg.cli.eval") == "cli" and layer("eventkg.errors") is None


def test_no_import_cycles() -> None:
    g = import_graph()
    cycles = []
    for component in nx.strongly_connected_components(g):
        if len(component) > 1:
            cycle = nx.find_cycle(g.subgraph(component))
            path = [u for u, _ in cycle] + [cycle[0][0]]
            cycles.append(" -> ".join(path) + f"  (all of: {', '.join(sorted(component))})")
    assert not cycles, "import cycles among top-level imports:\n" + "\n".join(cycles)


@pytest.mark.parametrize("name", [n for n in sorted(modules()) if layer(n) in FORBIDDEN])
def test_layers_only_point_down(name: str) -> None:
    bad = [
        f"{modules()[name][0].relative_to(ROOT)}:{imp.line} imports {imp.target} ({layer(imp.target)})"
        for imp in imports(name)
        if not imp.type_checking and layer(imp.target) in FORBIDDEN[layer(name)]
    ]
    assert not bad, f"{layer(name)} must not import {', '.join(sorted(FORBIDDEN[layer(name)]))}:\n" + "\n".join(bad)


def _docstring_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of a function's docstring: an Args/Returns/Raises reference does not make a function long."""
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno - first.lineno + 1
    return 0


@pytest.mark.parametrize("name", sorted(modules()))
def test_functions_are_short_or_say_why(name: str) -> None:
    long = []
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = node.end_lineno - node.lineno + 1 - _docstring_lines(node)  # the code, not its reference docs
            if lines > MAX_FUNCTION_LINES and not LONG_REASON.search(ast.get_docstring(node) or ""):
                long.append(f"{modules()[name][0].relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them, or say why in the docstring with 'Long: ...'):\n"
        + "\n".join(long)
    )


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_are_small(name: str) -> None:
    path = modules()[name][0]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, (
        f"{path.relative_to(ROOT)} has {lines} lines (> {MAX_MODULE_LINES}): split it into modules with one job each"
    )
    if lines > WARN_MODULE_LINES:
        warnings.warn(f"{path.relative_to(ROOT)} has {lines} lines: does it hold more than one job?", stacklevel=1)


def test_backends_are_composed_not_mixed() -> None:
    """A store class has ``GraphStore`` as its only base, and no class stands in for another's
    private members with ``_name: Any`` annotations (as mixins typed ``Any`` once did)."""
    offenders = []
    for name, (path, _) in modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b) for b in node.bases]
            if "GraphStore" in bases and len(bases) > 1:
                offenders.append(f"{name}.{node.name}: bases {bases}")
            for item in node.body:
                if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                        and item.target.id.startswith("_") and ast.unparse(item.annotation) == "Any"):
                    offenders.append(f"{name}.{node.name}.{item.target.id}: Any")
    assert not offenders, offenders


#: a method that takes or gives node or edge rows -> (the argument, or "return", that carries them, its row type)
ROW_SIGNATURES = {
    "add_node": ("row", "NodeRow"),
    "add_edge": ("row", "EdgeRow"),
    "upsert_nodes": ("rows", "NodeRow"),
    "upsert_edges": ("rows", "EdgeRow"),
    "get_nodes": ("return", "NodeRow"),
    "iter_nodes": ("return", "NodeRow"),
    "iter_edges": ("return", "EdgeRow"),
}


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr | None]:
    """Each argument's annotation (and ``return``'s), as written."""
    a = node.args
    named = {arg.arg: arg.annotation for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    named.update({arg.arg: arg.annotation for arg in (a.vararg, a.kwarg) if arg is not None})
    return {**named, "return": node.returns}


def _methods(layer_name: str) -> list[tuple[str, str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(module, class, method) for every method of every top-level class of a layer."""
    out = []
    for name in modules():
        if layer(name) == layer_name:
            for cls in tree(name).body:
                if isinstance(cls, ast.ClassDef):
                    out += [(name, cls.name, f) for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    return out


def test_the_store_interface_and_its_backends_type_their_rows() -> None:
    """``GraphStore``'s row methods, ``Batch``'s and both backends' say ``NodeRow`` / ``EdgeRow``, not a bare dict."""
    seen, offenders = set(), []
    for name, cls, method in _methods("graphstore"):
        if method.name not in ROW_SIGNATURES:
            continue
        where, row_type = ROW_SIGNATURES[method.name]
        annotation = _signature(method).get(where)
        seen.add((cls, method.name))
        if annotation is None or not re.search(rf"\b{row_type}\b", ast.unparse(annotation)):
            offenders.append(f"{name}.{cls}.{method.name}: {where} is {annotation and ast.unparse(annotation)}")
    assert not offenders, offenders
    required = {("GraphStore", m) for m in ROW_SIGNATURES if not m.startswith("add_")}
    required |= {("Batch", "add_node"), ("Batch", "add_edge")}
    required |= {(store, m) for store in ("LadybugStore", "Neo4jStore") for m in ("get_nodes", "iter_nodes", "iter_edges")}
    assert required <= seen, sorted(required - seen)  # the check reached the interface and both backends
    batch = next(c for c in tree("eventkg.graphstore.base").body if isinstance(c, ast.ClassDef) and c.name == "Batch")
    fields = {f.target.id: ast.unparse(f.annotation) for f in batch.body
              if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)}
    assert fields["nodes"] == "dict[str, list[NodeRow]]" and fields["edges"] == "dict[str, list[EdgeRow]]"


def _union_members(annotation: ast.expr) -> list[ast.expr] | None:
    """The members of a union annotation (``A | B``, ``Union[A, B]``, ``Optional[A]``), else None."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return [m for side in (annotation.left, annotation.right) for m in (_union_members(side) or [side])]
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).rpartition(".")[2] in ("Union", "Optional"):
        inner = annotation.slice
        return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    return None


def _unions_with_any(annotation: ast.expr | None) -> list[str]:
    """Every union inside ``annotation`` (``list[X | Any]`` too) that has ``Any`` as a member."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a quoted annotation
        annotation = ast.parse(annotation.value, mode="eval").body
    found = []
    for node in ast.walk(annotation) if annotation is not None else ():
        members = _union_members(node)
        if members and any(ast.unparse(m) in ("Any", "typing.Any") for m in members):
            found.append(ast.unparse(node))
    return found


def _public_signatures() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(where, function) for every public function of the package and every public or dunder
    method of its public classes."""
    def public(n: str) -> bool:
        return not n.startswith("_") or (n.startswith("__") and n.endswith("__"))

    out = []
    for name in modules():
        for node in tree(name).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and public(node.name):
                out.append((f"{name}.{node.name}", node))
            elif isinstance(node, ast.ClassDef) and public(node.name):
                out += [(f"{name}.{node.name}.{f.name}", f) for f in node.body
                        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and public(f.name)]
    return out


def test_no_public_signature_has_any_in_a_union() -> None:
    """``X | Any`` is ``Any``: it tells a reader nothing and a checker checks nothing. A graph the
    query layer takes is ``GraphStore | EventGraph`` (``eventkg.queries.graph.event_graph``), a row
    a ``NodeRow`` or ``EdgeRow``."""
    signatures = _public_signatures()
    offenders = [f"{where}({arg}): {u}" for where, f in signatures for arg, ann in _signature(f).items()
                 for u in _unions_with_any(ann)]
    assert not offenders, offenders
    names = {where for where, _ in signatures}
    assert {"eventkg.queries.questions.make.make_questions", "eventkg.queries.oracle.kg_oracle_answer",
            "eventkg.queries.oracle.KGOracle.__init__",
            "eventkg.queries.negatives.unlinked.UnlinkedNegatives.__init__"} <= names  # the walk reached the entry points
    sample = ast.parse("def f(a: int | Any, b: 'Union[str, Any]', c: list[Optional[Any]], d: dict[str, Any]) -> Any: ...")
    found = {arg: _unions_with_any(ann) for arg, ann in _signature(sample.body[0]).items()}
    assert found == {"a": ["int | Any"], "b": ["Union[str, Any]"], "c": ["Optional[Any]"], "d": [], "return": []}


#: layer (as :func:`layer` names it) -> the module that holds every error class of that layer; the
#: CLI and the shared modules (settings, demo...) raise the root's (``eventkg.errors``)
ERRORS_MODULES = {
    "graphstore": "eventkg.graphstore.errors",
    "ingest": "eventkg.ingest.errors",
    "queries": "eventkg.queries.errors",
    "tasks": "eventkg.tasks.errors",
    "cli": "eventkg.errors",
    None: "eventkg.errors",
}
#: "module.Class" -> why that error class is defined outside its layer's errors module (none today)
ERRORS_ELSEWHERE: dict[str, str] = {}
BUILTIN_ERRORS = frozenset(n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException))


def _base_names(node: ast.ClassDef) -> list[str]:
    """A class's bases by their last name (``errors.StoreError`` -> ``StoreError``)."""
    return [b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, ast.Name | ast.Attribute)]


@cache
def error_classes() -> dict[str, tuple[str, int]]:
    """Every class of the package deriving, directly or not, from a built-in exception (``Exception``,
    ``ValueError``...) or from another such class of the package: class name -> (module, line).
    Bases are matched by name, the package's error names being unique (checked here)."""
    classes = [(name, node) for name in modules() for node in ast.walk(tree(name)) if isinstance(node, ast.ClassDef)]
    known = set(BUILTIN_ERRORS)
    found: dict[str, tuple[str, int]] = {}
    grew = True
    while grew:
        grew = False
        for name, node in classes:
            if node.name not in found and any(base in known for base in _base_names(node)):
                found[node.name] = (name, node.lineno)
                known.add(node.name)
                grew = True
    twice = sorted({node.name for name, node in classes if node.name in found and found[node.name][0] != name})
    assert not twice, f"error classes defined twice (one name, one class): {twice}"
    return found


def test_the_error_check_sees_indirect_and_multiple_bases() -> None:
    """Guards the check below: it finds the root, a grandchild, a class with two bases and a plain Exception."""
    found = error_classes()
    assert {"EventKGError", "DiskFullError", "UnknownEventError", "RowError", "CommandModuleError"} <= found.keys()
    assert "GraphStore" not in found and "Batch" not in found
    assert len(found) >= 36, sorted(found)  # 36 when this check was written


def test_error_classes_live_in_their_layers_errors_module() -> None:
    """Every error class of a layer is defined in that layer's ``errors`` module (the root and the CLI's in
    ``eventkg.errors``), so one file lists what a layer can refuse; other modules import them from there."""
    bad = [
        f"{modules()[name][0].relative_to(ROOT)}:{line}: {cls} belongs in {ERRORS_MODULES[layer(name)]}"
        for cls, (name, line) in sorted(error_classes().items())
        if name != ERRORS_MODULES[layer(name)] and f"{name}.{cls}" not in ERRORS_ELSEWHERE
    ]
    assert not bad, "error classes outside their layer's errors module:\n" + "\n".join(bad)


def test_errors_modules_import_only_errors_modules() -> None:
    """A layer's errors module imports the root's and lower layers' errors modules only (the layer test
    checks the direction), and the root's imports nothing of eventkg: importing an error is cheap."""
    missing = sorted(m for m in set(ERRORS_MODULES.values()) if m not in modules())
    assert not missing, f"no errors module: {missing}"
    bad = []
    for name in sorted(set(ERRORS_MODULES.values())):
        allowed = set() if name == "eventkg.errors" else set(ERRORS_MODULES.values()) - {name}
        bad += [f"{modules()[name][0].relative_to(ROOT)}:{imp.line} imports {imp.target}"
                for imp in imports(name) if imp.target not in allowed]
    assert not bad, "errors modules import more than errors modules:\n" + "\n".join(bad)


def test_package_imports_error_classes_from_their_errors_module() -> None:
    """Inside the package an error class is imported from where it is defined, not through a module that
    re-exports it for users (``eventkg.graphstore.base.StoreError``), so the old paths can go one day."""
    found = error_classes()
    bad = []
    for name in modules():
        for node in ast.walk(tree(name)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("eventkg"):
                bad += [f"{modules()[name][0].relative_to(ROOT)}:{node.lineno} imports {alias.name} from {node.module}"
                        for alias in node.names if alias.name in found and found[alias.name][0] != node.module]
    assert not bad, "error classes imported from elsewhere than their errors module:\n" + "\n".join(bad)


#: subpackages of ``tasks/`` that belong to the harness; every other one is a task family
HARNESS_SUBPACKAGES = {"models"}


def _families() -> list[str]:
    return sorted(p.name for p in (ROOT / "tasks").iterdir()
                  if (p / "__init__.py").is_file() and p.name not in HARNESS_SUBPACKAGES)


def _family_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "tasks" and parts[2] in _families() else None


def _registry_targets() -> list[str]:
    """The ``module:Class`` strings of the task registry, read from its source."""
    return [n.value for n in ast.walk(tree("eventkg.tasks.registry"))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and re.fullmatch(r"eventkg\.tasks\.[\w.]+:\w+", n.value)]


def test_task_families_are_folders_apart_from_the_harness() -> None:
    """``tasks/`` holds the harness; each family (``tasks/ev2/``...) its tasks, release adapter, prompts
    and README.md. A registered task outside a family folder, a ``Task`` subclass in a harness module, a
    harness module importing a family module, or one family importing another fails here."""
    families = _families()
    assert {"ev2", "clomo", "abspyramid"} <= set(families), families
    bad = [f"tasks/{f}/: no README.md" for f in families if not (ROOT / "tasks" / f / "README.md").is_file()]
    targets = _registry_targets()
    assert len(targets) >= 6, targets  # the reading of the registry itself
    bad += [f"registry: {t} is not in a family folder" for t in targets if _family_of(t.partition(":")[0]) is None]
    for name, (path, _) in modules().items():
        if layer(name) != "tasks":
            continue
        family = _family_of(name)
        for imp in imports(name):
            other = _family_of(imp.target)
            if other is not None and other != family:
                bad.append(f"{path.relative_to(ROOT)}:{imp.line} imports {imp.target} "
                           f"({'another family' if family else 'a family module from the harness'})")
        if family is None and name != "eventkg.tasks.base":
            bad += [f"{path.relative_to(ROOT)}:{n.lineno}: task class {n.name} in the harness"
                    for n in ast.walk(tree(name)) if isinstance(n, ast.ClassDef)
                    and any(ast.unparse(b).endswith("Task") for b in n.bases)]
    assert not bad, "task families belong in their folders:\n" + "\n".join(bad)


#: the folders of ``tests/``: one per layer, the CLI's, and the shared helpers
TEST_FOLDERS = {*LAYERS, "cli", "support"}


def _subpackages(folder: str) -> set[str]:
    return {p.name for p in (ROOT / folder).iterdir() if (p / "__init__.py").is_file()}


def _folders(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def _queries_imported(path: Path) -> set[str]:
    """The ``eventkg.queries`` subpackages or top-level modules a test file imports, anywhere in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "eventkg.queries":
            names = [f"eventkg.queries.{a.name}" for a in node.names]
        else:
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        out |= {n.split(".")[2] for n in names if n.startswith("eventkg.queries.")}
    return out


def test_tests_mirror_the_package() -> None:
    """``tests/`` has one folder per layer (and ``cli/``, ``support/``); a folder inside a layer's names one of
    its subpackages (``tests/tasks/ev2/``); ``tests/queries/`` has one folder per queries subpackage, and
    directly in it only the tests of its top-level modules (``test_lookup.py`` for ``queries/lookup.py``).
    Every test file under ``tests/queries/`` imports the query layer (one that only drives a command belongs
    in ``tests/cli/``), and one in ``tests/queries/<sub>/`` imports ``eventkg.queries.<sub>``."""
    tests = ROOT / "tests"
    bad = [f"tests/{p.name}/: not a layer, cli or support" for p in _folders(tests) if p.name not in TEST_FOLDERS]
    bad += [f"tests/{f}/: missing" for f in sorted(TEST_FOLDERS - {p.name for p in _folders(tests)})]
    for name in (n for n in LAYERS if (tests / n).is_dir()):
        subpackages = _subpackages(name)
        bad += [f"{p.relative_to(ROOT)}/: {name}/ has no subpackage {p.name}" for p in _folders(tests / name)
                if p.name not in subpackages]
        bad += [f"{p.relative_to(ROOT)}/: no __init__.py" for p in _folders(tests / name)
                if not (p / "__init__.py").is_file()]
    queries = tests / "queries"
    top = {p.stem for p in (ROOT / "queries").glob("*.py")} - {"__init__"}
    subpackages = _subpackages("queries")
    bad += [f"tests/queries/{s}/: missing (one folder per queries subpackage)"
            for s in sorted(subpackages - {p.name for p in _folders(queries)})]
    for path in sorted(queries.rglob("test_*.py")):
        where, imported = path.relative_to(ROOT), _queries_imported(path)
        folder = path.relative_to(queries).parts[0] if path.parent != queries else None
        stem = path.stem.removeprefix("test_")
        if folder is None and not any(stem == m or stem.startswith(f"{m}_") for m in top):
            bad.append(f"{where}: directly in tests/queries/ but queries/ has no module {stem}.py: "
                       "move it to the folder of the subpackage it tests")
        if not imported:
            bad.append(f"{where}: imports no eventkg.queries module (a test of a command goes in tests/cli/)")
        elif folder is not None and folder not in imported:
            bad.append(f"{where}: imports no eventkg.queries.{folder} module ({', '.join(sorted(imported))})")
    assert len(subpackages) >= 8 and {"lookup", "oracle", "stats"} <= top, (subpackages, top)  # the reading itself
    assert not bad, "tests/ mirrors the package:\n" + "\n".join(bad)


def test_no_test_file_imports_another() -> None:
    """A helper two test files share lives in ``tests/support/``: a test file importing another test file
    (``from tests.queries.audit.test_audit import cec_rows``) ties them, and collects the other's tests
    twice under ``--pyargs``. Scripts a test runs in a subprocess are strings, not imports, and are not read."""
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                    if n.startswith("tests.") and n.rsplit(".", 1)[-1].startswith("test_")]
    assert not bad, "move what test files share to tests/support/:\n" + "\n".join(bad)


#: page -> names of test files it names on purpose though they are gone (where a figure was measured
#: before a move); base names, so that this file does not name them whole
FORMER_TEST_FILES = {"docs/reproduce.md": {"test_release_styles.py", "test_release_abspyramid.py"}}
TEST_PATH = re.compile(r"\btests/[\w/]+\.py\b")


def test_the_test_paths_named_in_the_project_exist() -> None:
    """A page, docstring or comment that names a test file (``tests/queries/audit/test_audit.py``) names one
    that is there: a moved test leaves no reader at an empty address. ``CHANGELOG.md`` tells history."""
    files = [p for p in ROOT.glob("*.md") if p.name != "CHANGELOG.md"] + [ROOT / ".ci" / "run"]
    for folder in ("docs", "tests", "bench", "scripts", "eventkg", *LAYERS):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".md", ".py", ".sh"}]
    bad = []
    for path in sorted(set(files)):
        where = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            bad += [f"{where}:{n}: {m}" for m in TEST_PATH.findall(line)
                    if not (ROOT / m).is_file() and Path(m).name not in FORMER_TEST_FILES.get(where, set())]
    assert len(files) > 100, len(files)  # the walk itself
    assert not bad, "test files named but not there:\n" + "\n".join(bad)


def _named_modules(name: str) -> set[str]:
    """The eventkg modules a string constant of module ``name`` names (``"eventkg.tasks.ev2:CECTask"``,
    ``"eventkg.ingest.ev2"``): the registries import their entries by name, not by an import statement."""
    known = modules()
    out = set()
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("eventkg."):
            target = node.value.partition(":")[0]
            if target in known:
                out.add(target)
    return out


def package_users() -> dict[str, set[str]]:
    """Module -> the package modules that import it (at import time, lazily or for typing) or name it."""
    users: dict[str, set[str]] = {name: set() for name in modules()}
    for name in modules():
        for target in {imp.target for imp in imports(name)} | _named_modules(name):
            if target != name:
                users[target].add(name)
    return users


#: modules nothing in the package imports, by design: ``python -m eventkg``
ENTRY_POINTS = {"eventkg.__main__"}


def test_no_module_is_only_for_tests_or_benches() -> None:
    """Every module of the package is used by the package: imported by another of its modules, named by a
    registry, or an entry point. A data generator or oracle that only tests and benches import belongs in
    ``tests/support/`` (or ``bench/``), not in what users install."""
    unused = [
        f"{modules()[name][0].relative_to(ROOT)}"
        for name, users in sorted(package_users().items())
        if not users and not modules()[name][1] and name not in ENTRY_POINTS
    ]
    assert not unused, (
        "modules no package module imports (only tests or benches do): move them to tests/support/ or bench/\n"
        + "\n".join(unused)
    )


def test_the_usage_check_sees_registries_and_lazy_imports() -> None:
    """Guards the check above: registry targets and imports inside functions count as uses."""
    users = package_users()
    assert "eventkg.tasks.registry" in users["eventkg.tasks.clomo.tasks"]  # only named as "eventkg.tasks.clomo.tasks:ClomoTask"
    assert "eventkg.ingest.registry" in users["eventkg.ingest.ev2"]
    assert "eventkg.tasks.models" in users["eventkg.tasks.models.kg_oracle"]  # imported inside a function
