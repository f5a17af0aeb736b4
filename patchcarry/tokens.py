"""Which variable holds the token, as gh reads them; the only place a token is read."""

from __future__ import annotations

import os
import urllib.parse

from patchcarry import hosts
from patchcarry.errors import BadInputError

GITHUB_COM = ("GH_TOKEN", "GITHUB_TOKEN")
ENTERPRISE = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
# Every variable a token lives in (those, and the resubmit workflow's secret): no child sees
# them, no log holds their values.
ALL = frozenset({*GITHUB_COM, *ENTERPRISE, "RESUBMIT_TOKEN"})

# (variable, what it is for), for `patchcarry help environment`
DOCUMENTED = (
    ("GH_TOKEN, GITHUB_TOKEN", "the token for github.com and GHE.com, in that order"),
    ("GH_ENTERPRISE_TOKEN,", "the token for a GitHub Enterprise Server host (GH_HOST),"),
    ("GITHUB_ENTERPRISE_TOKEN", "in that order; without a token every write is a dry run"),
)


def is_enterprise_server(api: str) -> bool:
    """True for an API host that is not github.com, GHE.com or loopback (an Enterprise Server)."""
    host = (urllib.parse.urlsplit(api).hostname or "").lower()
    return not (host == "api.github.com" or host.endswith(".ghe.com") or hosts.is_loopback(host))


def variables(api: str | None = None) -> tuple[str, str]:
    """The variables read for the API host `api` (default: GH_HOST's), in gh's order."""
    return ENTERPRISE if is_enterprise_server(hosts.api_host(api)) else GITHUB_COM


def variable(api: str | None = None) -> str:
    """The variable the token comes from (the first set), else both names: what messages say."""
    names = variables(api)
    return next((name for name in names if os.environ.get(name)), " or ".join(names))


def token(api: str | None = None) -> str | None:
    """The token for API host `api`, or None; BadInputError for a value no token has."""
    name = next((n for n in variables(api) if os.environ.get(n)), None)
    if name is None:
        return None
    value = os.environ[name]
    flaw = _flaw(value)
    if flaw:
        raise BadInputError(
            f"{name} holds {flaw}, which no token has (GitHub's are ASCII letters, digits and "
            f"_): set {name} to the token alone"
        )
    return value


def _flaw(value: str) -> str | None:
    """What in `value` no token holds (None: nothing): it would break a header or git's answer."""
    if value != value.rstrip("\r\n"):
        return "a trailing newline"
    for char in value:
        if not char.isascii():
            return "a non-ASCII character"
        if char.isspace():
            return "a space" if char == " " else "white space (a tab or newline)"
        if not char.isprintable():
            return "a control character"
    return None
