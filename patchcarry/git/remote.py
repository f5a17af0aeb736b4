"""The network: ls-remote, fetch and push (the token rides only with `credential_args`)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import NamedTuple

from patchcarry.errors import NetworkError
from patchcarry.git.env import NETWORK_ARGS, credential_args, plain_tree_env
from patchcarry.git.history import rev_parse, shallow_commits
from patchcarry.git.runner import git
from patchcarry.git.sha import Sha, short
from patchcarry.git.shallow import keep_known_history

# Local upstreams (paths, file:// URLs) are served by a local upload-pack; these settings let
# it honour --filter and wants by sha, as GitHub does. Never used for network URLs.
LOCAL_UPLOAD_PACK = (
    "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"
)


DEEPEST = 2147483647  # git's "infinite" depth: a fetch at it deepens every shallow boundary


def ls_remote_branch(url: str, branch: str, *, cwd: Path) -> Sha | None:
    """The commit `refs/heads/<branch>` has at `url`, or None when the branch is absent."""
    ref = f"refs/heads/{branch}"
    return Sha(found) if (found := ls_remote_with_token(url, [ref], cwd=cwd).get(ref)) else None


def _refs(listed: str) -> dict[str, str]:
    """{ref: sha} of what `git ls-remote` printed."""
    return {ref: sha for sha, _, ref in (line.partition("\t") for line in listed.splitlines())}


class ReadRefused(NamedTuple):
    """A network read git did not do, as the tool reads it: what it means is a field; git's own
    words are kept only to be quoted in a message (`text`, `last`), never matched outside."""

    code: int
    said: str  # git's stderr, stripped ("" when it went to the terminal)
    fallback: str  # what a message quotes where git said nothing
    nothing_new: bool = False  # a `--shallow-since` fetch found no commit that new to send

    @property
    def text(self) -> str:
        """All git said, or the fallback."""
        return self.said or self.fallback

    @property
    def last(self) -> str:
        """git's last line, or the fallback."""
        return self.said.splitlines()[-1] if self.said else self.fallback


class RemoteRefs(NamedTuple):
    """What `ls_remote_refs` read: git's exit code, {ref: sha}, and why not when it failed."""

    code: int
    refs: dict[str, str]
    refused: ReadRefused | None


