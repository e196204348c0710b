"""CLoMo (Huang, Hong et al., ACL 2024): counterfactual logical-modification items into the typed graph.

Files: ``zero_<split>.json``, ``few_<split>.json``, ``cot_<split>.json`` — each a JSON list of
``{instruction, input, output, qtype, id_string, input_info: {P, O, Om, Q}}``. The three
prompt settings repeat the same items; the split comes from the file name (``zero_test.json``
-> ``test``). The release's ``data/type_picked/`` (``zero_ona_test.json``: the test items of one
relation, ``o`` + ``na``/``sa``/``s``/``w``) and ``data/type_excluded/`` (``zero_xna_train.json``:
the train items of the three other relations) hold subsets of the same items for the paper's
per-type experiments: their items are not new items, each is recorded as belonging to the
subset (``ona_test``...) and ``eventkg eval clomo --split ona_test`` selects them.

One item per ``id_string`` (unique across the release's splits). Each item becomes:

* ``Argument`` (state 1, text = ``P``) and ``Argument'`` (an ``Argument`` with state 2,
  text = ``output``), both with ``qtype`` = the relation name (``model.CLOMO_RELATIONS``
  from ``qtype`` 0..3), ``id_string`` and ``split``; ``COUNTERFACTUAL_OF`` Argument' -> Argument;
  the subsets the item belongs to are in ``sources`` as ``clomo:<subset>`` (the data model
  declares no property for them: ``sources`` is the node's provenance, unioned on merge);
* ``Statement`` nodes (id from the text, so a statement the modification left unchanged is
  one node in both arguments) with ``PART_OF`` (``order`` = the StatementN number);
* ``Premise`` nodes from ``O`` (Premise1) and ``Om`` (Premise2) with their ``Premise1:`` /
  ``Premise2:`` prefixes removed; the logical relation Premise1 -> Argument (``state`` 1)
  and Premise2 -> Argument' (``state`` 2).

Every item of every file is checked (types included), also when an earlier file held it: an
``id_string`` read again with other content (split, qtype, P, O, Om, output) is refused naming
both places; the same item again is counted (``IngestReport.repeated``). A file that cannot be
read as a JSON list (cut, empty, NUL bytes, not UTF-8) is one reject with ``--on-error skip``.
A folder must hold the three prompt settings of each split it has, and the splits of the
release (train, dev, test), of a dev+test sample or of a test-only one; ``partial=True``
(``--partial``) ingests what is there and the report names what was left out.

The question stem ``Q`` and the prompt text are not stored (no declared property holds them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eventkg.graphstore.model import CLOMO_RELATIONS
from eventkg.ingest.checks import Keys, missing_parts
from eventkg.ingest.errors import RowError
from eventkg.ingest.nodes import edge_row, node_row
from eventkg.ingest.pipeline import (
    EdgeRows,
    NodeRows,
    Parsed,
    Reject,
    Row,
    Source,
    json_list_items,
    resolve_files,
)

SOURCE = "clomo"
FILE_NAME = re.compile(r"^(?P<prompt>zero|few|cot)_(?P<split>\w+)$", re.IGNORECASE)
# a subset file of the release: o(nly) / x (excluded) + na|sa|s|w, then the split
SUBSET = re.compile(r"^[ox](?:na|sa|s|w)_(?P<split>train|dev|test)$", re.IGNORECASE)
PROMPTS = ("zero", "few", "cot")
SPLITS = ("train", "dev", "test")
TEXT_FIELDS = ("instruction", "input", "output", "id_string")  # strings when present
INFO_FIELDS = ("P", "O", "Om", "Q")
STATEMENT = re.compile(r"Statement\s*(\d+)\s*:\s*")
PREMISE = {1: re.compile(r"^\s*Premise\s*1\s*:\s*", re.IGNORECASE), 2: re.compile(r"^\s*Premise\s*2\s*:\s*", re.IGNORECASE)}


def _accept(p: Path) -> bool:
    return p.suffix == ".json" and bool(FILE_NAME.match(p.stem))


def find_files(path: str | Path, partial: bool = False) -> tuple[list[Path], list[str]]:
    """The CLoMo files at ``path`` (main files first, then subset files) and the parts a folder
    lacks (an error unless ``partial``)."""
    files = resolve_files(path, "CLoMo", _accept, "zero_<split>.json, few_<split>.json, cot_<split>.json")
    files.sort(key=lambda f: (subset_of(f) is not None, str(f)))
    main = [f for f in files if subset_of(f) is None]
    splits = [s for s in SPLITS if any(split_of(f) == s for f in main)]
    splits += sorted({split_of(f) for f in main} - set(SPLITS))
    wanted = list(SPLITS[SPLITS.index(splits[0]):]) if splits and splits[0] in SPLITS else splits
    wanted += [s for s in splits if s not in wanted]
    required = [f"{prompt}_{s}.json" for s in wanted for prompt in PROMPTS]
    hint = f" (its splits {', '.join(wanted)} in each prompt setting {', '.join(PROMPTS)})" if wanted else ""
    return files, missing_parts(path, "CLoMo", required or [f"{p}_test.json" for p in PROMPTS], main,
                                partial=partial, hint=hint)


def split_of(path: Path) -> str:
    """The split an item of ``path`` belongs to: ``zero_test.json``, ``zero_ona_test.json`` -> ``test``."""
    m = FILE_NAME.match(path.stem)
    if not m:
        return path.stem
    sub = SUBSET.match(m["split"])
    return (sub["split"] if sub else m["split"]).lower()


def subset_of(path: Path) -> str | None:
    """The release subset a file holds (``ona_test`` for ``type_picked/zero_ona_test.json``), or None."""
    m = FILE_NAME.match(path.stem)
    sub = SUBSET.match(m["split"]) if m else None
    return sub[0].lower() if sub else None


def statements(text: str) -> list[tuple[int, str]]:
    """``"Statement1: a. Statement2: b."`` -> ``[(1, "a."), (2, "b.")]``; unmarked text is statement 1."""
    parts = STATEMENT.split(text)
    if len(parts) == 1:
        return [(1, text.strip())] if text.strip() else []
    out = []
    for i in range(1, len(parts) - 1, 2):
        body = parts[i + 1].strip()
        if body:
            out.append((int(parts[i]), body))
    return out


def _checked_item(obj: Any) -> tuple[dict[str, Any], str]:
    """(input_info, relation name) of an item whose fields are there and of their types."""
    if not isinstance(obj, dict):
        raise RowError("expected a JSON object")
    missing = [f for f in ("id_string", "qtype", "output", "input_info") if obj.get(f) in (None, "")]
    info = obj.get("input_info")
    if isinstance(info, dict):
        missing += [f"input_info.{f}" for f in ("P", "O", "Om") if info.get(f) in (None, "")]
    elif "input_info" not in missing:
        raise RowError(f"'input_info' is not an object (got {type(info).__name__})")
    if missing:
        raise RowError(f"missing field {', '.join(repr(m) for m in missing)}")
    wrong = [(f, obj[f]) for f in TEXT_FIELDS if obj.get(f) is not None and not isinstance(obj[f], str)]
    wrong += [(f"input_info.{f}", info[f]) for f in INFO_FIELDS if info.get(f) is not None and not isinstance(info[f], str)]
    if wrong:
        raise RowError(", ".join(f"{f!r} must be a string (got {type(v).__name__})" for f, v in wrong))
    blank = [f"input_info.{f}" for f in ("P", "O", "Om") if not info[f].strip()]
    if blank:
        raise RowError(f"missing field {', '.join(repr(m) for m in blank)}")
    qtype = obj["qtype"]
    if not isinstance(qtype, int) or isinstance(qtype, bool) or not 0 <= qtype < len(CLOMO_RELATIONS):
        raise RowError(f"unknown relation qtype {qtype!r}; expected 0..3 ({', '.join(CLOMO_RELATIONS)})")
    return info, CLOMO_RELATIONS[qtype]


def item_content(obj: dict[str, Any], split: str) -> tuple[Any, ...]:
    """What one item stores: the same in the three prompt settings and in the subset files."""
    info = obj["input_info"]
    return (split, obj["qtype"], info["P"], info["O"], info["Om"], obj["output"])


def item_row(obj: Any, split: str, subsets: tuple[str, ...] = ()) -> Row:
    """One CLoMo item -> typed rows; raises RowError with the reason when invalid.

    ``subsets`` (``ona_test``...) are recorded on both arguments as ``sources`` ``clomo:<subset>``.
    """
    info, rel = _checked_item(obj)
    ids = obj["id_string"]
    sources = [SOURCE, *(f"{SOURCE}:{s}" for s in sorted(subsets))]
    nodes: NodeRows = []
    edges: EdgeRows = []
    args = {}
    for state, text in ((1, info["P"]), (2, obj["output"])):
        parts = statements(text)
        if not parts:
            raise RowError(f"{'input_info.P' if state == 1 else 'output'} holds no statements")
        arg = node_row("Argument", f"{SOURCE}|{split}|{ids}|{state}", SOURCE,
                       text=text.strip(), qtype=rel, id_string=ids, split=split, state=state)
        arg["sources"] = sources
        nodes.append(("Argument", arg))
        args[state] = arg["id"]
        for order, body in parts:
            st = node_row("Statement", body, SOURCE, text=body)
            nodes.append(("Statement", st))
            edges.append(("PART_OF", edge_row(st["id"], arg["id"], SOURCE, order=order)))
    for state, key in ((1, "O"), (2, "Om")):
        text = PREMISE[state].sub("", info[key]).strip()
        if not text:
            raise RowError(f"input_info.{key} holds no premise text")
        prem = node_row("Premise", text, SOURCE, text=text)
        nodes.append(("Premise", prem))
        edges.append((rel, edge_row(prem["id"], args[state], SOURCE, state=state)))
    edges.append(("COUNTERFACTUAL_OF", edge_row(args[2], args[1], SOURCE)))
    return Row(nodes, edges)


def _file_items(path: Path) -> Iterator[tuple[str, Any] | Reject]:
    """(place, item) per item of one file; a file that is not a JSON list is one Reject."""
    for got in json_list_items(path, "expected a JSON list of CLoMo items (got a {type})", "empty file: no items"):
        yield got if isinstance(got, Reject) else (f"item {got[0]}", got[1])


def _subset_members(files: list[Path]) -> dict[str, dict[str, tuple[Any, ...]]]:
    """id_string -> {subset: item content} of the subset files' well-formed items, read before the
    items are yielded so that each item's row carries its subsets (bad items are left to the main pass)."""
    out: dict[str, dict[str, tuple[Any, ...]]] = {}
    for path in files:
        subset = subset_of(path)
        if subset is None:
            continue
        for got in _file_items(path):
            if isinstance(got, Reject):
                continue
            try:
                _checked_item(got[1])
            except RowError:
                continue
            out.setdefault(got[1]["id_string"], {})[subset] = item_content(got[1], split_of(path))
    return out


