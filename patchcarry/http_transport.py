"""The HTTP client ghapi sends through: every exchange has a total deadline and a size cap
that a real GitHub answer never meets, and loopback traffic never goes through a proxy.

httpx's timeouts are per read: a server that drips a byte every few seconds, or sends an
endless body, would hold the run forever or fill memory. Here every socket read of an exchange
is given at most the time left to it, and every byte read is counted; past either limit the
exchange ends with `ReplyLimitError` (exit 4, one line naming the host).

Proxies come from the environment (`https_proxy`, `no_proxy`, ...) as curl and urllib read
them, except for a loopback host: its traffic (plain http, the token in it) stays on the
machine whatever the proxy settings say.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

from patchcarry import hosts, limits
from patchcarry.errors import NetworkError


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
def exchange(
    host: str, *, deadline_s: float, max_bytes: int, until: float | None = None
) -> Iterator[None]:
    """Bound every socket read made inside (one HTTP exchange, redirects included); `until`
    (a `time.monotonic()` time): the deadline it shares with the tries before it."""
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
        raise _past_deadline(budget)
    return left if timeout is None else min(timeout, left)


def _past_deadline(budget: _Budget) -> ReplyLimitError:
    return past_deadline(budget.host, budget.deadline_s)


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
            budget = _budget()
            if budget is not None and time.monotonic() >= budget.until:
                raise _past_deadline(budget) from None
            raise
        budget = _budget()
        if budget is not None:
            budget.read += len(data)
            if budget.read > budget.cap:
                raise ReplyLimitError(
                    f"{budget.host}: the answer passed {budget.cap} bytes, more than any real "
                    "answer; refusing to read on (check GH_HOST)"
                )
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        return _BoundedStream(
            self._inner.start_tls(ssl_context, server_hostname, _time_left(timeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore2.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, _time_left(timeout), local_address, socket_options
        )
        return _BoundedStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore2.NetworkStream:
        return _BoundedStream(
            self._inner.connect_unix_socket(path, _time_left(timeout), socket_options)
        )

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
    return found.get(parts.scheme) or found.get("all") or None


def client(api: str, *, on_response: Callable[[httpx2.Response], None]) -> httpx2.Client:
    """The pooled client for API base `api`: bounded exchanges, proxy only where it belongs;
    `on_response` sees every answer (the run log)."""
    transport = httpx2.HTTPTransport(proxy=proxy_for(api))
    pool = transport._pool  # the connection pool (or proxy) every exchange goes through
    pool._network_backend = _BoundedBackend(pool._network_backend)
    return httpx2.Client(
        transport=transport,
        trust_env=False,  # proxies decided above, not by httpx reading the environment
        timeout=limits.HTTP_READ_TIMEOUT_S,
        follow_redirects=True,
        event_hooks={"response": [on_response]},
    )
