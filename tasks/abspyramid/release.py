"""AbsPyramid's release adapter: the generation templates of the release's ``generator_main.py``.

The file is read from the user's checkout with :mod:`ast`, never run (it imports torch,
transformers and peft at its top).
"""

from __future__ import annotations

import ast
from pathlib import Path

from eventkg.tasks.errors import ReleaseError
from eventkg.tasks.release import require

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
