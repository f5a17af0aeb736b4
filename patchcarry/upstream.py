"""Just enough of upstream for `check`: named commits, shallow and blob-less, never a clone."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from patchcarry import cachedir, git, hosts, progress
from patchcarry.errors import BadInputError, NetworkError, UpstreamError

if TYPE_CHECKING:
    from patchcarry.manifest import Entry

DEFAULT_UPSTREAM = "https://github.com/NVIDIA/Megatron-LM.git"
_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://|^[^/\s]+@[^/\s]+:")


def git_url(repo: str) -> str:
    """The git URL of OWNER/REPO on GH_HOST's git side: what `check` fetches by default."""
    return f"{hosts.git_host(hosts.api_host())}/{repo}.git"


def url_for_entries(entries: Sequence[Entry]) -> str:
    """The one upstream `entries` name, as a git URL; BadInputError when they name several."""
    repos = sorted({e.upstream for e in entries})
    if len(repos) > 1:
        raise BadInputError(
            f"the entries name {len(repos)} upstreams ({', '.join(repos)}): check them one "
            "upstream at a time (name the entries), or pass --upstream"
        )
    return git_url(repos[0]) if repos else DEFAULT_UPSTREAM


def remote_url(upstream: str) -> str:
    """The URL git fetches from: paths become file:// URLs (needed for --depth/--filter)."""
    if _URL_RE.match(upstream):
        hosts.refuse_url_credentials(upstream, "--upstream")
        return upstream
    return Path(upstream).expanduser().resolve().as_uri()


def default_work_dir(url: str) -> Path:
    """`$XDG_CACHE_HOME/patchcarry/upstream/<hash of url>` (or ~/.cache/...)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "patchcarry" / "upstream" / hashlib.sha256(url.encode()).hexdigest()[:16]


def object_bytes(repo: Path) -> int:
    """Bytes in a cache repo's object store (packs plus blobs fetched on demand)."""
    total = 0
    for root, _, files in os.walk(repo / "objects"):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += (Path(root) / name).stat().st_size
    return total


@dataclasses.dataclass
class FetchedUpstream:
    """The scratch repo with the fetched commits; reads files and counts bytes fetched."""

    upstream: str
    url: str
    repo: Path
    branch_tips: dict[str, str]
    pull_heads: dict[int, str]
    _start_bytes: int

    @property
    def bytes_fetched(self) -> int:
        """Bytes added to the scratch object store this run (shallow packs and lazy blobs)."""
        return object_bytes(self.repo) - self._start_bytes

    @property
    def cache_bytes(self) -> int:
        return object_bytes(self.repo)

    def show(self, rev: str, path: str) -> bytes | None:
        """Content of `path` at commit `rev`, or None when the file does not exist there."""
        return git.show_file(rev, path, cwd=self.repo)


def _scratch_repo(url: str, work_dir: Path) -> Path:
    """The cache's bare repo, set up for `url`; the caller holds `cachedir.locked`."""
    wanted: dict[str, str | None] = {"remote.origin.url": url}
    wanted.update(git.CACHE_CONFIG)  # no housekeeping runs here behind the tool's back
    wanted.update(value.partition("=")[::2] for value in git.NETWORK_ARGS[1::2])  # lazy fetches
    local = url.startswith("file://")
    wanted["remote.origin.uploadpack"] = git.LOCAL_UPLOAD_PACK if local else None
    if (work_dir / "HEAD").is_file():
        git.configure(work_dir, wanted)  # one read; only what differs is written
    else:
        git.init_bare(work_dir, wanted)  # one `git init`, the settings from its template
    # a cache an earlier version (or a fetch killed before its repair) left with history cut
    # where the parents are here reads as whole again before anything reads it
    git.keep_known_history(cwd=work_dir)
    return work_dir