def iter_rows(files: list[Path], keys: Keys | None = None) -> Iterator[Row | Reject]:
    """Every item of every file checked, in file order: one row per ``id_string`` (with the subsets
    it belongs to), an empty row for each identical repeat, a Reject for each bad item."""
    keys = keys if keys is not None else Keys()
    members = _subset_members(files)
    for path in files:
        split = split_of(path)
        for got in _file_items(path):
            if isinstance(got, Reject):
                yield got
                continue
            place, obj = got
            try:
                item_row(obj, split)  # every item checked, wherever it is
                content = item_content(obj, split)
                if keys.check(("id_string", obj["id_string"]), content, str(path), place):
                    keys.repeated += 1
                    yield Row([], [])  # the same item again (another prompt setting, a subset file)
                    continue
                subsets = tuple(s for s, c in members.get(obj["id_string"], {}).items() if c == content)
                yield item_row(obj, split, subsets)
            except RowError as exc:
                yield Reject(str(path), place, str(exc), obj)


def parse(source: Source, partial: bool = False) -> Parsed:
    """The CLoMo files at ``source.path`` (file or folder) and their rows; with ``partial`` a folder
    lacking parts is read all the same and ``left_out`` names them."""
    files, left_out = find_files(source.path, partial)
    return Parsed(files, iter_rows(files, source.keys), left_out)


