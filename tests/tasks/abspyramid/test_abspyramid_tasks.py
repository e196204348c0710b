"""AbsPyramid detection and generation end to end over real stores, scored by the released rules.
Expected values come from the sample files read here or from hand arithmetic in the comments, never
from the scorer under test; scripted models stand in for an LLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore.model import ENTAIL_RELATIONS
from eventkg.tasks.abspyramid.tasks import grouped_splits, load_tuples
from eventkg.tasks.models import load_model
from eventkg.tasks.registry import get_task
from eventkg.tasks.report import write_report
from eventkg.tasks.runner import evaluate
from tests.support.scripted import Scripted


def test_grouped_splits_keep_groups_together() -> None:
    keys = [f"head{i // 3}\x1finst{i // 3}" for i in range(300)]  # 100 groups of 3 tuples
    assign = grouped_splits(keys)
    counts = {s: sum(1 for v in assign.values() if v == s) for s in ("train", "valid", "test")}
    assert counts == {"train": 80, "valid": 10, "test": 10}


def _rows(root: Path, task: str, split: str) -> list[dict]:
    """The rows of ``task``'s per-relation files of ``split``, read straight from the sample."""
    out = []
    for kind in ("noun", "verb", "event"):
        f = root / task / f"{kind}_dataset" / f"{split}.json"
        out += [dict(json.loads(ln), type=kind) for ln in f.read_text().splitlines() if ln.strip()]
    return out


def test_abspyramid_items_are_the_release_rows(store, samples_dir: Path) -> None:
    root = samples_dir / "abspyramid"
    det = get_task("abspyramid-det").build(store, split="test")
    want = {(r["type"], r["event"].replace("<", "").replace(">", ""), r["concept"], r["label"])
            for r in _rows(root, "Detection", "test")}
    assert {(it.doc["relation"], it.doc["head"], it.doc["concept"], it.gold) for it in det} == {
        (t, " ".join(h.split()), c, lab) for t, h, c, lab in want}
    gen = get_task("abspyramid-gen").build(store, split="test")
    rows = _rows(root, "Generation", "test")
    assert len(gen) == len(rows)  # one item per Generation row
    assert sorted(tuple(it.gold) for it in gen) == sorted((r["concept"],) for r in rows)


