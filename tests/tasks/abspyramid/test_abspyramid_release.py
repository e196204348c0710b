"""AbsPyramid's release style against the release itself (../shared/data/releases/abspyramid).

The reference side runs the release's own ``tokenize_function`` (nested in ``generator_main.py``'s
``main()``), lifted out of the file with :mod:`ast` and executed with stand-ins for the objects
it closes over (``data_args``, ``training_args`` and a tokenizer that hands back what it is
given); eventkg's side renders the items of a store the project's AbsPyramid samples (in the
release's layout) were ingested into. Skips when ../shared is absent.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from eventkg.graphstore import open_store
from eventkg.graphstore.model import stable_id
from eventkg.ingest.registry import ingest_source
from eventkg.tasks.errors import ReleaseError, TaskError
from eventkg.tasks.registry import get_task
from tests.support.paths import SAMPLES as SAMPLES_DIR
from tests.support.releases import ABSPYRAMID

needs_release = pytest.mark.skipif(not (ABSPYRAMID / "generator_main.py").is_file(),
                                   reason=f"the AbsPyramid release is not at {ABSPYRAMID} (put ../shared beside the checkout)")
TYPES = ("noun", "verb", "event")


class _EchoTokenizer:
    """Hands back the texts it is asked to encode: the release's ``input_list`` as built."""

    pad_token = ""
    padding_side = "right"

    def batch_encode_plus(self, texts, **_kwargs):  # noqa: ANN001, ANN003, ANN201
        return list(texts)

    __call__ = batch_encode_plus


def _release_tokenize_function(data_type: str | None):
    """The release's ``tokenize_function`` from its file, closed over minimal stand-ins."""
    path = ABSPYRAMID / "generator_main.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    node = next(n for n in ast.walk(main) if isinstance(n, ast.FunctionDef) and n.name == "tokenize_function")
    namespace = {
        "data_args": SimpleNamespace(data_type=data_type, max_source_length=30, max_target_length=10),
        "training_args": SimpleNamespace(per_device_eval_batch_size=1),
        "tokenizer": _EchoTokenizer(),
    }
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    return namespace["tokenize_function"]


SAMPLES = SAMPLES_DIR / "abspyramid"


def _generation_files(root: Path) -> list[tuple[Path, str | None]]:
    """The Generation files under ``root``, with the ``--data_type`` the release runs each with
    (its folder's type; ``merged_dataset`` rows carry their own). The release repository ships no
    data, so the project's samples in the release's layout are the items compared."""
    return [(path, next((t for t in TYPES if f"{t}_dataset" in path.parts), None))
            for path in sorted(root.rglob("*.json")) if "Generation" in path.parts]


@pytest.fixture(scope="module")
def abs_store(tmp_path_factory):
    store = open_store(str(tmp_path_factory.mktemp("absrel") / "store.lbug"))
    ingest_source(store, "abspyramid", SAMPLES)
    yield store
    store.close()


@needs_release
def test_generation_prompts_are_the_release_s_byte_for_byte(abs_store) -> None:
    task = get_task("abspyramid-gen", style="release", release=str(ABSPYRAMID))
    ours = {(it.doc["gen_row"], it.meta["relation"]): task.render(it) for it in task.build(abs_store)}
    compared, same, rows = set(), 0, 0
    for path, kind in _generation_files(SAMPLES):
        objs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        examples = {"event": [o["event"] for o in objs], "concept": [o["concept"] for o in objs],
                    "type": [o.get("type") or kind for o in objs]}
        input_list = _release_tokenize_function(kind)(examples, is_eval=True)
        assert len(input_list) == len(objs)
        for obj, theirs, rtype in zip(objs, input_list, examples["type"], strict=True):
            rows += 1
            key = (stable_id("abspyramid-gen-row", obj["event"], obj["concept"]), rtype)
            assert ours[key] == theirs, (path.name, obj)
            same += 1
            compared.add(key)
    assert rows > 0 and same == rows  # every Generation row of the samples: 45 items, each the release's input
    assert compared == set(ours)  # and no item of eventkg's that the release does not build


@needs_release
def test_generation_release_style_sends_the_release_s_decoding() -> None:
    task = get_task("abspyramid-gen", style="release", release=str(ABSPYRAMID))
    g = task.generation()
    assert (g.max_tokens, g.temperature) == (10, 0.0)  # greedy, --max_target_length 10
    assert get_task("abspyramid-gen").generation().max_tokens == 32  # eventkg's own style keeps its limit


def test_release_style_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError) as info:
        get_task("abspyramid-gen", style="release")
    assert "--release PATH" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ReleaseError, match=r"no generator_main\.py"):
        get_task("abspyramid-gen", style="release", release=str(tmp_path))
    (tmp_path / "generator_main.py").write_text("def main():\n    pass\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"generator_main\.py: no template_map"):
        get_task("abspyramid-gen", style="release", release=str(tmp_path))
    (tmp_path / "generator_main.py").write_text(
        "def main():\n    def tokenize_function(examples):\n        template_map = dict(noun=x)\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"generator_main\.py:3: template_map is not a literal"):
        get_task("abspyramid-gen", style="release", release=str(tmp_path))
    with pytest.raises(TaskError, match="no release style: the release's detectors classify") as info:
        get_task("abspyramid-det", style="release")
    assert "\n" not in str(info.value)
