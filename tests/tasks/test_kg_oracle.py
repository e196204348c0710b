"""kg-oracle cannot see the answer, and majority never fits on the scored items.

Expectations are worked by hand on tiny EV² files (the arithmetic is in the comments), and
the gold-switch checks ingest a switched copy into a fresh store and compare predictions.
"""

from __future__ import annotations

import json
from pathlib import Path

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.tasks.base import Item
from eventkg.tasks.models import load_model
from eventkg.tasks.models.base import Request
from eventkg.tasks.models.kg_oracle import NO_ANSWER
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate

CAUSAL = ["Causes", "IsResult", "Vague"]

# Schema file: one CEC question (study -Causes-> pass_exam, background learn -Before-> study)
# and one CRR question whose *context* states sleep -Before-> dream (another question's
# background, visible to everyone).
S_CEC = [{"id": "1-0", "e0": "study", "rel": "Causes", "e1": "pass_exam", "negative_chosen": ["sleep", "swim", "eat"],
          "context": "", "context_tpl": [["learn", "Before", "study"]], "question": "Which is result of \"study\"?",
          "choices": ["sleep", "pass_exam", "swim", "eat"]}]
S_CRR = [{"id": "2-0", "e0": "dream", "rel": "After", "e1": "sleep", "context": "",
          "context_tpl": [["sleep", "Before", "dream"]], "question": "?", "choices": ["Before", "After", "Vague"]}]
# Instance file: the same pair told as a story (types study / pass_exam), event_relation as
# the release writes it (context triple + answer triple).
I_CEC = [{"id": "1-0", "e0": "event1", "rel": "Causes", "e1": "event2", "negative_chosen": ["event3", "event4", "event5"],
          "context": "", "context_tpl": [["event6", "Before", "event1"]], "question": "Which is result of \"event1\"?",
          "choices": ["event3", "event4", "event2", "event5"],
          "instances": {"event1": "Ann studied all week.", "event2": "Ann passed the exam.", "event3": "Ann slept.",
                        "event4": "Ann swam.", "event5": "Ann ate lunch.", "event6": "Ann learnt the basics."},
          "event_type": {"event1": "study", "event2": "pass_exam", "event3": "sleep", "event4": "swim",
                         "event5": "eat", "event6": "learn"},
          "event_relation": [["learn", "Before", "study"], ["study", "Causes", "pass_exam"]]}]
I_CRR = [{"id": "1-0", "e0": "event1", "rel": "Causes", "e1": "event2", "context": "",
          "context_tpl": [["event6", "Before", "event1"]], "question": "?", "choices": CAUSAL,
          "instances": {"event1": "Bob studied hard.", "event2": "Bob passed the exam.", "event6": "Bob learnt."},
          "event_type": {"event1": "study", "event2": "pass_exam", "event6": "learn"},
          "event_relation": [["learn", "Before", "study"], ["study", "Causes", "pass_exam"]]}]


