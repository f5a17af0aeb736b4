"""What every git this tool runs starts from: an environment isolated from the user's
configuration and hooks, network timeouts, and the token for the API host's git host only."""

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
_GIT_ENV_KEEP = {
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSL_CAINFO",
    "GIT_SSL_NO_VERIFY",
}


# A stalled http transfer (under 1 KiB/s for 60 s) is aborted instead of hanging the run, as
# the API client has its timeout. What a fetch gets is kept as one pack, never unpacked into
# loose objects: the pack directory is where the runner sees it grow (`ObjectStoreGrowth`).
# The check's cache also stores them for lazy blob fetches.
NETWORK_ARGS = (
    "-c",
    "http.lowSpeedLimit=1024",
    "-c",
    "http.lowSpeedTime=60",
    "-c",
    "fetch.unpackLimit=1",
)

# A path handed to git as a pathspec names that file alone (`[v2]`, `*`, `?` are no globs).
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}

# The tool's own caches are tidied by the tool alone: no git it runs there (a fetch, a lazy
# blob fetch, a commit) starts `git gc --auto`, `git maintenance run --auto`, a repack or a
# commit-graph write behind its back, detached, while the next command reads the repository
# ("fatal: shallow file has changed since we read it"). Written into each cache's own config
# (`repo.own_cache_config`), so the git processes git itself starts there hold to it too.
CACHE_CONFIG = {
    "gc.auto": "0",
    "gc.autoPackLimit": "0",
    "gc.autoDetach": "false",
    "maintenance.auto": "false",
    "fetch.writeCommitGraph": "false",
}


# Every git this tool runs reads none of the user's or the system's configuration, runs no
# hook and copies no template: `apply.whitespace=fix`, `core.hooksPath`, `init.templateDir`,
# `url.*.insteadOf` or `core.sshCommand` set there would change what is pushed or run code
# beside the push. What the tool needs it sets itself (identity, the credential helper).
# `GIT_CONFIG_COUNT` is command-line config: it outranks a repository's own config too.
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
    """This environment without stray GIT_* variables or a token, isolated from user and system
    configuration and hooks, never prompting, C locale."""
    require_isolating_git()
    env = {
        k: v
        for k, v in proc.environment().items()
        if not k.startswith("GIT_") or k in _GIT_ENV_KEEP
    }
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
    """Env that stops git from finding a repository above `tree`: else `git apply` in a venv
    inside a checkout takes paths relative to that checkout and skips every file."""
    return {"GIT_CEILING_DIRECTORIES": str(Path(tree).resolve().parent)}


# The token reaches git only through the environment. The helper below is a literal shell
# snippet: git runs it with the action as $1 and it prints `password=$GITHUB_TOKEN` expanded in
# ITS process, so the token value is never in argv, a URL, git config or a file.
# `credential.helper=` first drops other helpers; ours is set only for the git host that belongs
# to the API host (`credential.<url>.helper`), so a clone_url that points elsewhere, or plain
# http to a non-loopback host, gets no token.
_TOKEN_HELPER = (
    '!f() { test "$1" = get || return 0; echo username=x-access-token; '
    'echo "password=${GITHUB_TOKEN}"; }; f'
)


_TOKEN_HELPER_ARG = f".helper={_TOKEN_HELPER}"


# ssh://, git://, ext:: and scp-like `user@host:path` or `host:path` (not http(s)/file URLs or
# local paths, which the loopback world's forks are)
_NOT_HTTP = re.compile(r"^(?!https?://|file://)([a-z][a-z0-9+.-]*://|[a-z]+::|[^/:]+:)", re.I)


def credential_args(url: str | None = None, api: str | None = None) -> tuple[str, ...]:
    """`-c` options giving the token to git for the API host's git host only, plus network
    timeouts; a `url` reached through a program of the user's (ssh) gets no token at all."""
    if url is not None and _NOT_HTTP.match(url):
        return NETWORK_ARGS
    scope = hosts.git_host(hosts.api_host(api))
    return (
        "-c",
        "credential.helper=",
        "-c",
        f"credential.{scope}.helper={_TOKEN_HELPER}",
        *NETWORK_ARGS,
    )


def secrets_for(args: tuple[str, ...]) -> dict[str, str]:
    """The token, for a git run that carries this tool's credential helper (`credential_args`)
    and for no other: the helper reads it from its environment when git asks for it."""
    token = tokens.token()
    return {"GITHUB_TOKEN": token} if token and _TOKEN_HELPER_ARG in "".join(args) else {}
