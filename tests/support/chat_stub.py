"""An OpenAI-compatible chat server on 127.0.0.1 for tests: a real HTTP server, not a mock.

It records each request (path, Authorization header, JSON body) and answers from a script of
actions (``"400"``, ``"429"``, ``"500"``: that status; ``"slow"``: 1.5 s late; ``"ok"``) or, when
the script is spent, with ``reply(body)``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatStub:
    """A local ``/v1/chat/completions`` server; ``url`` is its base URL, ``close()`` stops it."""

    def __init__(self, reply: Callable[[dict[str, Any]], str] = lambda body: "The answer is A.") -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[str] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                    action = outer.script.pop(0) if outer.script else "ok"
                try:
                    if action in ("400", "429", "500"):
                        self._send(int(action), {"error": "try again"})
                        return
                    if action == "slow":
                        time.sleep(1.5)
                    self._send(200, {"choices": [{"message": {"role": "assistant", "content": reply(body)}}]})
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies received, in order."""
        return [r["body"] for r in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
