"""The HTTP client ghapi sends through: each exchange has a total deadline and a size cap (httpx
times out per read only), and loopback traffic never goes through a proxy."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import ssl
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

from patchcarry import hosts, limits
from patchcarry.errors import BadInputError, NetworkError


class ReplyLimitError(NetworkError):
    """An answer that took longer than its deadline or grew past its size cap."""


@dataclasses.dataclass
class _Budget:
    host: str
    deadline_s: float
    until: float
    cap: int
    read: int = 0


_current = threading.local()


@contextlib.contextmanager
def exchange(host: str, *, deadline_s: float, max_bytes: int,
             until: float | None = None) -> Iterator[None]:  # fmt: skip
    """Bound every socket read inside; `until` (monotonic): a deadline shared with earlier tries."""
    end = time.monotonic() + deadline_s if until is None else until
    _current.budget = _Budget(host, deadline_s, end, max_bytes)
    try:
        yield
    finally:
        _current.budget = None


def _budget() -> _Budget | None:
    return getattr(_current, "budget", None)


def _time_left(timeout: float | None) -> float | None:
    budget = _budget()
    if budget is None:
        return timeout
    left = budget.until - time.monotonic()
    if left <= 0:
        raise past_deadline(budget.host, budget.deadline_s)
    return left if timeout is None else min(timeout, left)


def _count(
    budget: _Budget, more: int, passed: str = "passed", why: str = "", verb: str = "read"
) -> None:
    """`more` bytes on `budget`; past its cap the answer is refused (no real one is as long)."""
    budget.read += more
    if budget.read > budget.cap:
        raise ReplyLimitError(
            f"{budget.host}: the answer {passed} {budget.cap} bytes{why}, more than any real "
            f"answer; refusing to {verb} on (check GH_HOST)"
        )


def past_deadline(host: str, deadline_s: float) -> ReplyLimitError:
    return ReplyLimitError(
        f"{host}: no complete answer within {deadline_s:g} s (a stalled or "
        "dripping server); check GH_HOST and the network, then re-run"
    )


class _BoundedStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            data = self._inner.read(max_bytes, _time_left(timeout))
        except httpcore2.ReadTimeout:
            _time_left(None)  # past the total deadline: that is said, not the read's timeout
            raise
        budget = _budget()
        if budget is not None:
            _count(budget, len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:  # fmt: skip
        return _BoundedStream(
            self._inner.start_tls(ssl_context, server_hostname, _time_left(timeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None,
        local_address: str | None = None, socket_options: Any = None,
    ) -> httpcore2.NetworkStream:  # fmt: skip
        stream = self._inner.connect_tcp(host, port, _time_left(timeout), local_address,
                                         socket_options)  # fmt: skip
        return _BoundedStream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for `url` (None: direct); never one for loopback."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if hosts.is_loopback(host) or bypass(host):
        return None
    found = urllib.request.getproxies_environment()
    key = parts.scheme if found.get(parts.scheme) else "all"
    value = found.get(key)
    return _usable_proxy(value, f"{key}_proxy") if value else None


def _usable_proxy(value: str, setting: str) -> str:
    """`value` as curl reads it; SOCKS or no URL is BadInputError naming the setting."""
    url = value if "://" in value else f"http://{value}"
    shown = hosts.redact_url(url)
    try:
        parts = urlsplit(url)
        usable = bool(parts.hostname) and (parts.port or 0) >= 0  # .port: ValueError if no number
    except ValueError:
        usable = False
    if not usable:
        raise BadInputError(
            f"{setting} is {shown}: not a proxy URL (scheme://host:port); fix or unset it"
        )
    if parts.scheme.lower() not in ("http", "https"):
        raise BadInputError(
            f"{setting} is {shown}: a {ascii(parts.scheme)[1:-1]} proxy, which git may use but "
            "this tool's API client cannot (http:// and https:// proxies only); name an http "
            "proxy there, or the API host in no_proxy"
        )
    return url


class _DecodedStream(httpx2.SyncByteStream):
    """A body decoded here, every byte counted: past the cap it stops (no compression bomb)."""

    def __init__(self, inner: httpx2.SyncByteStream, codings: list[str], host: str) -> None:
        self._inner = inner
        self._decoded = _Budget(host, 0.0, 0.0, limits.HTTP_MAX_DECODED)  # bytes, not time
        self._codings = codings[::-1]  # the last applied is undone first
        self._links: list[Any] = [None] * len(codings)  # each made at its first two bytes
        self._first = [b""] * len(codings)  # a lone first byte, kept until its second comes

    def _decode(self, data: bytes, at: int = 0) -> Iterator[bytes]:
        if at == len(self._links):
            _count(self._decoded, len(data), "decoded past", " (Content-Encoding)", "decode")
            yield data
            return
        if self._links[at] is None:  # `deflate`'s form is told by two bytes: a chunk may hold one
            data, self._first[at] = self._first[at] + data, b""
            if len(data) < 2:
                self._first[at] = data
                return
            self._links[at] = _decompressor(self._codings[at], data)
        while data:
            link = self._links[at]
            if link.eof:
                return
            piece = link.decompress(data, self._decoded.cap - self._decoded.read + 1)
            data = link.unconsumed_tail
            yield from self._decode(piece, at + 1)

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                yield from self._decode(chunk)
            if any(self._first) or any(link and not link.eof for link in self._links):
                raise ReplyLimitError(
                    f"{self._decoded.host}: the answer ended before its compressed data did "
                    "(Content-Encoding): it is incomplete; check GH_HOST"
                )
        except zlib.error as exc:
            raise ReplyLimitError(
                f"{self._decoded.host}: the answer is not the compressed data its Content-Encoding "
                f"says ({exc}); check GH_HOST"
            ) from None

    def close(self) -> None:
        self._inner.close()


def _decompressor(coding: str, first: bytes) -> Any:
    """zlib's decompressor for one content coding; `deflate` as HTTP defines it (zlib format)
    or bare deflate, told from its `first` two bytes (at least)."""
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    wrapped = (first[0] & 0x0F) == 8 and (first[0] << 8 | first[1]) % 31 == 0
    return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)


_DECODABLE = ("gzip", "x-gzip", "deflate")


class _DecodingTransport(httpx2.HTTPTransport):
    """httpx's transport, bodies decoded here under `limits.HTTP_MAX_DECODED`; unasked: failure."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        said = response.headers.get("content-encoding", "")
        codings = [c.strip().lower() for c in said.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if not codings:
            return response
        budget = _budget()
        host = budget.host if budget is not None else request.url.netloc.decode("ascii", "replace")
        unknown = [c for c in codings if c not in _DECODABLE]
        if unknown or len(codings) > 2:
            response.close()
            raise ReplyLimitError(
                f"{host}: the answer is sent as {ascii(said)[1:-1][:60]}, an encoding this tool "
                "does not ask for or decode; check GH_HOST"
            )
        headers = [(key, value) for key, value in response.headers.raw
                   if key.lower() not in (b"content-encoding", b"content-length")]  # fmt: skip
        assert isinstance(response.stream, httpx2.SyncByteStream)
        return httpx2.Response(response.status_code, headers=headers,
                               stream=_DecodedStream(response.stream, codings, host),
                               extensions=response.extensions, request=request)  # fmt: skip


class ReplyShapeError(NetworkError):
    """An answer whose body is not the JSON it says it is: nothing is judged from it."""


def json_body(response: httpx2.Response, label: str) -> Any:
    """The answer's JSON; ReplyShapeError (exit 4, naming the request) where it is unreadable."""
    host = response.request.url.netloc.decode("ascii", "replace")
    try:
        return json.loads(response.content)
    except RecursionError:
        why = "JSON nested deeper than any reader recurses"
    except (ValueError, UnicodeDecodeError) as exc:
        why = f"not JSON ({type(exc).__name__} at byte {getattr(exc, 'pos', '?')})"
    raise ReplyShapeError(
        f"{label}: {host} answered {why}; nothing was read from it (check GH_HOST, re-run)"
    )


@functools.cache
def _verifying_context(_certs: tuple[str | None, str | None]) -> ssl.SSLContext:
    """httpx's verifying context for `SSL_CERT_FILE`/`SSL_CERT_DIR`: one per process (50 ms)."""
    return httpx2.create_ssl_context()


def client(api: str, *, on_response: Callable[[httpx2.Response], None]) -> httpx2.Client:
    """The pooled client for API base `api`; `on_response` sees every answer (the run log)."""
    certs = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    transport = _DecodingTransport(verify=_verifying_context(certs), proxy=proxy_for(api))
    pool = transport._pool  # the connection pool (or proxy) every exchange goes through
    pool._network_backend = _BoundedBackend(pool._network_backend)
    return httpx2.Client(
        transport=transport,
        trust_env=False,  # proxies decided above, not by httpx reading the environment
        timeout=limits.HTTP_READ_TIMEOUT_S,
        # the codings `_DecodingTransport` decodes, whatever httpx could (br, zstd if their
        # packages are installed): one that comes unasked is refused
        headers={"Accept-Encoding": ", ".join(_DECODABLE[::2])},
        follow_redirects=True,
        event_hooks={"response": [on_response]},
    )
