"""``NodeRow`` and ``EdgeRow`` say what the model declares: one key per declared property, of its column's type.

The rows are typed twice (the model's column types for the engines, the typed dicts for readers), so
this keeps the two in step: a property added to ``NODE_TYPES`` or ``REL_TYPES`` without its key in
the row type (or the other way round) fails here. Whether stored rows come back in that shape is
the contract suite's ``test_rows_read_back_have_the_row_types_shape``.
"""

from __future__ import annotations

import types
import typing

import pytest

from eventkg.graphstore import EdgeRow, NodeRow
from eventkg.graphstore.model import DOUBLE, INT64, NODE_TYPES, REL_TYPES, STRING, STRING_LIST

#: the Python value of each column type, as both engines give it back
PYTHON_TYPE = {STRING: str, DOUBLE: float, INT64: int, STRING_LIST: list[str]}


def _declared(kinds: dict) -> dict[str, set[str]]:
    """Property -> the column types the labels (or types) declaring it give it."""
    out: dict[str, set[str]] = {}
    for kind in kinds.values():
        for prop, column in kind.properties.items():
            out.setdefault(prop, set()).add(column)
    return out


@pytest.mark.parametrize(("row_type", "kinds", "keys"), [(NodeRow, NODE_TYPES, {"id"}), (EdgeRow, REL_TYPES, {"src", "dst"})])
def test_a_row_type_has_the_keys_and_one_key_per_declared_property(row_type, kinds, keys):
    hints = typing.get_type_hints(row_type)
    declared = _declared(kinds)
    assert set(hints) == keys | {"sources"} | set(declared)
    assert row_type.__required_keys__ == keys  # every property is optional: a row holds only its own label's
    for key in keys:
        assert hints[key] is str
    assert hints["sources"] == list[str]
    for prop, columns in declared.items():
        assert len(columns) == 1, f"{prop} is declared with two column types {sorted(columns)}"
        assert hints[prop] == PYTHON_TYPE[columns.pop()] | None, prop  # None: not held / not overwritten


def test_the_row_types_are_plain_dicts():
    """A row is a dict the loaders build as a literal: the types add no class and no check at run time."""
    row = NodeRow(id="a", sources=["t"], text="x")
    assert type(row) is dict and row == {"id": "a", "sources": ["t"], "text": "x"}
    assert isinstance(typing.get_type_hints(EdgeRow)["weight"], types.UnionType)
