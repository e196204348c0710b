"""Release styles against the releases themselves (../shared/data/releases, unmodified).

The reference side of every comparison here imports the release's own modules the ordinary
way (``src/data.py``'s ``EV2Dataset`` built from the release's files, ``src/metrics.py``'s
``EV2Metrics``, CLoMo's ``SES/ses.py``), never eventkg's loader; eventkg's side reads the
questions back from a store the release's data was ingested into. Skips when ../shared is absent.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from eventkg import ingest_source
from eventkg.graphstore import open_store
from eventkg.tasks.errors import ReleaseError, TaskError
from eventkg.tasks.ev2.tasks import release_row
from eventkg.tasks.metrics import alignment_item, cluster_lookup
from eventkg.tasks.registry import get_task
from eventkg.tasks.runner import evaluate_models
from tests.support.chat_stub import ChatStub
from tests.support.releases import EV2, import_release, needs_releases


@pytest.fixture(scope="module")
def ev2_data():
    return import_release(EV2 / "src" / "data.py", "ref_ev2_data", EV2 / "src")


@pytest.fixture(scope="module")
def ev2_metrics():
    return import_release(EV2 / "src" / "metrics.py", "ref_ev2_metrics", EV2 / "src")


def _dataset(ev2_data, task_name: str, file: str):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return ev2_data.EV2Dataset(task_name, str(EV2 / "data" / file), k=0, cluster_dir=str(EV2 / "data" / "clustering.json"))


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def _rows(file: str) -> list[dict]:
    return [json.loads(line) for line in (EV2 / "data" / file).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def ev2_store(tmp_path_factory):
    if not (EV2 / "data").is_dir():
        pytest.skip(f"the EV² release is not at {EV2}")
    store = open_store(str(tmp_path_factory.mktemp("ev2rel") / "store.lbug"))
    ingest_source(store, "ev2", EV2 / "data")
    yield store
    store.close()


# --- EV² CEC / CRR: every prompt the release builds --------------------------------------------

PLAIN = {"S_CEC": "S_CEC.jsonl", "I_CEC": "I_CEC.jsonl", "S_CRR": "S_CRR.jsonl", "I_CRR": "I_CRR.jsonl"}
DIRECT = {"I_CEC_DIRECT": "I_CEC.jsonl", "I_CRR_DIRECT": "I_CRR.jsonl"}


@needs_releases
@pytest.mark.parametrize(("style", "methods"), [("release", PLAIN), ("release-direct", DIRECT)])
def test_every_ev2_prompt_is_the_release_s_byte_for_byte(ev2_store, ev2_data, style, methods) -> None:
    reference: dict[tuple[str, str], str] = {}
    for method, file in methods.items():
        ds = _dataset(ev2_data, method, file)
        rows = _rows(file)
        assert len(ds.src_list) == len(rows)
        for row, srcs in zip(rows, ds.src_list, strict=True):
            reference[(method, _key(row))] = srcs[0]
    same = {m: 0 for m in methods}
    total = 0
    for name in ("ev2-cec", "ev2-crr"):
        task = get_task(name, style=style, release=str(EV2))
        for item in task.build(ev2_store):
            method = task.release_method(item)
            got = task.render(item)
            assert got == reference[(method, _key(release_row(item.doc)))], (method, item.meta["qid"])
            same[method] += 1
            total += 1
    expected = {m: len(_rows(f)) for m, f in methods.items()}
    assert same == expected  # e.g. release: S_CEC 486, I_CEC 491, S_CRR 730, I_CRR 735 = 2,442
    assert total == sum(expected.values())


@needs_releases
def test_direct_prompts_keep_the_release_s_prefix_replacement(ev2_store) -> None:
    """The release's id-to-type str.replace rewrites ids sharing a prefix (event3 inside event31)."""
    task = get_task("ev2-cec", style="release-direct", release=str(EV2))
    items = task.build(ev2_store)
    assert {it.meta["level"] for it in items} == {"instance"}
    glued = 0
    for it in items:
        types_ = set((it.doc.get("event_type") or {}).values())
        text = task.render(it)
        glued += any(f"{t}{d}" in text for t in types_ for d in "0123456789")
        assert not text.endswith("\n")
    assert glued > 0  # names such as receive_diploma3: what the release sends


