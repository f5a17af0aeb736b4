"""Where the token may go, decided before any name resolves: GH_HOST's API host and its git
host (the only one the credential helper answers), plain http only to loopback."""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.parse

from patchcarry.errors import BadInputError

DEFAULT_API = "https://api.github.com"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")  # OWNER/NAME as GitHub spells it
_DATA_RESIDENCY_SUFFIX = ".ghe.com"  # GitHub Enterprise Cloud with data residency


def split(url: str, what: str) -> urllib.parse.SplitResult:
    """`url` split, port included; BadInputError (without credentials) when it cannot be."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - reading it is the check (ValueError when malformed)
    except ValueError as exc:
        sep = "" if what.endswith("=") else " "
        raise BadInputError(f"{what}{sep}{redact_url(url)}: not a valid URL ({exc})") from None
    return parts


def is_loopback(hostname: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1; literal comparison, never a DNS lookup."""
    name = hostname.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def api_host(value: str | None = None) -> str:
    """The REST base URL from `GH_HOST`; plain http to a non-loopback host is refused."""
    host = (value if value is not None else os.environ.get("GH_HOST", "")).strip().rstrip("/")
    if not host or host == "github.com":
        return DEFAULT_API
    if "://" not in host:
        split(f"https://{host}", "GH_HOST=")  # a hostname urllib can read (`[::1` it cannot)
        refuse_url_credentials(f"https://{host}", "GH_HOST=")
        if host.lower().endswith(_DATA_RESIDENCY_SUFFIX):
            return f"https://{host}" if host.lower().startswith("api.") else f"https://api.{host}"
        return f"https://{host}/api/v3"
    parts = split(host, "GH_HOST=")
    refuse_url_credentials(host, "GH_HOST=")
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise BadInputError(f"GH_HOST={redact_url(host)}: not an http(s) URL or hostname")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise BadInputError(
            f"GH_HOST={redact_url(host)}: refusing plain http to a host that is not loopback "
            "(the token would travel in clear text); use https://"
        )
    return host


def git_host(api: str) -> str:
    """`scheme://host[:port]` of the git server that belongs to API base `api`."""
    parts = urllib.parse.urlsplit(api)
    host = (parts.hostname or "").lower()
    if host == "api.github.com":
        host = "github.com"
    elif host.startswith("api.") and host.endswith(_DATA_RESIDENCY_SUFFIX):
        host = host.removeprefix("api.")
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def redact_url(url: str) -> str:
    """`url` without any user name or password (`https://user:secret@h/p` -> `https://h/p`)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return re.sub(r"(?<=://)[^/]*@", "", url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def refuse_url_credentials(url: str, what: str) -> None:
    """Refuse a password in `url`, or any user name over http(s) (git would store and echo it)."""
    if "://" not in url:
        return
    parts = split(url, what)
    if "@" not in parts.netloc:
        return
    if parts.password is not None or parts.scheme in ("http", "https"):
        sep = "" if what.endswith("=") else " "
        raise BadInputError(
            f"{what}{sep}{redact_url(url)}: credentials in the URL are not accepted (they would be "
            "stored in git config and printed); drop them and use a git credential helper"
        )


class ForeignGitURLError(BadInputError):
    """An API answer named a git URL that is not the configured host's own for the repository."""


def repo_git_url(api: str, full_name: str) -> str:
    """The git URL of OWNER/NAME on `api`'s git host: the only one used for an API's repository."""
    owner, _, name = full_name.partition("/")
    if name in (".", "..") or not _NAME.fullmatch(full_name):
        raise ForeignGitURLError(f"{full_name!r} is not OWNER/NAME; refusing to derive a git URL")
    return f"{git_host(api)}/{owner}/{name}.git"


def answered_git_url(api: str, full_name: str, answered: object) -> str:
    """`repo_git_url(api, full_name)` when `clone_url` is it or absent; else refused."""
    own = repo_git_url(api, full_name)
    if answered is None or answered == "" or _same_url(str(answered), own):
        return own
    said = shown(answered)  # credentials left out: then it may read as our own URL
    why = f"carries credentials ({said})" if said == own else f"is {said}, not {own}"
    raise ForeignGitURLError(
        f"the API's clone_url for {full_name} {why}: refusing to "
        "fetch from or push to a URL an API answer chose; check GH_HOST and the repository"
    )


def _same_url(answered: str, own: str) -> bool:
    try:
        there, here = urllib.parse.urlsplit(answered), urllib.parse.urlsplit(own)
        ports = there.port == here.port
    except ValueError:
        return False
    return (
        ports and there.scheme == here.scheme and there.netloc.lower() == here.netloc.lower()
        and there.path.lower() == here.path.lower() and not there.query and not there.fragment
    )  # fmt: skip


def shown(value: object) -> str:
    """An answer as one safe line: without credentials, control characters escaped, short."""
    text = redact_url(str(value))
    return ascii(text[:200])[1:-1]
