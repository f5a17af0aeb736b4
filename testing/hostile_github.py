"""Hostile or broken servers on loopback, for what the tool must survive from outside answers.

Each binds 127.0.0.1 (or another 127.0.0.0/8 address), answers with a fixed misbehaviour and
stops by itself: every misbehaviour has a bound of its own (a number of requests, of bytes,
of drips), so a client that does not protect itself makes a test slow and failing, never hung.

- `RewritingFront`: a forwarder in front of the loopback GitHub that rewrites chosen JSON
  answers (an API whose `clone_url` names somewhere else) and passes everything else, git's
  smart HTTP included, through unchanged.
- `Misbehaving`: one behaviour for every request: `retry_after` (429 + Retry-After, N times),
  `drip` (the answer one byte at a time), `endless_body` (a chunked body that goes on),
  `endless_refs` (a git ref advertisement that goes on), `endless_pack` (a git fetch whose
  pack goes on), `compressed_body` (a small gzip/deflate answer, bare or nested, that decodes
  to a large one), `raw_answer` (any bytes as a JSON answer: nested without end, not JSON),
  `dumb_http` (a git host that answers in dumb-HTTP form, every other page a web page),
  `silent` (no answer at all).
- `ProxyTrap`: an HTTP proxy that records what reaches it and forwards nothing.
"""

from __future__ import annotations

import gzip
import http.client
import json
import socketserver
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

