"""The only module that runs `git`. Small named functions, each taking an explicit cwd."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NewType

from patchcarry import hosts, proc, tokens
from patchcarry.errors import GitReadError, MissingInstallError, NetworkError

GitCommitHash = NewType("GitCommitHash", str)

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
# the API client has its timeout. The check's cache also stores them for lazy blob fetches.
NETWORK_ARGS = ("-c", "http.lowSpeedLimit=1024", "-c", "http.lowSpeedTime=60")


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


def no_git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The current environment without stray GIT_* variables or a token (`proc.environment`),
    isolated from user and system configuration and hooks (`ISOLATED`), never prompting,
    C locale."""
    require_isolating_git()
    env = {
        k: v
        for k, v in proc.environment().items()
        if not k.startswith("GIT_") or k in _GIT_ENV_KEEP
    }
    env.update(ISOLATED)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    if extra:
        env.update(extra)
    return env


def _secrets(args: tuple[str, ...]) -> dict[str, str]:
    """The token, for a git run that carries this tool's credential helper (`credential_args`)
    and for no other: the helper reads it from its environment when git asks for it."""
    token = tokens.token()
    return {"GITHUB_TOKEN": token} if token and _TOKEN_HELPER_ARG in "".join(args) else {}


def git(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env_extra: Mapping[str, str] | None = None,
    stdin: str | None = None,
    stream_stderr: bool = False,
) -> tuple[int, str, str]:
    """Run `git ARGS` in `cwd`; (code, stdout, stderr). Raises CalledProcessError if `check`."""
    return proc.cmd_output(
        "git",
        *args,
        cwd=cwd,
        env=no_git_env(env_extra),
        check=check,
        stdin=stdin,
        stream_stderr=stream_stderr,
        secrets=_secrets(args),
    )


