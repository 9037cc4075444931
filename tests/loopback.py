"""A real HTTP server on 127.0.0.1 (a free port, its own thread) for tests that play a server:
an OpenAI-compatible endpoint, the Hub, a mirror. One implementation of starting, addressing,
answering with JSON and stopping it."""

from __future__ import annotations

import http.server
import json
import threading


class JSONHandler(http.server.BaseHTTPRequestHandler):
    """A request handler that answers JSON (``send_json``) and logs nothing."""

    def send_json(self, status: int, body, headers: dict | None = None) -> None:
        """Answer ``status`` with ``body``: bytes or text as they are, anything else as JSON."""
        data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def read_json(self):
        """The request's JSON body (None when it has none)."""
        length = int(self.headers.get("Content-Length", 0))
        return json.loads(self.rfile.read(length)) if length else None

    def log_message(self, *args):
        pass


class LoopbackServer:
    """``handler`` (a request handler class or factory) served on 127.0.0.1 until :meth:`close`;
    ``url`` is ``http://127.0.0.1:PORT`` followed by ``path``."""

    def __init__(self, handler, path: str = ""):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