Json = Any
Rewrite = Callable[[str, str, Json], Json]  # (method, path, answer) -> answer
Behaviour = Callable[[BaseHTTPRequestHandler, int], None]  # (request, its number from 1)

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class _Server:
    """A ThreadingHTTPServer on `address` run in a daemon thread; `with` starts and stops it."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], address: str = "127.0.0.1") -> None:
        self._server = ThreadingHTTPServer((address, 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _read_body(h: BaseHTTPRequestHandler) -> bytes:
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts = []
        while size := int(h.rfile.readline().split(b";")[0].strip() or b"0", 16):
            parts.append(h.rfile.read(size))
            h.rfile.readline()
        h.rfile.readline()
        return b"".join(parts)
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length else b""


class RewritingFront(_Server):
    """Forwards every request to `backend` (the loopback GitHub's URL); JSON answers have the
    backend's URL replaced by the front's, then pass through `rewrite`. `seen` lists every
    (method, path); past `max_requests` it answers 503 to everything (it stops by itself)."""

    def __init__(self, backend: str, rewrite: Rewrite, *, max_requests: int = 1000) -> None:
        outer = self
        self.backend = urlsplit(backend)
        self.seen: list[tuple[str, str]] = []
        self.max_requests = max_requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                outer._forward(self)

            do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

            def log_message(self, *args: object) -> None:
                return

        super().__init__(Handler)
        self.rewrite = rewrite

    def _forward(self, h: BaseHTTPRequestHandler) -> None:
        body = _read_body(h)
        self.seen.append((h.command, h.path))
        if len(self.seen) > self.max_requests:
            h.send_response(503)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        conn = http.client.HTTPConnection(self.backend.hostname or "", self.backend.port)
        headers = {k: v for k, v in h.headers.items() if k.lower() not in _HOP}
        conn.request(h.command, h.path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        kind = answer.getheader("Content-Type") or ""
        if "json" in kind and data:
            text = data.decode().replace(self.backend.geturl().rstrip("/"), self.url)
            data = json.dumps(self.rewrite(h.command, h.path, json.loads(text))).encode()
        h.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in _HOP:
                h.send_header(key, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        conn.close()


class Misbehaving(_Server):
    """Answers every request with `behaviour(handler, n)` (n counts from 1); `requests` is how
    many came, `finished` how many answers ran to their own end (the client did not hang up)."""

    def __init__(self, behaviour: Behaviour) -> None:
        outer = self
        self.requests = 0
        self.finished = 0
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                body = _read_body(self)
                gzipped = self.headers.get("Content-Encoding", "") == "gzip"
                self.body = gzip.decompress(body) if gzipped else body
                with outer._lock:
                    outer.requests += 1
                    n = outer.requests
                try:
                    behaviour(self, n)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client hung up: what a protected client does
                with outer._lock:
                    outer.finished += 1

            do_POST = do_PATCH = do_GET

            def log_message(self, *args: object) -> None:
                return

        super().__init__(Handler)


def _json_answer(h: BaseHTTPRequestHandler, status: int, body: Json, **headers: str) -> None:
    data = json.dumps(body).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json; charset=utf-8")
    for key, value in headers.items():
        h.send_header(key.replace("_", "-"), value)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def retry_after(seconds: str, *, times: int) -> Behaviour:
    """429 with `Retry-After: <seconds>` to the first `times` requests, then a user."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        if n <= times:
            message = {"message": "API rate limit exceeded", "documentation_url": "https://docs"}
            _json_answer(h, 429, message, Retry_After=seconds)
        else:
            _json_answer(h, 200, {"login": "patient", "id": 1})

    return behave


def drip(every_s: float, *, count: int) -> Behaviour:
    """A valid answer sent one byte each `every_s` seconds, from its status line on, `count`
    bytes at most (then the connection closes, the answer unfinished)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"." * count

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        for byte in head[:count]:
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(every_s)
        h.close_connection = True

    return behave


def endless_body(
    *, total: int, chunk: int = 65536
) -> Callable[[BaseHTTPRequestHandler, int], None]:
    """200 with a chunked JSON body that goes on for `total` bytes, then ends (valid JSON)."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        parts = [b'{"login": "x", "pad": "'] + [b"." * chunk] * (total // chunk) + [b'"}']
        for part in parts:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        h.wfile.write(b"0\r\n\r\n")

    return behave


def _pkt(line: bytes) -> bytes:
    return b"%04x" % (len(line) + 4) + line


def _ref_lines(sha: bytes, first: int, last: int) -> bytes:
    """The pkt-lines `<sha> refs/heads/b<i>` for i in [first, last): one join per run of
    numbers of a length (their lines share a length prefix), not a format per line: the
    memory-cap test's server sends over a million of them."""
    runs = []
    while first < last:
        digits = len(str(first))
        end = min(last, 10**digits)
        prefix = _pkt(sha + b" refs/heads/b" + b"0" * digits + b"\n")[: -digits - 1]
        runs.append(prefix + (b"\n" + prefix).join(b"%d" % i for i in range(first, end)) + b"\n")
        first = end
    return b"".join(runs)


def endless_refs(
    *, count: int, every_s: float = 0.0, batch: int = 1
) -> Callable[[BaseHTTPRequestHandler, int], None]:
    """A smart-HTTP ref advertisement (`info/refs?service=git-upload-pack`) of `count` refs,
    `batch` to a chunk, one chunk each `every_s` seconds; a real server's would end much
    sooner. git's transport holds the whole advertisement before git prints a line of it."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/x-git-upload-pack-advertisement")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def send(data: bytes) -> None:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()

        send(_pkt(b"# service=git-upload-pack\n") + b"0000")
        sha = b"1" * 40
        send(_pkt(sha + b" HEAD\0multi_ack symref=HEAD:refs/heads/main\n"))
        for first in range(0, count, batch):
            send(_ref_lines(sha, first, min(first + batch, count)))
            if every_s:
                time.sleep(every_s)
        send(b"0000")
        h.wfile.write(b"0\r\n\r\n")

    return behave


def endless_pack(
    *, total: int, refs: Sequence[str] = ("refs/heads/dev",), chunk: int = 65536
) -> Behaviour:
    """A smart-HTTP git server (protocol v0, shallow-capable) advertising `refs`, whose pack
    for any of them holds a single blob that goes on: `total` bytes of it, then the
    connection closes. What the client writes to disk grows with every byte; a real server's
    pack would end."""
    sha = b"2" * 40
    caps = b"shallow allow-reachable-sha1-in-want allow-tip-sha1-in-want no-progress"

    def chunked(h: BaseHTTPRequestHandler, kind: str) -> Callable[[bytes], None]:
        h.send_response(200)
        h.send_header("Content-Type", f"application/x-git-upload-pack-{kind}")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def send(data: bytes) -> None:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()

        return send

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        if h.command == "GET":
            send = chunked(h, "advertisement")
            send(_pkt(b"# service=git-upload-pack\n") + b"0000")
            lines = [sha + b" " + ref.encode() for ref in refs]
            send(b"".join(_pkt(line + (b"\0" + caps if not i else b"") + b"\n")
                          for i, line in enumerate(lines)) + b"0000")  # fmt: skip
            h.wfile.write(b"0\r\n\r\n")
            return
        request = getattr(h, "body", b"")
        send = chunked(h, "result")
        if b"deepen" in request:
            send(_pkt(b"shallow " + sha + b"\n") + b"0000")
        if b"done" not in request:  # the shallow list alone: the client then says done
            h.wfile.write(b"0\r\n\r\n")
            return
        send(_pkt(b"NAK\n") + b"PACK" + (2).to_bytes(4, "big") + (1).to_bytes(4, "big"))
        size, header = 1 << 40, bytearray([0x80 | (3 << 4) | 0])  # a blob of 1 TiB declared
        size >>= 4
        while size:
            header.append((0x80 if size >> 7 else 0) | (size & 0x7F))
            size >>= 7
        send(bytes(header))
        stored = zlib.compressobj(level=0)  # sent as is: what the client stores grows with it
        for _ in range(total // chunk):
            send(stored.compress(b"\0" * chunk))
        h.close_connection = True

    return behave


class ProxyTrap(socketserver.ThreadingTCPServer):
    """An HTTP proxy on `address` that records the first bytes of every connection made to it
    (`seen`) and answers 502: anything here reached a proxy."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: str = "127.0.0.2") -> None:
        self.seen: list[bytes] = []
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                data = self.request.recv(65536)
                outer.seen.append(data)
                self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")

        super().__init__((address, 0), Handler)
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ProxyTrap:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def compressed_body(
    *,
    decoded: int,
    encoding: str = "gzip",
    chunk: int = 1 << 20,
    pad: bytes = b".",
    first: int = 0,
    cut: int = 0,
) -> Behaviour:
    """200 with a JSON body sent compressed that decodes to about `decoded` bytes: a small
    answer on the wire, a large one in memory (a bomb). `encoding` is the Content-Encoding
    sent, codings in the order applied ("gzip", "deflate", "deflate, gzip"); "raw-deflate"
    is sent as `deflate` without zlib's wrapper (as some servers do). `pad` repeated fills
    the answer (random bytes: an answer as large on the wire as decoded). `first` > 0: sent
    chunked, its first chunk `first` bytes long. `cut` > 0: that many bytes left off the end
    (the compressed data ends early, the HTTP body is whole)."""
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS, "raw-deflate": -15}
    packers = [zlib.compressobj(9, zlib.DEFLATED, wbits[c.strip()]) for c in encoding.split(",")]

    def through(piece: bytes, start: int = 0) -> bytes:
        for packer in packers[start:]:
            piece = packer.compress(piece)
        return piece

    filler = pad * (chunk // len(pad))
    parts = [through(b'{"login": "x", "id": 1, "pad": "')]
    parts += [through(filler) for _ in range(decoded // chunk)] + [through(b'"}')]
    parts += [through(packer.flush(), at + 1) for at, packer in enumerate(packers)]
    data = b"".join(parts)
    data = data[: len(data) - cut]
    said = encoding.replace("raw-deflate", "deflate")

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Encoding", said)
        if not first:
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            return
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for part in (data[:first], data[first:]):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            h.wfile.flush()
        h.wfile.write(b"0\r\n\r\n")

    return behave


def raw_answer(
    data: bytes, *, kind: str = "application/json; charset=utf-8", **headers: str
) -> Behaviour:
    """200 with `data` as the body, whatever it is (JSON nested without end, not JSON), and
    `headers` (`Content_Encoding="br"`: underscores become hyphens)."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        h.send_response(200)
        h.send_header("Content-Type", kind)
        for key, value in headers.items():
            h.send_header(key.replace("_", "-"), value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    return behave


def dumb_http(sha: str) -> Behaviour:
    """A git host turned dumb-HTTP: `info/refs` lists `sha` as a branch in the dumb form, and
    every other path answers 200 with a web page (as a captive portal answers everything).
    A partial clone's lazy fetch from here asks for objects that never come."""
    refs = f"{sha}\trefs/heads/main\n".encode()
    page = b"<html><body>Sign in to the network</body></html>\n"

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        body = refs if "/info/refs" in h.path else page
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return behave


def silent(*, hold_s: float) -> Behaviour:
    """Reads the request and answers nothing for `hold_s` seconds (then hangs up): a server
    that accepts and never answers, as far as a protected client waits."""

    def behave(h: BaseHTTPRequestHandler, n: int) -> None:
        end = time.monotonic() + hold_s
        while time.monotonic() < end:
            time.sleep(0.02)
        h.close_connection = True

    return behave
