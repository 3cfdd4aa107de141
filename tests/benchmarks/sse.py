"""The local server the streaming benchmarks (P4, P4b, P4g, P4r) read from: one prepared SSE body, every time;
and our side of them, one ``complete()``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def sse_server(body: bytes, prefix: str = "/v1") -> Iterator[str]:
    """A 127.0.0.1 server answering every POST with ``body`` as an event stream, written at once (chunked
    transfer encoding), so that what is timed is the client's work; yields its URL with ``prefix``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = httpd.server_address[:2]
        yield f"http://{host}:{port}{prefix}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def complete_text(model: Any, key: str) -> str:
    """Ours: ``pi_notebook.ai.complete()`` of one prompt on ``model`` (in its own ``asyncio.run`` on a fresh
    thread, as the baselines), the reply's text; the reply must end normally."""
    from pi_notebook.ai import Context, UserMessage, complete

    from .harness import run_async

    async def go() -> str:
        context = Context(messages=[UserMessage(content="Count.", timestamp=1)])
        message = await complete(model, context, api_key=key)
        assert message.stop_reason == "stop", message.error_message
        return message.content[0].text

    return run_async(go)
