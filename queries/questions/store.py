"""Writing generated questions: EV² JSON lines, or ``Question`` nodes in the store."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from eventkg.graphstore.base import Batch, GraphStore, WriteResult
from eventkg.graphstore.model import node_id
from eventkg.queries.questions.rows import SOURCE, GeneratedQuestion

SAVE_CHUNK = 5_000  # questions per batch sent to the store's bulk session


def write_jsonl(rows: Sequence[Mapping[str, Any]], path: str) -> None:
    """Rows as EV² JSON lines (UTF-8, one object per line)."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _question_node(q: GeneratedQuestion, seed: int) -> dict[str, Any]:
    row = q.row
    family = "|".join(row["choices"]) if q.task == "CRR" else ""
    return {
        "id": node_id("Question", f"{SOURCE}|{seed}|{q.task}|{q.level}|{row['id']}|{row['rel']}|{family}"),
        "sources": [SOURCE], "qid": row["id"], "task": q.task, "level": q.level, "rel": row["rel"],
        "origin": "generated", "question": row["question"], "e0": row["e0"], "e1": row["e1"],
        "choices": list(row["choices"]), "answer": q.answer, "context": row["context"],
        "context_tpl": json.dumps(row["context_tpl"], ensure_ascii=False),
        "payload": json.dumps(row, ensure_ascii=False),
    }


def store_questions(store: GraphStore, questions: Sequence[GeneratedQuestion], seed: int) -> WriteResult:
    """Write questions as ``Question`` nodes (origin generated) linked like the EV² loader links them.

    One bulk session (each table its own COPY, checkpointed: in one transaction the engine held
    memory per Event node for each rel table to Event), fed ``SAVE_CHUNK`` questions at a time,
    so the rows built here stay small however many questions there are."""
    total = WriteResult()
    with store.bulk_load():
        for start in range(0, len(questions), SAVE_CHUNK):
            total.add(store.write_batch(_question_batch(questions[start:start + SAVE_CHUNK], seed)))
    return total


def _question_batch(questions: Sequence[GeneratedQuestion], seed: int) -> Batch:
    """The Question nodes of ``questions`` and their ASKS, HAS_CHOICE and HAS_CONTEXT edges."""
    batch = Batch()
    for q in questions:
        row = q.row
        node = _question_node(q, seed)
        qnode = node["id"]
        batch.add_node("Question", node)
        batch.add_edge("ASKS", {"src": qnode, "dst": q.names[row["e0"]], "sources": [SOURCE], "role": "e0"})
        batch.add_edge("ASKS", {"src": qnode, "dst": q.names[row["e1"]], "sources": [SOURCE], "role": "e1"})
        if q.task == "CEC":
            for i, c in enumerate(row["choices"]):
                batch.add_edge("HAS_CHOICE", {"src": qnode, "dst": q.names[c], "sources": [SOURCE], "order": i,
                                              "correct": int(c == row["e1"])})
        for i, eid in enumerate(q.context_ids):
            batch.add_edge("HAS_CONTEXT", {"src": qnode, "dst": eid, "sources": [SOURCE], "order": i})
    return batch