def _fetch(fetched: FetchedUpstream, wants: dict[str, str], depth: int, what: str,
           have: dict[str, str]) -> None:  # fmt: skip
    """Fetch each wanted commit not here, or here with less than `depth` commits of history;
    `have`: our refs already here ({refname: sha}), read before any of this run's fetches."""
    repo = fetched.repo
    cut = git.shallow_commits(cwd=repo) if depth > 1 else set()
    refspecs = [
        f"+{sha}:{ref}" for ref, sha in wants.items()
        if have.get(ref) != sha or (cut and cut & set(git.newest(sha, depth - 1, cwd=repo)))
    ]  # fmt: skip
    if not refspecs:
        return
    progress.say(f"fetching {what} from {fetched.upstream} (blob-less, depth {depth}) ...")
    refused = git.fetch_partial("origin", refspecs, depth=depth, cwd=fetched.repo,
                                progress=sys.stderr.isatty())  # fmt: skip
    if refused is not None:
        raise UpstreamError(
            f"could not fetch {what} from {fetched.upstream}: {refused.text}"
            "\n  check base_commit / supersedes in the manifest, or the --upstream you named"
        )


def fetch(
    upstream: str, *, base_commits: list[str], branches: list[str], pulls: list[int],
    work_dir: Path | None = None, pull_depth: int = 2,
) -> FetchedUpstream:  # fmt: skip
    """Fetch the named commits (PR heads `pull_depth` deep); UpstreamError when one is missing."""
    url = remote_url(upstream)
    with claimed(url, work_dir) as chosen:
        repo = _scratch_repo(url, chosen)
        start = object_bytes(repo)
        refs = [f"refs/heads/{b}" for b in branches] + [f"refs/pull/{n}/head" for n in pulls]
        _, found, refused = git.ls_remote_refs(url, refs, cwd=repo)
        if refused is not None:
            raise NetworkError(
                f"upstream {upstream} is unreachable: {refused.last}; check --upstream and the "
                "network"
            )
        missing = [r for r in refs if r not in found]
        if missing:
            raise UpstreamError(
                f"missing at {upstream}: {', '.join(missing)}\n  check base_branch / supersedes "
                "in the manifest (a PR number that does not exist?)"
            )
        tips = {b: found[f"refs/heads/{b}"] for b in branches}
        heads = {n: found[f"refs/pull/{n}/head"] for n in pulls}
        fetched = FetchedUpstream(upstream, url, repo, tips, heads, start)
        shallow = {git.own_ref("base", sha): sha for sha in base_commits}
        shallow.update({git.own_ref("heads", b): sha for b, sha in tips.items()})
        have = git.refs_under(git.OWN_REFS, cwd=repo)  # each fetch below writes other refs
        what = f"base commit(s) {', '.join(base_commits)} or branch tips"
        _fetch(fetched, shallow, 1, what, have)
        pull_refs = {git.own_ref("pull", str(n)): sha for n, sha in heads.items()}
        what = "PR heads " + ", ".join(f"#{n}" for n in pulls)
        _fetch(fetched, pull_refs, pull_depth, what, have)
        return fetched


@contextlib.contextmanager
def claimed(url: str, work_dir: Path | None) -> Iterator[Path]:
    """The cache folder for `url`, locked; removed if this call made it and the read fails."""
    default = default_work_dir(url)
    chosen = work_dir or default
    made = not chosen.exists()
    cachedir.claim(chosen, adopt_repo=chosen == default)
    with cachedir.locked(chosen):
        try:
            yield chosen
        except NetworkError:
            if made:
                shutil.rmtree(chosen, ignore_errors=True)
            raise


# What an importable upstream source tree needs: the package and upstream's unit tests.
TREE_PATHS = ["megatron", "tests/unit_tests", "tests/test_utils"]


