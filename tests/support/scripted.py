"""A scripted model: its reply to each request is a function of the request, a stand-in for an LLM."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eventkg.tasks.models.base import Completion, Model, Request


class Scripted(Model):
    """A model whose reply to each request is ``reply(request)``: a stand-in for an LLM."""

    def __init__(self, name: str, reply: Callable[[Request], str]) -> None:
        self.name, self.reply, self.requests = name, reply, []

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        self.requests.extend(requests)
        return [Completion(self.reply(r)) for r in requests]