def ls_remote_refs(url: str, refs: list[str], *, cwd: Path | None = None) -> RemoteRefs:
    """The `refs` at `url`, one round trip. Without `cwd` it runs in an empty folder, not the
    caller's repo (whose config could redirect the URL or run code)."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-ls-remote-") as tmp:
        args = [*NETWORK_ARGS, "-c", "protocol.version=2", "ls-remote", "--end-of-options", url]
        env = None if cwd else plain_tree_env(Path(tmp) / "x")
        code, out, err = git(*args, *refs, cwd=cwd or tmp, check=False, env_extra=env)
    refused = ReadRefused(code, err.strip(), f"git ls-remote exited {code}") if code else None
    return RemoteRefs(code, _refs(out), refused)


def ls_remote_with_token(url: str, refs: list[str], *, cwd: Path) -> dict[str, str]:
    """{ref: sha} of the `refs` at `url` (token: a private fork); CalledProcessError if unread."""
    _, out, _ = git(*credential_args(url), "ls-remote", "--end-of-options", url, *refs, cwd=cwd)
    return _refs(out)


def fetch_commit(url: str, ref: str, *, cwd: Path, shallow: bool = False) -> Sha:
    """Fetch `ref` (a branch, a refs/... name or a full sha) from `url`; the commit it names."""
    depth = ("--depth=1",) if shallow else ()
    args = ["fetch", "-q", "--no-tags", *depth, "--end-of-options", url, ref]
    git(*credential_args(url), *args, cwd=cwd)
    if shallow:
        keep_known_history(cwd=cwd)
    return rev_parse("FETCH_HEAD", cwd=cwd)


def fetch_partial(
    remote: str, refspecs: list[str], *, cwd: Path, depth: int | None = None,
    since: int | None = None, deepen: int | None = None, progress: bool = False,
    object_filter: str = "blob:none",
) -> ReadRefused | None:  # fmt: skip
    """Shallow fetch of `refspecs` (`<sha>:<ref>`), blob-less or `object_filter`: `depth` commits,
    those newer than epoch `since`, or `deepen` more under each boundary; None when fetched. Cut
    commits whose parents are here stay whole; `progress` goes to the terminal (stderr empty)."""
    shallow = f"--depth={depth}" if since is None else f"--shallow-since={since} +0000"
    if deepen is not None:
        shallow = f"--deepen={deepen}"
    args = ["-c", "protocol.version=2", "fetch", "--no-tags", "--no-write-fetch-head", shallow]
    args += [f"--filter={object_filter}", "--progress" if progress else "--quiet"]
    args += ["--end-of-options", remote, *refspecs]
    code, _, err = git(*NETWORK_ARGS, *args, cwd=cwd, check=False, stream_stderr=progress)
    keep_known_history(cwd=cwd)
    if code == 0:
        return None
    nothing_new = since is not None and "no commits selected for shallow requests" in err
    return ReadRefused(code, err.strip(), "see git output above", nothing_new)


def fetch_blobless(
    remote: str, refspecs: list[str], *, cwd: Path, depth: int = 1, filter: str = "blob:none"
) -> None:
    """Shallow, blob-less fetch of `refspecs` from promisor `remote` (DEEPEST: whole history)."""
    what = f"{', '.join(short(r.rpartition(':')[0].lstrip('+')) for r in refspecs)} from {remote}"
    args = "-c protocol.version=2 fetch -q --no-tags --no-write-fetch-head".split()
    args += [f"--depth={depth}", f"--filter={filter}", "--end-of-options", remote, *refspecs]
    _remote_read(what, *credential_args(), *args, cwd=cwd)
    keep_known_history(cwd=cwd)


def prefetch_blobs(remote: str, blobs: list[str], *, cwd: Path) -> None:
    """Fetch `blobs` from promisor `remote` in one request, not one lazy fetch each."""
    if not blobs:
        return
    args = "-c protocol.version=2 -c fetch.negotiationAlgorithm=noop fetch -q --no-tags".split()
    args += "--no-write-fetch-head --recurse-submodules=no --filter=blob:none --stdin".split()
    stdin = "".join(f"{oid}\n" for oid in sorted(set(blobs)))
    code, _, err = git(*credential_args(), *args, remote, cwd=cwd, check=False, stdin=stdin)
    if code != 0:
        said = err.strip().splitlines()[-1:] or [f"git exited {code}"]
        raise NetworkError(f"could not read {len(set(blobs))} file(s) from {remote}: {said[0]}; "
                           "check the network, then re-run")  # fmt: skip


def deepen(url: str, branch: str, *, cwd: Path, progress: bool = False) -> bool:
    """Fetch `branch` from `url` whole into a shallow scratch repo (what a push needs); True when
    the shallow boundary changed. By name: a server deepens from what a fetch wants.
    `progress`: to the terminal (a large upstream's whole history takes minutes)."""
    before = shallow_commits(cwd=cwd)
    args = ["fetch", "--progress" if progress else "-q", "--no-tags", f"--depth={DEEPEST}"]
    args += ["--end-of-options", url, f"refs/heads/{branch}"]
    what = f"the history of {branch}"
    _remote_read(what, *credential_args(url), *args, cwd=cwd, stream_stderr=progress)
    return shallow_commits(cwd=cwd) != before


def _remote_read(what: str, *args: str, cwd: Path, stream_stderr: bool = False) -> None:
    """A network read: failure is NetworkError naming `what` and git's last word, not the argv."""
    code, _, err = git(*args, cwd=cwd, check=False, stream_stderr=stream_stderr)
    if code != 0:
        said = err.strip().splitlines()[-1:] or [f"git exited {code}"]
        raise NetworkError(f"could not read {what}: {said[0]}; check the network, then re-run")


class RefPushed(NamedTuple):
    """One ref of a push, from git's porcelain line: moved or not, and why not (server's, git's)."""

    ref: str
    accepted: bool
    why: str  # the text in parentheses (the server's reason for a remote refusal)
    remote: bool = False  # refused by the server (a hook, a rule), not by git's own checks
    lease: bool = False  # refused because the ref moved since it was read (a lost lease)
    atomic: bool = False  # refused only because another ref of the atomic push was


_PORCELAIN = re.compile(r"^([ +\-*=!])\t[^\t]*:([^\t]+)\t(\S.*?)(?: \((.*)\))?$")
_LEASE = ("stale info", "fetch first", "non-fast-forward")
_REMOTE = re.compile(r"^remote:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


class Pushed(NamedTuple):
    """An atomic push's outcome: each ref's result, the server's `remote:` lines, retry meaning."""

    accepted: bool
    refs: tuple[RefPushed, ...] = ()
    server: tuple[str, ...] = ()
    last: str = ""  # git's last line, for a failure nothing else explains
    shallow: bool = False  # refused for history a shallow clone lacks: deepening may help
    lagging: bool = False  # the repository's git side does not serve it yet (a new fork)


def read_push(code: int, output: str) -> Pushed:
    """What `git push --porcelain` said (exit `code`, stdout and stderr joined)."""
    refs = []
    for line in output.splitlines():
        if found := _PORCELAIN.match(line):
            flag, ref, summary, why = found.groups()
            refs.append(RefPushed(
                ref, flag != "!", why or "", remote=summary == "[remote rejected]",
                lease=summary == "[rejected]" and why in _LEASE,
                atomic="atomic" in (why or ""),
            ))  # fmt: skip
    low, refused = output.lower(), code != 0
    return Pushed(not refused, tuple(refs), tuple(_REMOTE.findall(output)),
                  output.splitlines()[-1] if output else "no output",
                  refused and "shallow update not allowed" in low,
                  refused and ("not found" in low or "could not read" in low))  # fmt: skip


def push_refs_with_lease(url: str, updates: list[tuple[str, str, str | None]], *,
                         cwd: Path) -> Pushed:  # fmt: skip
    """Push each (commit, ref, expected) atomically, each only if it still holds `expected`."""
    leases = [f"--force-with-lease={ref}:{expected or ''}" for _, ref, expected in updates]
    code, out, err = git(
        *credential_args(url), "push", "--porcelain", "--atomic", *leases, "--end-of-options",
        url, *(f"{commit}:{ref}" for commit, ref, _ in updates), cwd=cwd, check=False,
    )  # fmt: skip
    return read_push(code, (out + err).strip())