def checkout_tree(fetched: FetchedUpstream, commit: str, dest: Path,
                  paths: list[str] = TREE_PATHS) -> Path:  # fmt: skip
    """A sparse checkout of `paths` at `commit` in `dest` (MEGATRON_SRC), reused when current."""
    dest = dest.resolve()
    if (dest / ".git").exists():
        if git.head_commit(dest) == commit:
            return dest
        raise BadInputError(f"{dest} already holds another checkout; remove it or pick another")
    if dest.exists() and any(dest.iterdir()):
        raise BadInputError(f"{dest} exists and is not empty; remove it or pick another")
    if dest.exists():
        dest.rmdir()
    with cachedir.locked(fetched.repo):
        git.prune_worktrees(fetched.repo)
        try:
            git.sparse_worktree(fetched.repo, commit, paths, dest)
        except git.GitError as exc:
            msg = f"could not check out {git.short(commit)} from {fetched.upstream}: {exc}"
            raise UpstreamError(msg) from None
    return dest


# -- adopt: a PR head and its base branch, commits only, deepened until the PR's own commits
# are separated from the branch. Bounded.
HISTORY_DEPTHS = (64, 512, 4096, 32768)


@dataclasses.dataclass(frozen=True)
class PullHistory:
    """A scratch repo holding `head` (refs/pull/N/head) and `branch_tip` with enough history."""

    upstream: str
    url: str
    repo: Path
    number: int
    branch: str
    branch_tip: str
    head: str
    depth: int

    def show(self, rev: str, path: str) -> bytes | None:
        return git.show_file(rev, path, cwd=self.repo)


def _separated(repo: Path, head: str, tip: str) -> bool:
    if git.merge_base(head, tip, cwd=repo) is None:
        return False
    boundary = git.shallow_commits(cwd=repo)
    return not any(sha in boundary for sha, _ in git.rev_list_parents(head, tip, cwd=repo))


def fetch_history(
    upstream: str, *, branch: str, pull: int, work_dir: Path | None = None,
    depths: tuple[int, ...] = HISTORY_DEPTHS,
) -> PullHistory:  # fmt: skip
    """Fetch the PR head and `branch`, deepening until the PR's commits are known."""
    url = remote_url(upstream)
    default = default_work_dir(url)
    chosen = work_dir or default.with_name(default.name + "-history")
    cachedir.claim(chosen, adopt_repo=work_dir is None)
    with cachedir.locked(chosen):
        repo = _scratch_repo(url, chosen)
        pull_ref, branch_ref = f"refs/pull/{pull}/head", f"refs/heads/{branch}"
        _, found, refused = git.ls_remote_refs(url, [pull_ref, branch_ref], cwd=repo)
        if refused is not None:
            raise UpstreamError(f"upstream {upstream} is unreachable: {refused.text}")
        if pull_ref not in found:
            raise UpstreamError(
                f"{upstream} no longer has {pull_ref}: PR #{pull}'s commits are gone upstream, "
                "so there is nothing to adopt from (rebuild the patch from a local copy, if you "
                "have one)"
            )
        if branch_ref not in found:
            raise UpstreamError(f"{upstream} has no branch {branch!r} (the PR's base branch)")
        head, tip = found[pull_ref], found[branch_ref]
        refspecs = [f"+{head}:{git.own_ref('adopt', 'pull', str(pull))}",
                    f"+{tip}:{git.own_ref('adopt', 'base')}"]  # fmt: skip
        for depth in depths:
            progress.say(f"fetching PR #{pull}'s commits from {upstream} (depth {depth}) ...")
            refused = git.fetch_partial("origin", refspecs, depth=depth, cwd=repo,
                                        progress=sys.stderr.isatty(),
                                        object_filter="tree:0")  # fmt: skip
            if refused is not None:
                raise UpstreamError(
                    f"could not fetch PR #{pull}'s head and {branch} from {upstream}: "
                    f"{refused.text}"
                )
            if _separated(repo, head, tip):
                return PullHistory(upstream, url, repo, pull, branch, tip, head, depth)
        raise UpstreamError(
            f"PR #{pull}'s head and {upstream} {branch} share no commit within {depths[-1]} "
            f"commits of history: is {branch} really its base branch?"
        )
