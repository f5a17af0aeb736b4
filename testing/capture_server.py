"""A loopback HTTP server that records every request's headers and answers 401 (Basic).

Stands for "another host" (bind it to 127.0.0.2): git asks its credential helper after a 401
with `WWW-Authenticate: Basic`, so whether the token reached this host shows in `seen`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CaptureServer:
    """`with CaptureServer("127.0.0.2") as cap:` ... `cap.url`, `cap.authorizations()`."""

    def __init__(self, address: str = "127.0.0.2") -> None:
        self.seen: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                outer.seen.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="capture"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer((address, 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def authorizations(self) -> list[str]:
        return [h["authorization"] for h in self.seen if "authorization" in h]

    def __enter__(self) -> CaptureServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
