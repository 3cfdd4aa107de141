"""A real HTTP server on 127.0.0.1 that replays scripted responses, for driving the real provider SDKs.

Each request takes the next scripted :class:`Reply` (status, headers, body chunks streamed with chunked
transfer encoding, optional delay between chunks, optional abrupt disconnect) and is recorded, so a test can
assert exactly what the SDK sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


@dataclass
class Reply:
    """One scripted HTTP response."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    chunk_delay: float = 0.0
    disconnect_after: int | None = None
    """Close the socket after this many chunks, without ending the body (a dropped connection)."""

    @classmethod
    def json(cls, status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
        all_headers = {"content-type": "application/json", **(headers or {})}
        return cls(status, [json.dumps(body).encode()], all_headers)


@dataclass
class Recorded:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class ScriptedServer:
    """``with ScriptedServer() as server: server.add(Reply(...)); ... server.url``."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *replies: Reply) -> ScriptedServer:
        with self._lock:
            self.replies.extend(replies)
        return self

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self.replies:
                return self.replies.popleft()
        return Reply.json(500, {"error": {"message": "scripted server: no reply queued"}})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = server._next(Recorded("POST", self.path, headers, body))
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for index, chunk in enumerate(reply.chunks):
                    if reply.disconnect_after is not None and index >= reply.disconnect_after:
                        self.close_connection = True
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            do_GET = do_POST

        return Handler
