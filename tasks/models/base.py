"""The one interface every model adapter implements.

A task hands the model :class:`Request` objects (the rendered prompt plus the structured
item, so offline baselines can answer without reading prose) and gets :class:`Completion`
objects back. Prompt-reading models (HTTP, transformers) only look at ``prompt``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from eventkg.tasks.base import Item, Task


@dataclass
class Request:
    """One prompt to answer; ``item``/``task`` let baselines answer from structure."""

    prompt: str
    item: Item | None = None
    task: Task | None = None
    system: str | None = None
    max_tokens: int | None = 512  # None: not sent
    temperature: float | None = 0.0  # None: not sent (the server's default)
    purpose: str = "answer"  # "answer" or a judge question name (CLoMo SES)


@dataclass
class Completion:
    """A model's answer: raw text, an optional confidence score, whether it came from cache."""

    text: str
    score: float | None = None
    cached: bool = False


class Model(ABC):
    """A model adapter (``openai:...``, ``hf:...`` or an offline baseline)."""

    name: str = "model"

    def fit(self, task: Task, train_items: Sequence[Item]) -> None:  # noqa: B027 - optional hook
        """Learn what a baseline needs from training items (label prior); most models ignore it."""

    @abstractmethod
    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        """Answer every request, in order."""

    def describe(self) -> dict[str, Any]:
        """What to record about this model in metrics.json."""
        return {"name": self.name}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (thread pools, GPU memory)."""
