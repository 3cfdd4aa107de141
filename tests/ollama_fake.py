"""A real HTTP server on 127.0.0.1 answering Ollama's ``GET /api/tags`` (the fields a real server sends,
abridged), for the tests of the default model and of ``%agent_models``."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def fake_ollama(tags: list[str]) -> Iterator[tuple[ThreadingHTTPServer, list[str]]]:
    """A running server listing ``tags`` (changes to the list show at once) and the paths it was asked for."""
    hits: list[str] = []

    class Tags(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            if self.path != "/api/tags":
                self.send_error(404)
                return
            models = [{"name": n, "model": n, "size": 1, "digest": "0" * 64, "details": {"family": "x"}} for n in tags]
            body = json.dumps({"models": models}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Tags)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server, hits
    finally:
        server.shutdown()
        server.server_close()
