"""Property tests (Hypothesis) of bad input: real-format rows of the bundled samples, mutated.

Whatever is done to one row (a field given a value of another JSON type, a field removed, a
stray byte), the loader yields, for that row, a Reject naming its file and line or a Row whose
every property has the type the data model declares, never an exception; the other rows read
as they did before."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from eventkg.graphstore.model import DOUBLE, INT64, NODE_TYPES, REL_TYPES, STRING, STRING_LIST  # noqa: E402
from eventkg.ingest import clomo, eeckg, ev2  # noqa: E402
from eventkg.ingest.checks import Keys  # noqa: E402
from eventkg.ingest.pipeline import Reject, Row  # noqa: E402
from tests.support.bad_days import SAMPLES  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
OK_TYPES = {STRING: (str,), DOUBLE: (float, int), INT64: (int,)}


def well_typed(row: Row) -> None:
    """Every property of every node and edge of ``row`` has its declared type."""
    declared = {**{n.label: n.properties for n in NODE_TYPES.values()},
                **{r.name: r.properties for r in REL_TYPES.values()}}
    for name, props in [*row.nodes, *row.edges]:
        for key, value in props.items():
            kind = declared[name].get(key)
            if kind is None or value is None:
                continue
            if kind == STRING_LIST:
                assert isinstance(value, list) and all(isinstance(v, str) for v in value), (name, key, value)
            else:
                assert isinstance(value, OK_TYPES[kind]) and not isinstance(value, bool), (name, key, value)


def items_by_line(items) -> dict:
    """Line -> what the loader made of it (Reject reason, or the Row's nodes and edges)."""
    return {it.line if isinstance(it, Reject) else i: it for i, it in enumerate(items)}


def ev2_items(name: str, lines: list[str]) -> list:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / name
        path.write_text("".join(lines))
        return list(ev2.iter_rows([path], keys=Keys()))


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["S_CEC.jsonl", "S_CRR.jsonl", "I_CEC.jsonl", "I_CRR.jsonl"]))
def test_ev2_row_with_a_field_of_any_type(data, name):
    lines = (SAMPLES / "ev2" / name).read_text().splitlines(keepends=True)
    n = data.draw(st.integers(1, len(lines)), label="line")
    row = json.loads(lines[n - 1])
    field = data.draw(st.sampled_from(sorted(row)), label="field")
    if data.draw(st.booleans(), label="remove"):
        del row[field]
    else:
        row[field] = data.draw(JSON_VALUES, label="value")
    mutated = [*lines[: n - 1], json.dumps(row) + "\n", *lines[n:]]
    got = ev2_items(name, mutated)
    assert len(got) == len(lines)  # one item per line, the mutated one included
    for i, item in enumerate(got, 1):
        if isinstance(item, Reject):
            assert i == n and item.line == n and "\n" not in item.reason
        else:
            well_typed(item)


@SETTINGS
@given(data=st.data(), byte=st.integers(0x80, 0xFF) | st.sampled_from([0x00, 0x01, 0x22, 0x5C, 0x7B]))
def test_ev2_stray_byte_touches_its_line_only(data, byte):
    path = SAMPLES / "ev2" / "S_CEC.jsonl"
    raw = path.read_bytes().splitlines(keepends=True)
    n = data.draw(st.integers(1, len(raw)), label="line")
    pos = data.draw(st.integers(0, len(raw[n - 1]) - 1), label="position")
    mutated = [*raw[: n - 1], raw[n - 1][:pos] + bytes([byte]) + raw[n - 1][pos:], *raw[n:]]
    with tempfile.TemporaryDirectory() as d:
        target = Path(d) / "S_CEC.jsonl"
        target.write_bytes(b"".join(mutated))
        got = list(ev2.iter_rows([target], keys=Keys()))
    clean = list(ev2.iter_rows([path], keys=Keys()))
    assert len(got) == len(clean)
    for i, (item, before) in enumerate(zip(got, clean, strict=True), 1):
        if i != n:
            assert item == before
        elif isinstance(item, Reject):
            assert item.line == n and "\n" not in item.reason
        else:
            well_typed(item)


@SETTINGS
@given(data=st.data())
def test_clomo_item_with_a_field_of_any_type(data):
    items = json.loads((SAMPLES / "clomo" / "zero_test.json").read_text())
    i = data.draw(st.integers(0, len(items) - 1), label="item")
    target = items[i]
    where = data.draw(st.sampled_from(["top", "input_info"]), label="where")
    obj = target if where == "top" else target["input_info"]
    field = data.draw(st.sampled_from(sorted(obj)), label="field")
    obj[field] = data.draw(JSON_VALUES, label="value")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "zero_test.json"
        path.write_text(json.dumps(items))
        got = list(clomo.iter_rows([path], Keys()))
    assert len(got) == len(items)
    for k, item in enumerate(got):
        if isinstance(item, Reject):
            assert k == i and item.line == f"item {i}" and "\n" not in item.reason
        else:
            well_typed(item)


@SETTINGS
@given(data=st.data(), name=st.sampled_from(["assertions.csv", "triples.tsv"]))
def test_eeckg_line_cut_or_bytes_inserted(data, name):
    path = SAMPLES / "eeckg" / name
    raw = path.read_bytes().splitlines(keepends=True)
    n = data.draw(st.integers(2, len(raw)), label="line")
    line = raw[n - 1]
    pos = data.draw(st.integers(1, len(line) - 1), label="position")
    insert = data.draw(st.binary(min_size=0, max_size=3).filter(lambda b: b"\n" not in b and b"\r" not in b), label="insert")
    mutated = [*raw[: n - 1], line[:pos] + insert + (b"\n" if not insert else line[pos:]), *raw[n:]]
    with tempfile.TemporaryDirectory() as d:
        target = Path(d) / name
        target.write_bytes(b"".join(mutated))
        got = list(eeckg.iter_rows([target], Keys()))
    for item in got:
        if isinstance(item, Reject):
            assert item.line == n and "\n" not in item.reason
        else:
            well_typed(item)
