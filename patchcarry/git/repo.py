"""Local repositories: create, configure, check out (no network)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from patchcarry.git.env import plain_tree_env
from patchcarry.git.pure import answer
from patchcarry.git.runner import git

OWN_REFS = "refs/patchcarry/"  # every ref this tool writes, in a cache or on a fork


def own_ref(*parts: str) -> str:
    """`refs/patchcarry/PART/...`: a ref of this tool's own."""
    return OWN_REFS + "/".join(parts)


def init(path: Path) -> None:
    """`git init` a fresh repository at `path` (created if missing)."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)


def init_bare(path: Path, config: Mapping[str, str | None] | None = None) -> None:
    """`git init --bare` at `path` (an existing directory), its config holding `config` (None:
    absent): one process, the settings copied from a template directory, as `git init` does."""
    wanted = dict(config or {})
    text = _config_text(wanted)  # a key git would refuse stops here, before anything is made
    left = (path / "config").exists()  # by a killed init: git copies no template file over it
    with tempfile.TemporaryDirectory(prefix="patchcarry-template-") as template:
        (Path(template) / "config").write_bytes(text.encode("utf-8", "surrogateescape"))
        git("init", "-q", "--bare", f"--template={template}", str(path), cwd=path)
    configure(path, {k: v for k, v in wanted.items() if left or (v is not None and not _plain(v))})


def set_config(key: str, value: str, *, cwd: Path) -> None:
    """Set `key` in the repository's own config, the one value it holds (`--replace-all`: a key
    given several values by `git config --add` is refused by `git config key value`)."""
    git("config", "--replace-all", key, value, cwd=cwd)


def configure(repo: Path, wanted: Mapping[str, str | None]) -> None:
    """Make `repo`'s own config hold `wanted` (None: unset): read once, only changes written."""
    if not wanted:
        return
    listed = {key: _canonical(key) for key in wanted}  # a key git would refuse: nothing written
    _, out, _ = git("config", "--local", "--list", "-z", cwd=repo)
    have: dict[str, list[str]] = {}
    for item in out.split("\0")[:-1]:
        name, _, said = item.partition("\n")
        have.setdefault(name, []).append(said)
    for key, value in wanted.items():
        now = have.get(listed[key], [])
        if value is None and now:
            unset_config(key, cwd=repo)
        elif value is not None and now != [value]:
            set_config(key, value, cwd=repo)


def _canonical(key: str) -> str:
    """`key` as `git config --list` prints it: section and name lower case, subsection kept."""
    section, middle, name = _key_parts(key)
    return ".".join((section.lower(), *([] if middle is None else [middle]), name.lower()))


# git-config(1): a section and a name of letters, digits and `-` (the name starts with a
# letter), between them a subsection of anything but a newline or NUL (it may be empty).
_KEY = re.compile(r"([A-Za-z0-9-]+)(?:\.([^\n\0]*))?\.([A-Za-z][A-Za-z0-9-]*)")


def _key_parts(key: str) -> tuple[str, str | None, str]:
    """(section, subsection or None, name) of `key`; ValueError for a key `git config` refuses
    (written by hand into a file, its section or name would be read as other config)."""
    match = _KEY.fullmatch(key)
    if match is None:
        raise ValueError(f"not a git config key: {key!r}")
    section, middle, name = match.groups()
    return section, middle, name


def _plain(value: str) -> bool:
    """Whether `value` holds no control character (written quoted, with `\\` and `"` escaped)."""
    return not any(ord(c) < 32 or ord(c) == 127 for c in value)


def _config_text(config: Mapping[str, str | None]) -> str:
    """`config`'s plain values in git's config-file syntax (git-config(1), "Syntax")."""
    lines = []
    for key, value in config.items():
        section, middle, name = _key_parts(key)
        if value is not None and _plain(value):
            lines.append(f"[{section}]" if middle is None else f"[{section} {_quoted(middle)}]")
            lines.append(f"\t{name} = {_quoted(value)}")
    return "".join(f"{line}\n" for line in lines)