def test_detection_and_generation_splits_kept_apart_and_sep_split(embedded_store, tmp_path: Path) -> None:
    root = tmp_path / "abs"
    for task, split, rows in (
        ("Detection", "test", [{"event": "PersonX eat <apple>", "concept": "fruit", "label": 1},
                               {"event": "PersonX eat <apple>", "concept": "stone", "label": 0}]),
        ("Generation", "train", [{"event": "PersonX eat <apple>", "concept": "fruit[SEP]food [SEP] snack"}]),
    ):
        folder = root / task / "noun_dataset"
        folder.mkdir(parents=True)
        (folder / f"{split}.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    ingest_source(embedded_store, "abspyramid", root)
    edges = {e["concept"]: e for t in ENTAIL_RELATIONS for e in embedded_store.iter_edges(t)}
    assert set(edges) == {"fruit", "stone", "food", "snack"}  # [SEP] split into three concepts
    assert (edges["fruit"]["det_split"], edges["fruit"]["gen_split"]) == ("test", "train")  # both kept
    assert edges["stone"].get("gen_split") is None and edges["food"].get("det_split") is None
    assert {r["concept"] for r in load_tuples(embedded_store)} == set(edges)
    gen = get_task("abspyramid-gen")
    items = gen.build(embedded_store, split="train")
    assert [it.gold for it in items] == [["food", "fruit", "snack"]]  # the row's references, no Detection tuple
    assert gen.build(embedded_store, split="test") == []
    det = get_task("abspyramid-det").build(embedded_store, split="test")
    assert sorted((it.doc["concept"], it.gold) for it in det) == [("fruit", 1), ("stone", 0)]
    assert get_task("abspyramid-det").build(embedded_store, split="train") == []


def test_generation_scored_on_the_first_line_as_written(embedded_store, tmp_path: Path) -> None:
    folder = tmp_path / "abs" / "Generation" / "noun_dataset"
    folder.mkdir(parents=True)
    rows = [{"event": "PersonX drink <milk>", "concept": "dairy drink[SEP]a beverage"},
            {"event": "PersonX see <elephant>", "concept": "an animal[SEP]large animal"}]
    (folder / "test.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    ingest_source(embedded_store, "abspyramid", tmp_path / "abs")
    replies = {"milk": "\nA dairy drink\nbecause milk is one", "elephant": "a large animal"}
    model = Scripted("scripted", lambda r: replies[r.item.doc["instance"]])
    run = evaluate(embedded_store, get_task("abspyramid-gen"), model, split="test", out_dir=tmp_path / "out" / "scripted")
    assert sorted(r.parsed for r in run.records) == ["A dairy drink", "a large animal"]  # not lower-cased
    # 13a keeps case: "A" matches no reference token -> unigrams (dairy, drink) + (large, animal) = 4/6,
    # bigrams (dairy drink) + (large animal) = 2/4; ROUGE lower-cases: ROUGE-2 recall 1.0 per item
    m = run.metrics
    assert m["bleu1"] == pytest.approx(4 / 6) and m["bleu2"] == pytest.approx(0.5) and m["rouge2"] == pytest.approx(1.0)
    assert m["exact_match"] == 0.0 and m["n"] == 2
    line = json.loads((tmp_path / "out" / "scripted" / "predictions.jsonl").read_text().splitlines()[0])
    assert {"id", "response", "parsed", "gold"} <= set(line)
    report = write_report(tmp_path / "out").read_text()
    assert "Scoring rules" in report and "not BLEU of max order" in report


def test_abspyramid_detection_and_generation(store, tmp_path: Path) -> None:
    tuples = load_tuples(store)
    assert {t["relation"] for t in tuples} == {"noun", "verb", "event"}
    det = get_task("abspyramid-det")
    oracle = evaluate(store, det, load_model("kg-oracle", store=store), split="test", out_dir=tmp_path / "det" / "kg-oracle")
    # kg-oracle cannot see a tuple's own label: abstentions ("I cannot tell.") are parsed as
    # nothing and scored wrong, so acc is the share of its Yes/No replies that match the label
    said = [(r.response, r.gold) for r in oracle.records]
    right = sum((resp == "Yes" and g == 1) or (resp == "No" and g == 0) for resp, g in said)
    assert oracle.metrics["acc"] == pytest.approx(right / len(said))
    assert oracle.metrics["unparseable"] == sum(resp == "I cannot tell." for resp, _ in said)
    maj = evaluate(store, det, load_model("majority"), split="test", out_dir=tmp_path / "det" / "majority")
    assert maj.metrics["auc"] == 0.5  # a constant answer ranks nothing
    assert "<" in oracle.records[0].prompt and "Yes or No" in oracle.records[0].prompt
    gen = get_task("abspyramid-gen")
    items = gen.build(store, split="test")
    assert items and all(isinstance(it.gold, list) and it.gold for it in items)
    g_oracle = evaluate(store, gen, load_model("kg-oracle", store=store), split="test", out_dir=tmp_path / "gen" / "kg-oracle")
    g_embed = evaluate(store, gen, load_model("embed-sim"), split="test", out_dir=tmp_path / "gen" / "embed-sim")
    # its concept comes from tuples of other head events with the same instance, or it abstains
    valid = [(t["head_id"], t["instance"].lower(), t["concept"].lower()) for t in tuples if t["label"] == 1]
    by_id = {it.id: it for it in items}
    for r in g_oracle.records:
        head, inst = by_id[r.id].doc["head_id"], by_id[r.id].doc["instance"].lower()
        assert r.response == "" or (r.response, inst) in {(c, i) for h, i, c in valid if h != head}
    assert g_embed.metrics["n"] == g_oracle.metrics["n"]
    report = write_report(tmp_path / "gen").read_text()
    assert "noun-entail" in report and "meteor" in report