@needs_releases
def test_release_direct_refuses_the_schema_level() -> None:
    with pytest.raises(TaskError, match="instance level only"):
        get_task("ev2-cec", style="release-direct", level="schema", release=str(EV2))


# --- EV² alignment: CEC_rq3 / CRR_rq3, the draw pinned by --seed --------------------------------


@needs_releases
def test_alignment_prompts_are_the_release_s_with_the_draw_pinned(ev2_store, ev2_data) -> None:
    refs = {"CEC": _dataset(ev2_data, "CEC_rq3", "I_CEC.jsonl"), "CRR": _dataset(ev2_data, "CRR_rq3", "I_CRR.jsonl")}
    task = get_task("ev2-alignment", style="release", release=str(EV2), seed=7)
    items = task.build(ev2_store)
    assert len(items) == 491 + 735
    state = random.getstate()
    try:
        for it in items:
            random.seed(task.release_draw(it))  # the release draws with the global random module
            method = getattr(refs[it.meta["task"]], f"{it.meta['task']}_rq3")
            expected = next(method(release_row(it.doc)))[0][0]
            assert task.render(it) == expected, it.meta["qid"]
    finally:
        random.setstate(state)
    other = get_task("ev2-alignment", style="release", release=str(EV2), seed=8)
    other.build(ev2_store)
    moved = sum(task.render(it) != other.render(it) for it in items[:50])
    assert moved >= 45  # another --seed, another candidate draw
    assert len(task.cluster_names) == 1563  # clustering.json's names as written


# --- readings: item by item against the release's scorers --------------------------------------

REPLIES = ["I cannot tell.", "B", "B.", "C, because", "(D) it is", "The answer is C", "the correct option should be: B",
           "A or B", "AB", "b", "", "Neither.", "I. e. none", "There is no obvious causal relationship", "D. and C."]


@needs_releases
@pytest.mark.parametrize("name", ["ev2-cec", "ev2-crr"])
def test_release_readings_equal_metrics_rq12_item_by_item(ev2_store, ev2_data, ev2_metrics, name) -> None:
    scorer = ev2_metrics.EV2Metrics("S_CEC")
    task = get_task(name, style="release", release=str(EV2))
    items = task.build(ev2_store, n=40, seed=3)
    refs = {}
    for method, file in PLAIN.items():
        ds = _dataset(ev2_data, method, file)
        for row, stm, lab in zip(_rows(file), ds.stm_list, ds.labs, strict=True):
            refs[(method, _key(row))] = (stm[0], lab)
    checked = 0
    for it in items:
        choice, lab = refs[(task.release_method(it), _key(release_row(it.doc)))]
        for reply in REPLIES:
            with contextlib.redirect_stdout(io.StringIO()):
                released = scorer.metrics_rq12([reply], [choice], [lab])["acc"] == 100.0
            ours = task.is_correct(it, task.parse(it, reply))
            assert bool(ours) == released, (it.meta["qid"], reply)
            checked += 1
    assert checked == 40 * len(REPLIES)
    plain = get_task(name, style="plain")
    abstain = items[0]
    assert plain.parse(abstain, "I cannot tell.") is None  # eventkg's own reading keeps abstentions apart
    assert task.parse(abstain, "I cannot tell.") == abstain.choices[0]  # the release reads A


def _alignment_replies(gold: dict) -> list[str]:
    ids = list(gold["event_type"])
    types_ = dict(gold["event_type"])
    rels = gold["event_relation"]
    return [
        json.dumps({"event_type": types_, "event_relation": rels}),
        "```json\n" + json.dumps({"event_type": types_, "event_relation": [["helping ", "Causes", "Misappropriate"]]}) + "\n```",
        json.dumps({"event_type": {ids[0]: "Misappropriate"}, "event_relation": [["helping", "Causes", "misappropriate"]]}),
        json.dumps({"event_type": types_, "event_relation": [*rels, ["interest ", "Before", " overcome trouble"]]}),
        json.dumps({"event_type": {}, "event_relation": [["exercise ", "After", "using "], ["a", "b"]]}),
        "A, B",
        "not json at all",
        json.dumps({"event_type": [], "event_relation": []}),
    ]