def _write(folder: Path, files: dict[str, list[dict]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def _switch(rows: list[dict]) -> list[dict]:
    """Gold moved to a wrong choice: CEC e1 <- first negative; CRR rel <- next family member."""
    out = []
    for r in rows:
        r = json.loads(json.dumps(r))
        if r["choices"][-1] == "Vague":
            r["rel"] = r["choices"][(r["choices"].index(r["rel"]) + 1) % 3]
        else:
            r["e1"], r["negative_chosen"] = r["negative_chosen"][0], [r["e1"], *r["negative_chosen"][1:]]
        out.append(r)
    return out


def _key(it: Item, full: bool) -> str:
    """A question's identity that switching its gold does not change (CRR ids repeat per family)."""
    d = it.doc
    return f"{d['id']}|{d['e0']}|{d['question']}|{d['choices']}" if full else d["id"]


def _answers(store, task: str, level: str, full: bool) -> dict[str, str]:
    """question -> the choice kg-oracle picks (or the abstention), read back through the task's parser."""
    t = get_task(task, level=level)
    items = t.build(store)
    replies = load_model("kg-oracle", store=store).generate([Request(prompt="", item=it, task=t) for it in items])
    out = {_key(it, full): (t.parse(it, c.text) or c.text) for it, c in zip(items, replies, strict=True)}
    assert len(out) == len(items)
    return out


def _predictions(folder: Path, db: Path, full: bool = False) -> dict[tuple[str, str], dict[str, str]]:
    with open_store(str(db)) as store:
        ingest_source(store, "ev2", folder, partial=True)  # the question files only: no clustering.json
        return {(task, level): _answers(store, task, level, full)
                for task in ("ev2-cec", "ev2-crr") for level in ("schema", "instance")}


FILES = {"S_CEC": S_CEC, "S_CRR": S_CRR, "I_CEC": I_CEC, "I_CRR": I_CRR}


def test_hand_worked_answers(tmp_path: Path) -> None:
    pred = _predictions(_write(tmp_path / "ev2", FILES), tmp_path / "a.lbug")
    # Schema CEC 1-0: the schema view holds only background: learn-Before->study (both files'
    # contexts), sleep-Before->dream (S_CRR's context). I_CEC's event_relation triple
    # study-Causes->pass_exam touches a candidate type and is dropped; no gold is read.
    # From study: one edge, After to learn; no choice is reached by Causes -> abstain.
    assert pred[("ev2-cec", "schema")] == {"1-0": NO_ANSWER}
    # Schema CRR 2-0 (dream ? sleep, temporal): background sleep-Before->dream read backwards
    # gives dream After sleep; Before is not induced -> exactly one member -> After.
    assert pred[("ev2-crr", "schema")] == {"2-0": "After"}
    # Instance questions: the schema questions' gold joins the view, so study-Causes->pass_exam
    # is known; e0 event1 has type study, choices' types sleep/swim/pass_exam/eat -> event2.
    assert pred[("ev2-cec", "instance")] == {"1-0": "event2"}
    assert pred[("ev2-crr", "instance")] == {"1-0": "Causes"}


def test_switched_instance_gold_moves_no_prediction(tmp_path: Path) -> None:
    before = _predictions(_write(tmp_path / "a", FILES), tmp_path / "a.lbug")
    switched = dict(FILES, I_CEC=_switch(I_CEC), I_CRR=_switch(I_CRR))
    assert switched["I_CEC"][0]["e1"] == "event3" and switched["I_CRR"][0]["rel"] == "IsResult"
    after = _predictions(_write(tmp_path / "b", switched), tmp_path / "b.lbug")
    assert after == before
    # so the oracle now disagrees with the (wrong) gold: it never read it
    assert after[("ev2-cec", "instance")]["1-0"] != switched["I_CEC"][0]["e1"]


def test_switched_schema_gold_moves_no_schema_prediction(tmp_path: Path) -> None:
    before = _predictions(_write(tmp_path / "a", FILES), tmp_path / "a.lbug")
    switched = dict(FILES, S_CEC=_switch(S_CEC), S_CRR=_switch(S_CRR))
    after = _predictions(_write(tmp_path / "b", switched), tmp_path / "b.lbug")
    for key in (("ev2-cec", "schema"), ("ev2-crr", "schema")):
        assert after[key] == before[key], key
    # the instance questions' knowledge changed (S_CEC now says study-Causes->sleep): the
    # instance CEC answer follows the schema graph, as EV²'s thesis has it -> event3 (sleep)
    assert after[("ev2-cec", "instance")] == {"1-0": "event3"}


def test_bundled_samples_switch_keeps_every_prediction(tmp_path: Path, samples_dir: Path) -> None:
    files = {p.stem: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
             for p in (samples_dir / "ev2").glob("*.jsonl")}
    before = _predictions(_write(tmp_path / "a", files), tmp_path / "a.lbug", full=True)
    switched = dict(files, I_CEC=_switch(files["I_CEC"]), I_CRR=_switch(files["I_CRR"]))
    after = _predictions(_write(tmp_path / "b", switched), tmp_path / "b.lbug", full=True)
    assert after == before
    assert sum(len(v) for v in before.values()) >= 20


def test_generated_questions_abstain(tmp_path: Path) -> None:
    from eventkg.queries.oracle import EV2Oracle

    with open_store(str(tmp_path / "g.lbug")) as store:
        ingest_source(store, "ev2", _write(tmp_path / "ev2", FILES), partial=True)
        oracle = EV2Oracle(store)
        row = dict(I_CEC[0])
        assert oracle.answer(row) == "event2"
        assert oracle.answer(row, origin="generated") is None


# --- majority ----------------------------------------------------------------------------------


class _Choice:
    name, kind = "t", "choice"

    def answer_text(self, item: Item, i: int) -> str:
        return "ABC"[i]

    def baseline_response(self, model, req):  # noqa: ANN001
        return None


def _crr_item(i: int, level: str, gold: str) -> Item:
    return Item(id=f"{level}{i}", gold=gold, choices=list(CAUSAL), meta={"level": level})


def test_majority_fits_on_another_level_never_on_scored_items() -> None:
    model = load_model("majority")
    task = _Choice()
    schema = [_crr_item(i, "schema", g) for i, g in enumerate(["Vague", "Vague", "Causes"])]
    instance = [_crr_item(i, "instance", g) for i, g in enumerate(["IsResult", "IsResult", "IsResult", "Causes"])]
    # the runner's fallback: fitted on the scored items themselves (both levels)
    model.fit(task, schema + instance)
    reply = {it.id: c.text for it, c in zip(schema + instance, model.generate(
        [Request(prompt="", item=it, task=task) for it in schema + instance]), strict=True)}
    # schema items see only instance counts: IsResult 3, Causes 1 -> IsResult = B
    assert {reply[it.id] for it in schema} == {"B"}
    # instance items see only schema counts: Vague 2, Causes 1 -> Vague = C
    assert {reply[it.id] for it in instance} == {"C"}
    # fitted on one level and scored on it: nothing else to learn from -> abstain, and say why
    model.fit(task, instance)
    texts = [c.text for c in model.generate([Request(prompt="", item=it, task=task) for it in instance])]
    assert texts == [NO_ANSWER] * 4
    assert any("abstained" in n for n in model.describe()["notes"])


def test_majority_on_the_release_shape_fits_the_other_level(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "m.lbug")) as store:
        ingest_source(store, "ev2", _write(tmp_path / "ev2", FILES), partial=True)
        run = evaluate(store, get_task("ev2-crr", level="instance"), load_model("majority"))
        # scored: the instance CRR item; fitted: the schema CRR item only (gold After)
        assert run.metrics["_run"]["model"]["fitted_groups"] == ["schema"]
        assert run.metrics["_run"]["model"]["fitted_items"] == 1


# --- AbsPyramid ---------------------------------------------------------------------------------


def test_abspyramid_detection_reads_other_tuples_then_wordnet(tmp_path: Path) -> None:
    noun = tmp_path / "abs" / "Detection" / "noun_dataset"
    event = tmp_path / "abs" / "Detection" / "event_dataset"
    noun.mkdir(parents=True)
    event.mkdir(parents=True)
    rows = [
        {"event": "PersonX drinks <milk> every morning", "concept": "beverage", "label": 1},
        {"event": "PersonX buys <milk> at the shop", "concept": "beverage", "label": 1},
        {"event": "PersonX spills <milk> on the floor", "concept": "beverage", "label": 0},
        {"event": "PersonX pours <milk> into a glass", "concept": "beverage", "label": 1},
        {"event": "PersonX reads <a book>", "concept": "novel", "label": 1},
        {"event": "PersonX brews <coffee>", "concept": "beverage", "label": 0},
    ]
    (noun / "test.json").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ev = {"event": "<PersonX wins the match>", "concept": "success", "label": 1}
    (event / "test.json").write_text(json.dumps(ev) + "\n", encoding="utf-8")
    with open_store(str(tmp_path / "a.lbug")) as store:
        ingest_source(store, "abspyramid", tmp_path / "abs")
        task = get_task("abspyramid-det")
        items = {it.doc["head"]: it for it in task.build(store)}
        model = load_model("kg-oracle", store=store)

        def reply(head: str) -> str:
            return model.generate([Request(prompt="", item=items[head], task=task)])[0].text

        # spills: the other three milk/beverage tuples say 1, 1, 1 -> Yes (its own 0 unseen)
        assert reply("PersonX spills milk on the floor") == "Yes"
        # drinks: others say 1 (buys), 0 (spills), 1 (pours) -> 2 of 3 -> Yes
        assert reply("PersonX drinks milk every morning") == "Yes"
        # an event tuple with no other tuple: no evidence at all -> abstain
        assert reply("PersonX wins the match") == NO_ANSWER
        from eventkg.tasks.models.kg_oracle import _wordnet

        if _wordnet() is not None:
            # no other tuple: WordNet. coffee.n.01 -> ... -> beverage.n.01 is a hypernym -> Yes
            # (its own label 0 unseen); no sense of "book" has a sense of "novel" above it -> No
            assert reply("PersonX brews coffee") == "Yes"
            assert reply("PersonX reads a book") == "No"


def test_clomo_oracle_abstains() -> None:
    class _Clomo:
        name = "clomo"

    item = Item(id="x", gold="the reference argument", doc={"argument": "a"})
    model = load_model("kg-oracle", store=object())  # type: ignore[arg-type]
    assert model.generate([Request(prompt="", item=item, task=_Clomo())])[0].text == ""


def test_alignment_types_come_from_other_questions_only(tmp_path: Path) -> None:
    # a second instance question tells "Ann passed the exam." as pass_exam and "Ann swam." as
    # swim, with a context swim -Before-> pass_exam; I_CEC's own event_type is never read
    other = {"id": "9-0", "e0": "event7", "rel": "Causes", "e1": "event8", "context": "",
             "context_tpl": [["event9", "Before", "event7"]], "question": "?", "choices": CAUSAL,
             "instances": {"event7": "Ann swam.", "event8": "Ann felt tired.", "event9": "Ann passed the exam."},
             "event_type": {"event7": "swim", "event8": "get_tired", "event9": "pass_exam"},
             "event_relation": [["pass_exam", "Before", "swim"], ["swim", "Causes", "get_tired"]]}
    files = dict(FILES, I_CRR=[*I_CRR, other])
    with open_store(str(tmp_path / "al.lbug")) as store:
        ingest_source(store, "ev2", _write(tmp_path / "ev2", files), partial=True)
        task = get_task("ev2-alignment")
        item = next(it for it in task.build(store) if it.doc["instances"].get("event1") == "Ann studied all week.")
        reply = json.loads(load_model("kg-oracle", store=store).generate([Request(prompt="", item=item, task=task)])[0].text)
    # event2 "Ann passed the exam." -> pass_exam (question 9-0), event4 "Ann swam." -> swim;
    # the other four texts appear in no other question -> no type for them
    assert reply["event_type"] == {"event2": "pass_exam", "event4": "swim"}
    # between pass_exam and swim, 9-0's background states pass_exam Before swim
    assert reply["event_relation"] == [["pass_exam", "Before", "swim"]]
