"""Any OpenAI-compatible chat API (OpenAI, vLLM, Ollama, llama.cpp server, TGI...).

Plain ``urllib`` (no SDK): POST ``{base}/chat/completions`` with a bearer key from
``OPENAI_API_KEY`` or ``EVENTKG_API_KEY``; exponential backoff on 429/5xx and timeouts (a busy
server recovers); a connection the host turns away at once (refused: nothing listens; no
route) is retried once, quickly, then reported, since backing off for ~20 s would not bring
a server up. A thread pool bounds concurrency, and the first error cancels the requests not
yet sent; every answer is cached on disk by request hash, so a rerun sends nothing.
"""

from __future__ import annotations

import errno
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from eventkg import settings
from eventkg.tasks.errors import ModelSpecError, ModelUnreachable
from eventkg.tasks.models.base import Completion, Model, Request
from eventkg.tasks.models.cache import ResponseCache, request_key

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
REFUSED_RETRY_WAIT = 0.25  # seconds before the one retry of a refused connection
_UNREACHABLE = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH}


def refused(reason: object) -> bool:
    """Whether a connection error means nobody answers at that address (not a slow or busy server)."""
    return isinstance(reason, ConnectionRefusedError) or (isinstance(reason, OSError) and reason.errno in _UNREACHABLE)


def chat_url(base_url: str) -> str:
    """``http://host:8000`` -> ``http://host:8000/v1/chat/completions``; a base with a path is kept."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelSpecError(f"model base URL {base_url!r}: expected http(s)://host[:port][/v1]")
    path = parts.path.rstrip("/")
    if not path:
        path = "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}/chat/completions"


class OpenAICompatModel(Model):
    """``openai:MODEL@BASE_URL`` — chat completions over HTTP, cached and retried."""

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        api_key: str | None = None,
        temperature: float | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        concurrency: int = 4,
        cache: ResponseCache | None = None,
        use_cache: bool = True,
    ) -> None:
        if not model:
            raise ModelSpecError("openai model spec needs a model name: openai:MODEL@BASE_URL")
        self.model = model
        self.base_url = base_url
        self.url = chat_url(base_url)
        self.api_key = api_key if api_key is not None else settings.api_key()
        self.temperature = temperature
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = max(1, concurrency)
        self.cache = cache if cache is not None else ResponseCache()
        self.use_cache = use_cache
        self.name = f"openai:{model}"
        self.sent = 0  # HTTP requests actually sent (cache hits send none)
        self._failed: ModelUnreachable | None = None  # the error that ends the current generate()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "base_url": self.base_url,
                "temperature": self.temperature if self.temperature is not None else "as the run's generation settings"}

    def _body(self, req: Request) -> dict[str, Any]:
        messages = ([{"role": "system", "content": req.system}] if req.system else []) + [
            {"role": "user", "content": req.prompt}
        ]
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        temperature = self.temperature if self.temperature is not None else req.temperature
        if temperature is not None:  # None: the server's default, as the releases send it
            body["temperature"] = temperature
        if req.max_tokens is not None:
            body["max_tokens"] = req.max_tokens
        return body

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        if not requests:
            return []
        self._failed = None
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            return list(pool.map(self._one, requests))
        finally:  # after an error, requests not yet sent are dropped, not tried one by one
            pool.shutdown(wait=True, cancel_futures=True)

    def _one(self, req: Request) -> Completion:
        body = self._body(req)
        key = request_key({"url": self.url, **body})
        if self.use_cache and (hit := self.cache.get(key)) is not None:
            return Completion(text=hit["text"], cached=True)
        if self._failed is not None:  # another request already found the server failing
            raise self._failed
        try:
            text = self._post(body)
        except ModelUnreachable as exc:
            self._failed = exc
            raise
        if self.use_cache:
            self.cache.put(key, {"text": text, "model": self.model, "url": self.url})
        return Completion(text=text)

    def _post(self, body: dict[str, Any]) -> str:
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last, tries = "", 0
        for attempt in range(self.max_retries + 1):
            tries = attempt + 1
            wait = min(self.max_backoff, self.backoff * (2**attempt))
            turned_away = False
            try:
                self.sent += 1
                request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    payload = json.loads(resp.read().decode("utf-8"))
                return _content(payload, self.url)
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} {exc.reason}"
                if exc.code not in RETRY_STATUS:
                    detail = exc.read()[:200].decode("utf-8", "replace").replace("\n", " ")
                    raise ModelUnreachable(f"model server {self.url}: {last}: {detail}") from None
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                if retry_after and retry_after.replace(".", "", 1).isdigit():
                    wait = min(self.max_backoff, float(retry_after))
            except TimeoutError:
                last = f"no answer within {self.timeout:g}s"
            except urllib.error.URLError as exc:
                reason = exc.reason
                last = f"no answer within {self.timeout:g}s" if isinstance(reason, TimeoutError | socket.timeout) else f"cannot connect ({reason})"
                turned_away = refused(reason)
            except (ConnectionError, json.JSONDecodeError) as exc:
                last = f"bad response ({exc})"
                turned_away = refused(exc)
            if turned_away:
                if attempt >= 1:  # the quick retry was turned away too: the server is not there
                    break
                wait = min(wait, REFUSED_RETRY_WAIT)
            if attempt < self.max_retries:
                time.sleep(wait)
        raise ModelUnreachable(f"model server {self.url}: {last} after {tries} attempt{'s' if tries != 1 else ''}")


def _content(payload: dict[str, Any], url: str) -> str:
    try:
        return payload["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise ModelUnreachable(f"model server {url}: response has no choices[0].message.content") from None