def _quoted(text: str) -> str:
    """`text` in double quotes, its `\\` and `"` escaped (a subsection name or a value)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# Packs a cache may hold outside its multi-pack index before the index is written anew.
PACKS_OUTSIDE_INDEX = 16


def index_packs(repo: Path) -> bool:
    """Write a multi-pack index once over `PACKS_OUTSIDE_INDEX` packs are outside it; if written."""
    packs = repo / "objects" / "pack"
    count = len(list(packs.glob("*.pack")))
    indexed = _indexed.get(repo)
    if indexed is None:
        indexed = _packs_in_index(packs)
    if count - indexed <= PACKS_OUTSIDE_INDEX:
        _indexed[repo] = indexed
        return False
    git("multi-pack-index", "write", cwd=repo)
    _indexed[repo] = count
    return True


_indexed: dict[Path, int] = {}  # packs the index covered when this process last wrote it


def _packs_in_index(packs: Path) -> int:
    """How many packs the multi-pack index there covers (0 without one): its header's count."""
    try:
        with (packs / "multi-pack-index").open("rb") as midx:
            header = midx.read(12)
    except OSError:
        return 0
    return int.from_bytes(header[8:12], "big") if header[:4] == b"MIDX" else 0


def unset_config(key: str, *, cwd: Path) -> None:
    """Remove every value of `key` from the repository's config; none there is fine."""
    git("config", "--unset-all", key, cwd=cwd, check=False)


def is_valid_branch_name(name: str) -> bool:
    """Whether `refs/heads/<name>` is valid, asked in an empty folder: a pure function of the
    name, asked once per process (`pure`; a run's log still shows the answer it used)."""
    asked = ("check-ref-format", f"refs/heads/{name}")
    return answer(asked, lambda: _check_ref_format(asked))


def _check_ref_format(asked: tuple[str, ...]) -> tuple[int, bool]:
    with tempfile.TemporaryDirectory(prefix="patchcarry-ref-") as tmp:
        env = plain_tree_env(Path(tmp) / "x")
        code, _, _ = git(*asked, cwd=tmp, check=False, env_extra=env)
    return code, code == 0


def sparse_worktree(repo: Path, commit: str, paths: list[str], dest: Path) -> None:
    """Check out `paths` (cone mode) of `commit` into a new worktree at `dest` (one blob fetch)."""
    git("worktree", "add", "-q", "--no-checkout", "--detach", str(dest), commit, cwd=repo)
    git("sparse-checkout", "set", "--", *paths, cwd=dest)
    git("checkout", "-q", "--detach", commit, cwd=dest)


def prune_worktrees(repo: Path) -> None:
    """Forget the worktrees of `repo` whose folders are gone (`git worktree prune`)."""
    git("worktree", "prune", cwd=repo)


def checkout_detached(commit: str, *, cwd: Path) -> None:
    """Check out `commit` at `cwd` with a detached HEAD."""
    git("checkout", "-q", "--detach", commit, cwd=cwd)


def toplevel(path: Path) -> Path | None:
    """The top of the work tree holding `path` (a directory); None outside any."""
    code, out, _ = git("rev-parse", "--show-toplevel", cwd=path, check=False)
    return Path(out.strip()) if code == 0 and out.strip() else None


def remote_url_of(name: str, *, cwd: Path) -> str | None:
    """The URL of remote `name` as configured here; None when there is no such remote."""
    code, out, _ = git("remote", "get-url", name, cwd=cwd, check=False)
    return out.strip() or None if code == 0 else None


def remote_names(*, cwd: Path) -> list[str]:
    """The names of the remotes configured here (`git remote`), in git's order."""
    code, out, _ = git("remote", cwd=cwd, check=False)
    return out.split() if code == 0 else []


def is_modified(path: str, *, cwd: Path) -> bool:
    """Whether `path` (relative to the top) differs from HEAD or is not tracked."""
    code, out, _ = git("status", "--porcelain", "--", path, cwd=cwd, check=False)
    return code != 0 or bool(out.strip())