@needs_releases
def test_alignment_item_scores_equal_metrics_rq3(ev2_store, ev2_metrics) -> None:
    scorer = ev2_metrics.EV2Metrics("CEC_rq3", cluster_dir=str(EV2 / "data" / "clustering.json"))
    task = get_task("ev2-alignment", style="release", release=str(EV2))
    items = task.build(ev2_store, n=30, seed=1)
    released = cluster_lookup(task.cluster_names, "released")
    store_map = cluster_lookup(_stored_names(ev2_store), "released")  # the names as the store keeps them
    differs = 0
    for it in items:
        for reply in _alignment_replies(it.gold):
            ref = scorer.metrics_rq3([reply], [None], [json.dumps(it.gold)])
            parsed = task.parse(it, reply)
            acc, f1 = alignment_item(parsed, it.gold, released) if parsed else (0.0, 0.0)
            assert (acc, f1) == pytest.approx((ref["acc"], ref["F1"])), (it.meta["qid"], reply)
            if parsed and alignment_item(parsed, it.gold, store_map)[1] != pytest.approx(ref["F1"]):
                differs += 1
    assert differs > 0  # the store's normalised names would have scored some of these items otherwise


def _stored_names(store) -> dict[str, int]:
    from eventkg.tasks.ev2.alignment import clustering_names

    return clustering_names(store, None)


# --- errors -------------------------------------------------------------------------------------


def test_release_style_without_a_checkout_says_what_to_pass(embedded_store, tmp_path: Path) -> None:
    """EV²: no --release and a store recording no checkout fails when the items are built; CLoMo at once."""
    for name, style in (("ev2-cec", "release"), ("ev2-crr", "release-direct"), ("ev2-alignment", "release")):
        with pytest.raises(ReleaseError) as info:
            get_task(name, style=style).build(embedded_store)
        msg = str(info.value)
        assert "--release PATH" in msg and "records no folder" in msg and "\n" not in msg
    with pytest.raises(ReleaseError) as info:
        get_task("clomo", style="release-cot")
    assert "--release PATH" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ReleaseError, match=r"no src/data\.py"):
        get_task("ev2-cec", style="release", release=str(tmp_path))


# --- EV²: the checkout the questions were ingested from ------------------------------------------


def _layout(tmp_path: Path, checkout: bool) -> Path:
    """A folder of symbolic links to the release: ``data`` beside ``src`` (a checkout), or the five
    data files alone (a plain folder). Returns the folder to ingest."""
    if checkout:
        (tmp_path / "checkout").mkdir()
        for part in ("data", "src"):
            (tmp_path / "checkout" / part).symlink_to(EV2 / part, target_is_directory=True)
        return tmp_path / "checkout" / "data"
    (tmp_path / "plain").mkdir()
    for f in (EV2 / "data").iterdir():
        (tmp_path / "plain" / f.name).symlink_to(f)
    return tmp_path / "plain"


@needs_releases
def test_release_style_finds_the_checkout_the_questions_came_from(ev2_data, tmp_path: Path) -> None:
    """No --release: the checkout the EV² data was ingested from builds the prompts; from a plain
    folder, the one-line error, before anything is written; ingested again from the checkout, the
    store then uses it (the last folder counts)."""
    folder = _layout(tmp_path, checkout=True)
    with open_store(str(tmp_path / "checkout.lbug")) as store:
        ingest_source(store, "ev2", folder)
        assert store.ingest_origin("ev2") == str(folder)  # the link as given, not the folder it points to
        reference = {method: {_key(row): srcs[0] for row, srcs in zip(_rows(file), _dataset(ev2_data, method, file).src_list,
                                                                       strict=True)}
                     for method, file in PLAIN.items()}
        task = get_task("ev2-crr", style="release")
        items = task.build(store)
        assert task.ev2_release.root == folder.parent
        assert len(items) == 730 + 735
        for it in items:
            assert task.render(it) == reference[task.release_method(it)][_key(release_row(it.doc))], it.meta["qid"]
        done = evaluate_models(store, "ev2-cec", ["random"], out_dir=tmp_path / "run", n=25,
                               task_options={"style": "release"})
        sent = [json.loads(line)["prompt"] for line in (done.runs["random"].out_dir / "predictions.jsonl").open()]
        assert len(sent) == 25 and all(p in {*reference["S_CEC"].values(), *reference["I_CEC"].values()} for p in sent)
    plain = _layout(tmp_path, checkout=False)
    with open_store(str(tmp_path / "plain.lbug")) as store:
        ingest_source(store, "ev2", plain)
        with pytest.raises(ReleaseError) as info:
            evaluate_models(store, "ev2-alignment", ["random"], out_dir=tmp_path / "refused", task_options={"style": "release"})
        msg = str(info.value)
        assert f"ingested from {plain}, which is not the data/ folder of a checkout" in msg and "--release PATH" in msg
        assert "\n" not in msg and not (tmp_path / "refused").exists()
        task = get_task("ev2-cec", style="release", release=str(EV2))  # --release still serves such a store
        assert len(task.build(store)) == 486 + 491
        ingest_source(store, "ev2", folder)  # the same files again, from the checkout
        task = get_task("ev2-cec", style="release")
        assert len(task.build(store)) == 486 + 491 and task.ev2_release.root == folder.parent


