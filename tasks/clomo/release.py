"""CLoMo's release adapter: its prompt files and its SES judge queries, from the user's checkout.

CLoMo's ``data/{zero,few,cot}_<split>.json`` hold its prompts as ``instruction`` (sent as the
system message) and ``input`` (the user message), and its ``SES/ses.py`` (with
``SES/eval_prompts.py``), executed by :func:`eventkg.tasks.release.load_module`, writes the three
judge queries.
"""

from __future__ import annotations

import json
import types
from functools import cache
from pathlib import Path
from typing import Any

from eventkg.tasks.errors import ReleaseError
from eventkg.tasks.release import load_module, require

CLOMO_WHAT = "the CLoMo release (github.com/Eleanor-H/CLOMO)"
CLOMO_PARTS = ("data", "SES/ses.py", "SES/eval_prompts.py")


class ClomoRelease:
    """CLoMo's prompt files and SES judge queries from a checkout."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = require(root, CLOMO_WHAT, CLOMO_PARTS)
        self.ses = _clomo_ses(self.root / "SES")

    def rows(self, setup: str, split: str | None) -> dict[str, dict[str, Any]]:
        """``id_string`` -> row of ``data/<setup>_<split>.json`` (``type_picked/`` for a subset such
        as ``ona_test``); the test split unless told."""
        name = f"{setup}_{split or 'test'}.json"
        path = next((p for p in (self.root / "data" / name, self.root / "data" / "type_picked" / name) if p.is_file()), None)
        if path is None:
            raise ReleaseError(f"{self.root}/data: no {name} (the release has {setup}_test.json, {setup}_dev.json, "
                               f"{setup}_train.json and type_picked/{setup}_o*_test.json)")
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReleaseError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        return {r["id_string"]: r for r in rows}

    def judge_queries(self, input_info: dict[str, Any], prediction: str, qtype: int) -> dict[str, list[dict[str, str]]]:
        """The three chat queries ``SES/ses.py``'s ``eval_func_decomposed`` sends for one item
        (``c_p1_a`` = its query_11, ``c_p2_ap`` = query_12_22, ``c_p2_a`` = query_21), recorded from
        the release's own function, and the generation arguments it sends them with."""
        sent: list[tuple[list[dict[str, str]], dict[str, Any]]] = []

        class Recorder:
            def chat_query(self, query, retry=True, generate_args=None):  # noqa: ANN001, ARG002
                sent.append((query, dict(generate_args or {})))
                return {"choices": [{"message": {"content": "yes"}}]}

        self.ses.eval_func_decomposed(input_info=input_info, pred_info={"pred_str": prediction}, qtype=qtype,
                                      id="eventkg", api_master=Recorder())
        names = ("c_p1_a", "c_p2_ap", "c_p2_a")
        if len(sent) != len(names):
            raise ReleaseError(f"{self.root}/SES/ses.py: eval_func_decomposed sent {len(sent)} queries, not 3")
        self.judge_args = sent[0][1]
        return {n: q for n, (q, _args) in zip(names, sent, strict=True)}


@cache
def _clomo_ses(folder: Path) -> types.ModuleType:
    prompts = load_module(folder / "eval_prompts.py", "clomo_release_eval_prompts")
    return load_module(folder / "ses.py", "clomo_release_ses", siblings={"eval_prompts": prompts})
