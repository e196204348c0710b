"""What a task is: documents from the store, a prompt per document, a parser and a scorer.

Tasks stay apart from models (lm-evaluation-harness style): a task never calls a model;
the runner renders requests, asks the model, parses and scores.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eventkg.tasks.errors import TaskError

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.graphstore.base import GraphStore
    from eventkg.tasks.models.base import Request


@dataclass
class Item:
    """One benchmark document: its gold answer, choices (if any) and grouping keys."""

    id: str
    gold: Any
    choices: list[str] | None = None
    aliases: list[list[str]] | None = None  # extra spellings per choice, for text matching
    meta: dict[str, Any] = field(default_factory=dict)  # level, rel, family, split...
    doc: dict[str, Any] = field(default_factory=dict)  # the raw fields the prompt needs


#: what ``--max-tokens`` / ``--temperature`` take to send nothing (the server's default)
NOT_SENT = ("none", "default")


def _unset(value: Any) -> Any:
    return None if isinstance(value, str) and value.lower() in NOT_SENT else value


@dataclass
class Generation:
    """How replies are asked for: token limit and temperature (``None``: not sent), system message."""

    max_tokens: int | None
    temperature: float | None
    system: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The settings as metrics.json and the report record them."""
        unsent = "not sent (server default)"
        return {"max_tokens": unsent if self.max_tokens is None else self.max_tokens,
                "temperature": unsent if self.temperature is None else self.temperature,
                "system": self.system if self.system is not None else "none"}


@dataclass
class Record:
    """One scored prediction, as written to predictions.jsonl."""

    id: str
    prompt: str
    response: str
    parsed: Any
    gold: Any
    correct: bool | None
    meta: dict[str, Any]
    score: float | None = None
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "prompt": self.prompt, "response": self.response, "parsed": self.parsed,
               "gold": self.gold, "correct": self.correct, "meta": self.meta}
        if self.score is not None:
            out["score"] = self.score
        if self.extra:
            out.update(self.extra)
        return out


class Task(ABC):
    """A registered benchmark. Subclasses fill in the hooks below."""

    name: str = ""
    description: str = ""
    kind: str = "choice"  # choice | yesno | generate | json | clomo
    styles: tuple[str, ...] = ("plain",)
    #: generation defaults of the style (``--max-tokens``, ``--temperature``, ``--system`` override them);
    #: ``None`` sends nothing, so the server's own default holds
    max_tokens: int | None = 512
    temperature: float | None = 0.0
    system: str | None = None

    def __init__(self, style: str = "plain", level: str | None = None, **options: Any) -> None:
        if style not in self.styles:
            raise TaskError(f"task {self.name}: unknown prompt style {style!r}; choose from {', '.join(self.styles)}")
        self.style = style
        self.level = level
        self.options = options

    def generation(self) -> Generation:
        """The generation settings of this run: the style's defaults, then the user's options."""
        o = self.options
        return Generation(
            max_tokens=_unset(o["max_tokens"]) if "max_tokens" in o else self.max_tokens,
            temperature=_unset(o["temperature"]) if "temperature" in o else self.temperature,
            system=o["system"] if "system" in o else self.system,
        )

    def request(self, prompt: str, item: Item, **fields: Any) -> Request:
        """A model request for ``prompt`` under this run's generation settings."""
        from eventkg.tasks.models.base import Request

        g = self.generation()
        values: dict[str, Any] = {"max_tokens": g.max_tokens, "temperature": g.temperature, "system": g.system, **fields}
        return Request(prompt=prompt, item=item, task=self, **values)

    @abstractmethod
    def build(self, store: GraphStore, split: str | None = None, n: int | None = None, seed: int = 0) -> list[Item]:
        """The documents of this task read from the store (``n`` first after a seeded shuffle)."""

    def train_items(self, store: GraphStore) -> list[Item]:
        """Items a baseline may learn a prior from: the train split, else the evaluated items."""
        items = self.build(store, split="train")
        return items

    @abstractmethod
    def render(self, item: Item) -> str:
        """The prompt text for one item in this task's style."""

    @abstractmethod
    def parse(self, item: Item, response: str) -> Any:
        """The answer the response commits to, or ``None`` when it commits to none."""

    def is_correct(self, item: Item, parsed: Any) -> bool | None:
        return None if parsed is None else parsed == item.gold

    @abstractmethod
    def score(self, records: Sequence[Record]) -> dict[str, Any]:
        """Metrics over all records (the metrics.json body)."""

    def table_rows(self, metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
        """Tables for the report: ``{table title: {column: value}}``."""
        return {"overall": {k: v for k, v in metrics.items() if isinstance(v, int | float)}}

    # -- hooks for offline baselines -----------------------------------------------------
    def oracle(self, store: GraphStore, item: Item) -> str | None:
        """The answer the graph itself gives (``kg-oracle``); ``None`` when it has none."""
        raise TaskError(f"task {self.name}: kg-oracle is not defined")

    def embed_view(self, item: Item) -> tuple[str, list[str]]:
        """(query text, candidate texts) for ``embed-sim``; the answer is the nearest candidate."""
        raise TaskError(f"task {self.name}: embed-sim is not defined")

    def baseline_response(self, model: Any, request: Any) -> Any:
        """A task-specific answer for an offline baseline (a Completion), or None for the default."""
        return None

    def answer_text(self, item: Item, choice_index: int) -> str:
        """How a baseline writes 'I pick choice i' so the task's own parser reads it back."""
        return "ABCDEFGHIJ"[choice_index]


def letters(n: int) -> str:
    return "ABCDEFGHIJ"[:n]


def sample(items: list[Item], n: int | None, seed: int) -> list[Item]:
    """A seeded subset (order kept stable by id first, so the same seed gives the same items)."""
    import random

    items = sorted(items, key=lambda it: it.id)
    if n is None or n >= len(items):
        return items
    rng = random.Random(seed)
    return sorted(rng.sample(items, n), key=lambda it: it.id)