def test_template_placeholders_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "cot.txt"
    good.write_text("Instances:\n$instances\n\n### Context:\n$context\nQuestion:$question\n\nChoices:\n$choices\n"
                    "Please think as this way: ... costs $$5", encoding="utf-8")
    task = get_task("ev2-cec", template=str(good))
    assert task.style == "template"
    bad = tmp_path / "bad.txt"
    bad.write_text("line one\nAnswer with $letter\n", encoding="utf-8")
    with pytest.raises(TaskError, match=r"bad\.txt:2: unknown placeholder \$letter"):
        get_task("ev2-cec", template=str(bad))
    with pytest.raises(TaskError, match="drop --style"):
        get_task("ev2-cec", style="plain", template=str(good))


def test_template_renders_as_written(embedded_store, samples_dir: Path, tmp_path: Path) -> None:
    ingest_source(embedded_store, "ev2", samples_dir / "ev2")
    path = tmp_path / "t.txt"
    path.write_text("Q: $question\n$choices\nLetters: $letters; cost $$1 ", encoding="utf-8")
    task = get_task("ev2-crr", template=str(path))
    item = task.build(embedded_store, n=1)[0]
    text = task.render(item)
    assert text.startswith(f"Q: {item.doc['question']}\nA. ") and text.endswith("Letters: A, B, C; cost $1 ")


# --- a run against a local OpenAI-compatible stub ------------------------------------------------


@needs_releases
def test_release_run_against_a_stub_shows_the_paper_s_table_4(ev2_store, ev2_data, tmp_path: Path) -> None:
    stub = ChatStub(lambda body: "The answer is B.")
    try:
        done = evaluate_models(ev2_store, "ev2-cec", [f"openai:stub@{stub.url}"], out_dir=tmp_path / "run", n=30,
                               task_options={"style": "release", "release": str(EV2)}, http={"use_cache": False})
    finally:
        stub.close()
    reference = {srcs[0] for method in ("S_CEC", "I_CEC") for srcs in _dataset(ev2_data, method, PLAIN[method]).src_list}
    assert len(stub.bodies) == 30
    for body in stub.bodies:  # the release's API call: one user message, 512 tokens, no temperature
        assert body["messages"][0]["role"] == "user" and len(body["messages"]) == 1
        assert body["messages"][0]["content"] in reference
        assert body["max_tokens"] == 512 and "temperature" not in body
    metrics = json.loads((next(iter(done.runs.values())).out_dir / "metrics.json").read_text())
    assert metrics["_run"]["generation"] == {"max_tokens": 512, "temperature": "not sent (server default)", "system": "none"}
    report = done.report.read_text()
    assert "Table 4 (average performances)" in report and "| GPT4 | 54.22 | 55.84 | 65.34 | 61.84 | 55.48 | 63.80 |" in report
    assert "**this run: openai:stub** (30 items)" in report
    assert "temperature not sent (server default)" in report


@needs_releases
def test_generation_options_reach_the_server_and_the_record(ev2_store, tmp_path: Path) -> None:
    stub = ChatStub(lambda body: "A.")
    try:
        done = evaluate_models(ev2_store, "ev2-crr", [f"openai:stub@{stub.url}"], out_dir=tmp_path / "run", n=3,
                        task_options={"style": "plain", "max_tokens": 2048, "temperature": 0.3, "system": "Be brief."},
                        http={"use_cache": False})
    finally:
        stub.close()
    for body in stub.bodies:
        assert body["max_tokens"] == 2048 and body["temperature"] == 0.3
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    metrics = json.loads((next(iter(done.runs.values())).out_dir / "metrics.json").read_text())
    assert metrics["_run"]["generation"] == {"max_tokens": 2048, "temperature": 0.3, "system": "Be brief."}