def git_bytes(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env_extra: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> tuple[int, bytes, str]:
    """`git` for contents that must stay bytes (blobs, patch text): (code, stdout, stderr)."""
    return proc.cmd_output_bytes(
        "git",
        *args,
        cwd=cwd,
        env=no_git_env(env_extra),
        check=check,
        stdin=stdin,
        secrets=_secrets(args),
    )


def plain_tree_env(tree: Path) -> dict[str, str]:
    """Env that stops git from finding a repository above `tree` (a plain source tree).

    Without it, `git apply` inside e.g. site-packages of a venv that lives in a git checkout
    treats paths as relative to that checkout and silently skips every file.
    """
    return {"GIT_CEILING_DIRECTORIES": str(Path(tree).resolve().parent)}


def is_valid_branch_name(name: str) -> bool:
    """Whether `refs/heads/<name>` is a valid ref name (`git check-ref-format`), asked in an
    empty directory: no repository (the caller's least of all) is read for it."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-ref-") as tmp:
        code, _, _ = git(
            "check-ref-format",
            f"refs/heads/{name}",
            cwd=tmp,
            check=False,
            env_extra=plain_tree_env(Path(tmp) / "x"),
        )
    return code == 0


def init(path: Path) -> None:
    """`git init` a fresh repository at `path` (created if missing)."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)


def rev_parse(rev: str, *, cwd: Path) -> GitCommitHash:
    """The full hash `rev` names in the repository at `cwd`."""
    _, out, _ = git("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)
    return GitCommitHash(out.strip())


# -- resubmit: fetch, am, ls-remote and push with a lease; the token reaches git only through
# the environment. The helper below is a literal shell snippet: git runs it with the action as
# $1 and it prints `password=$GITHUB_TOKEN` expanded in ITS process, so the token value is
# never in argv, a URL, git config or a file. `credential.helper=` first drops other helpers;
# ours is set only for the git host that belongs to the API host (`credential.<url>.helper`),
# so a clone_url that points elsewhere, or plain http to a non-loopback host, gets no token.
_TOKEN_HELPER = (
    '!f() { test "$1" = get || return 0; echo username=x-access-token; '
    'echo "password=${GITHUB_TOKEN}"; }; f'
)
_TOKEN_HELPER_ARG = f".helper={_TOKEN_HELPER}"


# ssh://, git://, ext:: and scp-like `user@host:path` or `host:path` (not http(s)/file URLs or
# local paths, which the loopback world's forks are)
_NOT_HTTP = re.compile(r"^(?!https?://|file://)([a-z][a-z0-9+.-]*://|[a-z]+::|[^/:]+:)", re.I)


def credential_args(url: str | None = None, api: str | None = None) -> tuple[str, ...]:
    """`-c` options that give GITHUB_TOKEN to git for the API host's git host only (`api`
    defaults to GH_HOST's), plus the network timeouts every remote call gets. A `url` git
    reaches through a program of the user's (ssh, git://, `user@host:path`) gets no helper, so
    that run gets no token at all (`_secrets`): the ssh command never sees one."""
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


def ls_remote_branch(url: str, branch: str, *, cwd: Path) -> GitCommitHash | None:
    """The commit `refs/heads/<branch>` has at `url`, or None when the branch is absent."""
    _, out, _ = git(
        *credential_args(url), "ls-remote", "--end-of-options", url, f"refs/heads/{branch}", cwd=cwd
    )
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        if ref == f"refs/heads/{branch}":
            return GitCommitHash(sha)
    return None


def fetch_commit(url: str, ref: str, *, cwd: Path, shallow: bool = False) -> GitCommitHash:
    """Fetch `ref` (a branch, a refs/... name or a full sha) from `url`; the commit it names."""
    depth = ("--depth=1",) if shallow else ()
    git(
        *credential_args(url),
        "fetch",
        "-q",
        "--no-tags",
        *depth,
        "--end-of-options",
        url,
        ref,
        cwd=cwd,
    )
    return rev_parse("FETCH_HEAD", cwd=cwd)


def am(
    patches: list[Path], *, cwd: Path, committer_name: str, committer_email: str
) -> GitCommitHash:
    """`git am` the patches on HEAD, keeping authorship and message (sign-off included).
    `--keep-cr`: a line of a CRLF file keeps its CR (as `patchfile` reads the patch).

    The committer is given and its date is the author date, so the same patches on the same
    base give the same commit hash on every run (a re-run sees "already pushed").
    """
    env = {"GIT_COMMITTER_NAME": committer_name, "GIT_COMMITTER_EMAIL": committer_email}
    code, out, err = git(
        "am",
        "-q",
        "--keep-cr",
        "--committer-date-is-author-date",
        "--no-3way",
        *(str(p) for p in patches),
        cwd=cwd,
        env_extra=env,
        check=False,
    )
    if code != 0:
        git("am", "--abort", cwd=cwd, check=False)
        raise proc.CalledProcessError(["git", "am", *(p.name for p in patches)], code, out, err)
    return rev_parse("HEAD", cwd=cwd)


def push_with_lease(
    url: str, commit: str, branch: str, *, expected: str | None, cwd: Path
) -> tuple[bool, str]:
    """Push `commit` to `refs/heads/<branch>` at `url` only if the branch is still at `expected`
    (absent when None). Returns (accepted, git's message)."""
    ref = f"refs/heads/{branch}"
    lease = f"--force-with-lease={ref}:{expected or ''}"
    code, out, err = git(
        *credential_args(url),
        "push",
        "--porcelain",
        lease,
        "--end-of-options",
        url,
        f"{commit}:{ref}",
        cwd=cwd,
        check=False,
    )
    return code == 0, (out + err).strip()


# -- check: a cheap partial fetch of named commits, and read-only queries on trees and diffs.
# Local upstreams (paths, file:// URLs) are served by a local upload-pack; these settings let
# it honour --filter and wants by sha, as GitHub does. Never used for network URLs.
LOCAL_UPLOAD_PACK = (
    "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"
)


def ls_remote_refs(
    url: str, refs: list[str], *, cwd: Path | None = None
) -> tuple[int, dict[str, str], str]:
    """(code, {ref: sha} for the `refs` that exist at `url`, stderr); one round trip. Without
    `cwd` (a scratch repository of this tool's) it runs in an empty directory outside any
    repository, never the caller's: that one's config could redirect the URL or run code."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-ls-remote-") as tmp:
        code, out, err = git(
            *NETWORK_ARGS,
            "-c",
            "protocol.version=2",
            "ls-remote",
            "--end-of-options",
            url,
            *refs,
            cwd=cwd or tmp,
            check=False,
            env_extra=None if cwd else plain_tree_env(Path(tmp) / "x"),
        )
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        found[ref] = sha
    return code, found, err


def fetch_partial(
    remote: str,
    refspecs: list[str],
    *,
    cwd: Path,
    depth: int | None = None,
    since: int | None = None,
    progress: bool = False,
    object_filter: str = "blob:none",
) -> tuple[int, str]:
    """Shallow, blob-less (or, with `object_filter="tree:0"`, tree-less) fetch of `refspecs`
    (`<sha>:<local ref>`): `depth` commits, or every commit newer than the epoch `since`
    (the landing check's history); (code, stderr).

    With `progress`, git's progress goes straight to the terminal (stderr comes back empty).
    """
    shallow = f"--depth={depth}" if since is None else f"--shallow-since={since} +0000"
    code, _, err = git(
        *NETWORK_ARGS,
        "-c",
        "protocol.version=2",
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        shallow,
        f"--filter={object_filter}",
        "--progress" if progress else "--quiet",
        "--end-of-options",
        remote,
        *refspecs,
        cwd=cwd,
        check=False,
        stream_stderr=progress,
    )
    return code, err


def path_exists(rev: str, path: str, *, cwd: Path) -> bool:
    """Whether `path` is in `rev`'s tree; reads trees only, so no blob is fetched."""
    code, out, err = git("ls-tree", "--full-tree", rev, "--", path, cwd=cwd, check=False)
    if code != 0:
        raise GitReadError(f"git ls-tree {rev[:12]} -- {path} failed: {err.strip()}")
    return bool(out.strip())


def show_file(rev: str, path: str, *, cwd: Path) -> bytes | None:
    """Content of `path` at `rev` as stored (bytes: CRLF and any encoding kept; the blob is
    fetched lazily in a partial clone); None only when the path does not exist there. A read
    that fails (a lazy fetch that fails) is GitReadError,
    never "absent": a guess would report a conflict that is not there."""
    if not path_exists(rev, path, cwd=cwd):
        return None
    code, out, err = git_bytes("cat-file", "blob", f"{rev}:{path}", cwd=cwd, check=False)
    if code != 0:
        raise GitReadError(
            f"could not read {path} at {rev[:12]}: {' '.join(err.split())[:300]}; "
            "upstream may be unreachable (a lazy blob fetch failed): re-run"
        )
    return out


def commit_parents(rev: str, *, cwd: Path) -> list[str]:
    """Parents of commit `rev` (its trees/parents must be present)."""
    _, out, _ = git("rev-list", "--parents", "-n1", "--end-of-options", rev, cwd=cwd)
    return out.split()[1:]


def changed_paths(old: str, new: str, *, cwd: Path) -> list[str]:
    """Paths that differ between two commits: compares trees only, fetches no blobs."""
    _, out, _ = git("diff-tree", "-r", "--name-only", "--no-renames", old, new, cwd=cwd)
    return out.splitlines()


SPECIAL_MODES = {"120000": "a symlink", "160000": "a submodule"}


def special_paths(old: str, new: str, *, cwd: Path) -> list[tuple[str, str]]:
    """(path, what it is) for each path that differs between two trees or commits and is a
    symlink or a submodule on either side, or whose mode changed (the executable bit): git's
    own tree modes (trees only, no blobs), so a patch whose text hides the mode (a delete and
    a create of one path) still cannot retarget a link or make a file executable."""
    _, out, _ = git_bytes("diff-tree", "-r", "-z", "--raw", "--no-renames", old, new, cwd=cwd)
    fields = out.split(b"\0")
    found = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        modes = meta.decode().lstrip(":").split()[:2]
        kinds = [SPECIAL_MODES[m] for m in modes if m in SPECIAL_MODES]
        if not kinds and "000000" not in modes and len(set(modes)) == 2:
            kinds = [f"a mode change ({modes[0]} -> {modes[1]})"]
        if kinds:
            found.append((path.decode("utf-8", "surrogateescape"), kinds[0]))
    return found


def modes_at(commit: str, paths: list[str], *, cwd: Path) -> dict[str, str]:
    """{path: mode} for each of `paths` in `commit`'s tree (`git ls-tree`: trees only, no
    blobs); an absent path is left out."""
    _, out, _ = git_bytes("ls-tree", "-z", "--end-of-options", commit, "--", *paths, cwd=cwd)
    found = {}
    for record in out.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta:
            found[path.decode("utf-8", "surrogateescape")] = meta.split(b" ")[0].decode()
    return found


def special_at(modes: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path, what it is) for each path of a `modes_at` answer that is a symlink or a
    submodule."""
    return [(path, SPECIAL_MODES[m]) for path, m in modes.items() if m in SPECIAL_MODES]


def diff_paths(old: str, new: str, paths: list[str], *, cwd: Path, unified: int = 3) -> str:
    """`git diff` between two commits limited to `paths` (only their blobs are fetched); bytes
    that are not UTF-8 come back as surrogates (`encode` restores them)."""
    _, out, _ = git_bytes(
        "diff", "--no-color", "--no-renames", f"-U{unified}", old, new, "--", *paths, cwd=cwd
    )
    return out.decode("utf-8", "surrogateescape")


_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


def hunk_ranges(old: str, new: str, path: str, *, cwd: Path) -> list[tuple[int, int]]:
    """Old-side (start, line count) of each hunk of `git diff -U0 old new -- path`: where
    in the file each change sits (a count of 0 is an insertion after line `start`)."""
    text = diff_paths(old, new, [path], cwd=cwd, unified=0)
    return [(int(m.group(1)), int(m.group(2) or 1)) for m in _HUNK_RE.finditer(text)]


def patch_id(diff_text: str | bytes, *, cwd: Path) -> str | None:
    """`git patch-id --verbatim` (the stable id, whitespace kept: indentation is code) of a
    diff or format-patch text; None when it has no changes."""
    data = diff_text if isinstance(diff_text, bytes) else encode(diff_text)
    _, out, _ = git_bytes("patch-id", "--verbatim", cwd=cwd, stdin=data)
    return out.split()[0].decode() if out.strip() else None


def encode(text: str) -> bytes:
    """Text that came from bytes (decoded with surrogateescape) back to those exact bytes."""
    return text.encode("utf-8", "surrogateescape")


def apply_in_tree(
    patch: Path, *, tree: Path, context: int | None = None, check_only: bool = True
) -> tuple[int, str]:
    """`git apply -v` (with `--check` unless told) of `patch` in the plain tree `tree`;
    (code, git's messages: "Hunk #1 succeeded at X (offset N lines)", rejected context)."""
    args = ["apply", "-v", "--whitespace=nowarn"]
    if check_only:
        args.append("--check")
    if context is not None:
        args.append(f"-C{context}")
    code, out, err = git(
        *args, str(patch.resolve()), cwd=tree, check=False, env_extra=plain_tree_env(tree)
    )
    return code, out + err


def _remote_read(what: str, *args: str, cwd: Path) -> None:
    """A git read over the network: its failure is NetworkError (exit 4) in one line that
    names `what` and git's last word, never the command line (it holds -c options, URLs)."""
    code, _, err = git(*args, cwd=cwd, check=False)
    if code != 0:
        said = err.strip().splitlines()[-1:] or [f"git exited {code}"]
        raise NetworkError(f"could not read {what}: {said[0]}; check the network, then re-run")


def unshallow(url: str, *, cwd: Path) -> None:
    """Deepen a shallow scratch repo to full history from `url` (when a push needs it)."""
    _remote_read(
        f"the history of {url}",
        *credential_args(url),
        "fetch",
        "-q",
        "--no-tags",
        "--unshallow",
        "--end-of-options",
        url,
        cwd=cwd,
    )


def sparse_worktree(repo: Path, commit: str, paths: list[str], dest: Path) -> None:
    """Check out `paths` (cone-mode directories) of `commit` from `repo` into a new worktree
    at `dest`. In a blob-less partial clone the missing blobs come in one batched fetch."""
    git("worktree", "add", "-q", "--no-checkout", "--detach", str(dest), commit, cwd=repo)
    git("sparse-checkout", "set", "--", *paths, cwd=dest)
    git("checkout", "-q", "--detach", commit, cwd=dest)


# -- resubmit on a live branch: trees built in a scratch index of the blob-less cache (no work
# tree, no checkout), so only the blobs the patches touch are ever fetched (lazily, from a
# promisor remote). credential_args() ride along: a lazy fetch from the fork may need them.
DEEPEST = 2147483647  # git's "infinite" depth: a fetch at it deepens every shallow boundary


def fetch_blobless(
    remote: str, refspecs: list[str], *, cwd: Path, depth: int = 1, filter: str = "blob:none"
) -> None:
    """Fetch `refspecs` from the named promisor `remote`, shallow (`depth` commits; DEEPEST:
    the whole history, deepening what an earlier shallow fetch cut) and without blobs."""
    _remote_read(
        f"{', '.join(r.rpartition(':')[0].lstrip('+')[:12] for r in refspecs)} from {remote}",
        *credential_args(),
        "-c",
        "protocol.version=2",
        "fetch",
        "-q",
        "--no-tags",
        "--no-write-fetch-head",
        f"--depth={depth}",
        f"--filter={filter}",
        "--end-of-options",
        remote,
        *refspecs,
        cwd=cwd,
    )


def read_tree(commit: str, *, index: Path, cwd: Path) -> None:
    """Load `commit`'s tree into the scratch index file `index` (trees only, no blobs)."""
    git("read-tree", "--end-of-options", commit, cwd=cwd, env_extra={"GIT_INDEX_FILE": str(index)})


def apply_to_index(patch: Path, *, index: Path, cwd: Path, reverse: bool, check: bool) -> bool:
    """`git apply --cached` (`-R`, `--check` as told) of `patch` on the scratch index; whether
    it applied. Reads only the touched blobs (fetched lazily in a partial clone)."""
    args = ["apply", "--cached", *(["-R"] if reverse else []), *(["--check"] if check else [])]
    code, _, _ = git(
        *credential_args(),
        *args,
        str(patch.resolve()),
        cwd=cwd,
        check=False,
        env_extra={"GIT_INDEX_FILE": str(index)},
    )
    return code == 0


def write_tree(*, index: Path, cwd: Path) -> str:
    """The tree of the scratch index. `--missing-ok`: the blobs it names but never read stay
    on the promisor remote (without it git checks each one exists, fetching the whole tree)."""
    _, out, _ = git("write-tree", "--missing-ok", cwd=cwd, env_extra={"GIT_INDEX_FILE": str(index)})
    return out.strip()


def commit_tree(
    tree: str, parents: list[str], message: str, *, author: tuple[str, str, str], cwd: Path
) -> GitCommitHash:
    """A commit of `tree` on `parents`; `author` = (name, email, date) is also the committer,
    so the same inputs give the same hash on every run and machine."""
    name, email, date = author
    env = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": date,
    }
    parent_args = [a for p in parents for a in ("-p", p)]
    _, out, _ = git("commit-tree", tree, *parent_args, cwd=cwd, env_extra=env, stdin=message)
    return GitCommitHash(out.strip())


def commit_fields(rev: str, *, cwd: Path) -> tuple[str, str, str, list[str]]:
    """(tree, author "Name <email>", subject, parents) of a commit that is present locally."""
    _, out, _ = git("log", "-1", "--format=%T%x00%an <%ae>%x00%s%x00%P", rev, "--", cwd=cwd)
    tree, author, subject, parents = out.rstrip("\n").split("\x00")
    return tree, author, subject, parents.split()


def range_or_tree_diff(old: str, new: str, paths: list[str], *, cwd: Path) -> str:
    """`git range-diff old...new` (each side's own commits, matched up: a rebuilt patch shows
    its interdiff, a dropped commit its line) when the two heads share history; the tree diff
    of `paths` (with a stat line) only when their histories are unrelated."""
    if merge_base(old, new, cwd=cwd) is not None:
        _, out, _ = git(*credential_args(), "range-diff", "--no-color", f"{old}...{new}", cwd=cwd)
        return out
    _, out, _ = git(
        *credential_args(),
        "diff",
        "--no-color",
        "--stat",
        "-p",
        old,
        new,
        "--",
        *paths,
        cwd=cwd,
    )
    return out


def push_refs_with_lease(
    url: str, updates: list[tuple[str, str, str | None]], *, cwd: Path
) -> tuple[bool, str]:
    """Push each (commit, ref, expected) atomically: all refs move, or none does; each only if
    it still holds `expected` (absent when None). Returns (accepted, git's message)."""
    leases = [f"--force-with-lease={ref}:{expected or ''}" for _, ref, expected in updates]
    code, out, err = git(
        *credential_args(url),
        "push",
        "--porcelain",
        "--atomic",
        *leases,
        "--end-of-options",
        url,
        *(f"{commit}:{ref}" for commit, ref, _ in updates),
        cwd=cwd,
        check=False,
    )
    return code == 0, (out + err).strip()


def ls_remote_with_token(url: str, refs: list[str], *, cwd: Path) -> dict[str, str]:
    """{ref: sha} for the `refs` that exist at `url` (token available for a private fork);
    raises CalledProcessError when the remote cannot be read."""
    _, out, _ = git(*credential_args(url), "ls-remote", "--end-of-options", url, *refs, cwd=cwd)
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        found[ref] = sha
    return found


def merge_file(ours: bytes, base: bytes, theirs: bytes, *, cwd: Path) -> tuple[bool, bytes]:
    """`git merge-file -p`: the 3-way merge of one file's three contents (bytes, so CRLF and
    any encoding survive); (clean, merged). Conflict markers are in it when not clean; the
    caller then refuses."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-merge-") as tmp:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(data)
            paths.append(str(path))
        code, out, err = git_bytes("merge-file", "-p", "--", *paths, cwd=cwd, check=False)
    if code < 0 or code > 127:
        raise GitReadError(f"git merge-file failed: {err.strip()[:300]}")
    return code == 0, out


def write_blob_to_index(data: bytes, path: str, *, index: Path, cwd: Path) -> None:
    """Store `data` as a blob (as is: no filters) and put it at `path` in the scratch index,
    keeping its mode."""
    env = {"GIT_INDEX_FILE": str(index)}
    _, raw, _ = git_bytes("hash-object", "-w", "--no-filters", "--stdin", cwd=cwd, stdin=data)
    blob = raw.decode()
    _, entry, _ = git("ls-files", "-s", "--", path, cwd=cwd, env_extra=env)
    mode = entry.split()[0] if entry.strip() else "100644"
    git("update-index", "--cacheinfo", f"{mode},{blob.strip()},{path}", cwd=cwd, env_extra=env)


# -- adopt: read a PR's own commits from a (shallow, blob-less) scratch repo and write them as
# format-patch files. Read-only on the repo except format-patch's output directory.
def shallow_commits(*, cwd: Path) -> set[str]:
    """Commits at the shallow boundary of the repository at `cwd` (parents not fetched)."""
    _, out, _ = git("rev-parse", "--git-path", "shallow", cwd=cwd)
    path = Path(cwd) / out.strip()
    return set(path.read_text().split()) if path.is_file() else set()


def rev_list(include: str, exclude: str, *, cwd: Path) -> list[str]:
    """`git rev-list include ^exclude`: every commit reachable from one and not the other
    (all parents), newest first."""
    _, out, _ = git("rev-list", include, f"^{exclude}", "--", cwd=cwd)
    return out.split()


def rev_list_parents(include: str, exclude: str, *, cwd: Path) -> list[tuple[str, list[str]]]:
    """Commits reachable from `include` but not from `exclude`, oldest first (topological),
    each with its parents."""
    _, out, _ = git(
        "rev-list", "--topo-order", "--reverse", "--parents", include, f"^{exclude}", "--", cwd=cwd
    )
    return [(line.split()[0], line.split()[1:]) for line in out.splitlines() if line.strip()]


def merge_base(a: str, b: str, *, cwd: Path) -> str | None:
    """The best common ancestor of `a` and `b`, or None when the local history has none."""
    code, out, _ = git("merge-base", "--end-of-options", a, b, cwd=cwd, check=False)
    return out.strip() if code == 0 and out.strip() else None


def commit_summary(rev: str, *, cwd: Path) -> tuple[str, str]:
    """(`Author Name <email>`, subject) of commit `rev`."""
    _, out, _ = git("log", "-1", "--format=%an <%ae>%n%s", "--end-of-options", rev, cwd=cwd)
    author, _, subject = out.rstrip("\n").partition("\n")
    return author, subject


def format_patch(commit: str, *, number: int, out_dir: Path, cwd: Path) -> Path:
    """`git format-patch` of the one commit `commit` into `out_dir`, named `NNNN-subject.patch`
    from `number`. Authorship, date and message (sign-offs) are the commit's; nothing added."""
    _, out, _ = git(
        "format-patch",
        "-1",
        "--no-signoff",
        "--no-numbered",
        "--no-thread",
        "--no-to",
        "--no-cc",
        "--no-add-header",
        "--suffix=.patch",
        f"--start-number={number}",
        "-o",
        str(out_dir),
        "--end-of-options",
        commit,
        cwd=cwd,
    )
    return Path(out.strip())


# -- patchfile: what git itself reads in a patch file (the facts every command works on).
# Each runs in an empty temp dir that git may not leave (no repository is involved).
def mailsplit(data: bytes) -> list[bytes]:
    """The mails `git am` would split `data` into (`git mailsplit --keep-cr`, as am runs it);
    none when git reads no mailbox in it."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-mail-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, _, _ = git_bytes(
            "mailsplit", "--keep-cr", f"-o{tmp}", cwd=tmp, stdin=data, env_extra=env, check=False
        )
        return [path.read_bytes() for path in sorted(Path(tmp).iterdir())] if code == 0 else []


def mailinfo(mail: bytes) -> tuple[dict[str, str], bytes, bytes]:
    """`git mailinfo -u` of one mail: (its header fields as git decodes them: Author, Email,
    Subject, Date; the commit message; the patch part, from git's own patch break)."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-mailinfo-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, out, err = git_bytes(
            "mailinfo", "-u", "msg", "patch", cwd=tmp, stdin=mail, env_extra=env, check=False
        )
        if code != 0:
            raise GitReadError(f"git mailinfo failed: {' '.join(err.split())[:300]}")
        info: dict[str, str] = {}
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            key, sep, value = line.partition(": ")
            if sep:
                info[key] = value
        return info, (Path(tmp) / "msg").read_bytes(), (Path(tmp) / "patch").read_bytes()


def apply_numstat(patch: bytes) -> tuple[int, bytes, str]:
    """`git apply --numstat --summary -z` of `patch`: every file git would apply, with its line
    counts (`-` for binary), then the creations, deletions, mode changes, renames and copies.
    (code, git's output, git's stderr). Reads no tree."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-numstat-") as tmp:
        return git_bytes(
            "apply",
            "--numstat",
            "--summary",
            "-z",
            cwd=tmp,
            stdin=patch,
            check=False,
            env_extra=plain_tree_env(Path(tmp) / "x"),
        )


def trailers(message: bytes) -> list[tuple[str, str]]:
    """The trailers (`Signed-off-by: ...`) `git interpret-trailers --parse` reads in a commit
    message, in order, as (key, value)."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-trailers-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        _, out, _ = git_bytes(
            "interpret-trailers", "--parse", cwd=tmp, stdin=message, env_extra=env
        )
    found = []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            found.append((key, value))
    return found


# -- landing: the base branch's history since the pinned base (commits and trees, no blobs),
# and what git says about where a fix's lines went.


def commit_time(rev: str, *, cwd: Path) -> int:
    """Committer time of `rev` (epoch seconds)."""
    _, out, _ = git("log", "-1", "--format=%ct", "--end-of-options", rev, cwd=cwd)
    return int(out.strip())


def is_ancestor(a: str, b: str, *, cwd: Path) -> bool:
    code, _, _ = git("merge-base", "--is-ancestor", "--end-of-options", a, b, cwd=cwd, check=False)
    return code == 0


def first_parent_log(
    base: str, tip: str, paths: list[str], *, cwd: Path
) -> list[tuple[str, str, str]]:
    """(sha, first parent, subject) of each first-parent commit of `base..tip` that touches
    `paths`, oldest first: trees only, no blob is read. A merge stands for what it brought."""
    _, out, _ = git(
        "log",
        "--first-parent",
        "--reverse",
        "--no-renames",
        "--format=%H %P%x00%s",
        f"{base}..{tip}",
        "--",
        *paths,
        cwd=cwd,
    )
    found = []
    for line in out.splitlines():
        head, _, subject = line.partition("\0")
        shas = head.split()
        if len(shas) >= 2:  # a root commit has no change to compare
            found.append((shas[0], shas[1], subject))
    return found


def deleted_by(base: str, tip: str, path: str, *, cwd: Path) -> str | None:
    """The first-parent commit of `base..tip` that deleted `path` (trees only)."""
    _, out, _ = git(
        "log",
        "--first-parent",
        "--no-renames",
        "--diff-filter=D",
        "--format=%H",
        f"{base}..{tip}",
        "--",
        path,
        cwd=cwd,
    )
    shas = out.split()
    return shas[-1] if shas else None


def blame_reverse(
    start: str, end: str, path: str, lines: list[int], *, cwd: Path
) -> dict[int, tuple[str, str | None]]:
    """`git blame --reverse start..end`: for each of `lines` (numbers in `start`'s `path`),
    (the last commit it existed in, the commit that changed it, None when it lives on to
    `end`). Reads the blobs of each version of `path` in between."""
    if not lines:
        return {}
    if rev_parse(start, cwd=cwd) == rev_parse(end, cwd=cwd):  # nothing since: all live on
        return {n: (end, None) for n in lines}
    ranges = [arg for n in sorted(set(lines)) for arg in ("-L", f"{n},{n}")]
    _, out, _ = git(
        "blame", "--reverse", "--line-porcelain", *ranges, f"{start}..{end}", "--", path, cwd=cwd
    )
    result: dict[int, tuple[str, str | None]] = {}
    sha, number, previous = "", 0, None
    for row in out.splitlines():
        parts = row.split()
        if row.startswith("\t"):
            result[number] = (sha, previous)
        elif len(parts) >= 3 and len(parts[0]) >= 40 and parts[2].isdigit():
            sha, number, previous = parts[0], int(parts[2]), None  # the line in `start`
        elif row.startswith("previous "):
            previous = parts[1]
    return result


def first_parent_range(base: str, tip: str, *, cwd: Path) -> list[str]:
    """The first-parent commits of `base..tip`, newest first."""
    _, out, _ = git("rev-list", "--first-parent", f"{base}..{tip}", "--", cwd=cwd)
    return out.split()
