"""What every git starts from: no user config or hooks, network timeouts, one token host."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from patchcarry import hosts, proc, tokens
from patchcarry.errors import MissingInstallError

# Variables that would redirect git away from the repository we name (set by hooks, `git
# rebase -x`, or a parent git). Removing them keeps every call about its own cwd.
_GIT_ENV_KEEP = set(
    "GIT_EXEC_PATH GIT_SSH GIT_SSH_COMMAND GIT_SSL_CAINFO GIT_SSL_NO_VERIFY".split()
)


# A stalled http transfer is aborted; a fetch keeps what it gets as one pack, where the runner
# sees it grow (`ObjectStoreGrowth`).
_NETWORK_CONFIG = ("http.lowSpeedLimit=1024", "http.lowSpeedTime=60", "fetch.unpackLimit=1")
NETWORK_ARGS = tuple(arg for setting in _NETWORK_CONFIG for arg in ("-c", setting))

# A path handed to git as a pathspec names that file alone (`[v2]`, `*`, `?` are no globs).
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}

# The tool's caches are tidied by the tool alone: no background gc, maintenance, repack or
# commit-graph while the next command reads ("shallow file has changed since we read it").
CACHE_CONFIG = {"gc.auto": "0", "gc.autoPackLimit": "0", "gc.autoDetach": "false",
                "maintenance.auto": "false", "fetch.writeCommitGraph": "false"}  # fmt: skip


# No git reads the user's or system's configuration, runs a hook or copies a template: those
# could change what is pushed; `GIT_CONFIG_COUNT` outranks a repository's config too.
ISOLATED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TEMPLATE_DIR": "",  # empty: `git init` and `git clone` copy no template (no hooks)
    "GIT_CONFIG_COUNT": "2",
    "GIT_CONFIG_KEY_0": "core.hooksPath",
    "GIT_CONFIG_VALUE_0": os.devnull,
    "GIT_CONFIG_KEY_1": "core.attributesFile",
    "GIT_CONFIG_VALUE_1": os.devnull,
}


# GIT_CONFIG_GLOBAL needs git 2.32 (GIT_CONFIG_COUNT 2.31); an older git ignores both without
# a word and would read ~/.gitconfig (hooks included) again.
MIN_GIT = (2, 32)


@functools.cache
def require_isolating_git() -> None:
    """Refuse (exit 5) a git too old to honour `ISOLATED`, once per process."""
    with tempfile.TemporaryDirectory() as empty:
        _, out, _ = proc.cmd_output("git", "--version", cwd=empty, env=proc.environment())
    found = re.search(r"(\d+)\.(\d+)", out)
    if found and (int(found[1]), int(found[2])) < MIN_GIT:
        raise MissingInstallError(
            f"{out.strip()} is older than {'.'.join(map(str, MIN_GIT))}: it would ignore the "
            "isolation from your git configuration and hooks; install a newer git"
        )


_LOOPBACK = "localhost,127.0.0.1,::1,127.0.0.0/8"


def no_git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without GIT_* or a token, no user/system config or hooks, C locale."""
    require_isolating_git()
    env = {k: v for k, v in proc.environment().items()
           if not k.startswith("GIT_") or k in _GIT_ENV_KEEP}  # fmt: skip
    env.update(ISOLATED)
    env["GIT_TERMINAL_PROMPT"] = "0"
    # loopback is never reached through a proxy, whatever the proxy settings (git hands
    # no_proxy to curl; CIDR needs curl 7.86, the named addresses any curl)
    bypass = ",".join(filter(None, [env.get("no_proxy") or env.get("NO_PROXY"), _LOOPBACK]))
    env["no_proxy"] = env["NO_PROXY"] = bypass
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    if extra:
        env.update(extra)
    return env


def plain_tree_env(tree: Path) -> dict[str, str]:
    """Env that finds no repository above `tree` (else `git apply` in a venv skips every file)."""
    return {"GIT_CEILING_DIRECTORIES": str(Path(tree).resolve().parent)}


# The token reaches git only through the environment: the helper is a shell snippet that
# expands `$GITHUB_TOKEN` in its own process, set only for the API host's git host.
_TOKEN_HELPER = ('!f() { test "$1" = get || return 0; echo username=x-access-token; '
                 'echo "password=${GITHUB_TOKEN}"; }; f')  # fmt: skip
_TOKEN_HELPER_ARG = f".helper={_TOKEN_HELPER}"


# ssh://, git://, ext:: and scp-like `user@host:path` or `host:path` (not http(s)/file URLs or
# local paths, which the loopback world's forks are)
_NOT_HTTP = re.compile(r"^(?!https?://|file://)([a-z][a-z0-9+.-]*://|[a-z]+::|[^/:]+:)", re.I)


def credential_args(url: str | None = None, api: str | None = None) -> tuple[str, ...]:
    """`-c` options: the token for the API host's git host only (never via ssh), timeouts."""
    if url is not None and _NOT_HTTP.match(url):
        return NETWORK_ARGS
    helper = f"credential.{hosts.git_host(hosts.api_host(api))}.helper={_TOKEN_HELPER}"
    return ("-c", "credential.helper=", "-c", helper, *NETWORK_ARGS)


def secrets_for(args: tuple[str, ...]) -> dict[str, str]:
    """The token, for a git run carrying this tool's credential helper (`credential_args`) alone."""
    token = tokens.token()
    return {"GITHUB_TOKEN": token} if token and _TOKEN_HELPER_ARG in "".join(args) else {}
