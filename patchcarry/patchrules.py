"""What a patch may carry (paths, modes, binaries, sign-off): it is pushed and applied."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Protocol

from patchcarry.errors import BadInputError


class Change(Protocol):
    """One file git would apply (`patchfile.Change`): what the rules look at."""

    @property
    def path(self) -> str: ...
    @property
    def old_path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def old_mode(self) -> str: ...
    @property
    def new_mode(self) -> str: ...
    @property
    def binary(self) -> bool: ...
    @property
    def index_mode(self) -> str: ...


DEFAULT_PATHS = ("megatron/**", "tests/**")
_SAFE_MODES = ("100644", "100755")
# GitHub runs these with the repository's credentials; never pushed under the user's name.
_WORKFLOWS = (".github/workflows/**",)
# What else upstream's CI, forge or git runs or obeys (composite actions, CODEOWNERS,
# attributes, submodules, other CIs): refused as workflow files are, ignoring case.
_CI_FILES = (".github/**", "codeowners", "docs/codeowners",
             ".gitattributes", "**/.gitattributes", ".gitmodules", "**/.gitmodules",
             ".gitlab/**", ".gitlab-ci.yml", ".circleci/**", ".buildkite/**", ".travis.yml",
             "jenkinsfile", "azure-pipelines.yml")  # fmt: skip

# Files other tools upstream's maintainers run obey, which a repository may keep on purpose:
# carried only when the entry's own `paths` names the file itself (`named_only`), never a glob.
_OBEYED = (
    ".devcontainer/**", "**/.devcontainer/**", ".devcontainer.json", "**/.devcontainer.json",
    ".lfsconfig", ".vscode/**", "**/.vscode/**",
    ".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml",
    "jenkinsfile", "**/jenkinsfile", "*.jenkinsfile", "**/*.jenkinsfile", ".jenkins/**",
    "bitbucket-pipelines.yml",
    ".gitpod.yml", ".gitpod.dockerfile", ".readthedocs.yaml", ".readthedocs.yml",
    "readthedocs.yml", ".drone.yml", ".woodpecker.yml", ".woodpecker/**", "appveyor.yml",
    ".appveyor.yml", ".cirrus.yml", ".semaphore/**", "codecov.yml", ".codecov.yml",
    "renovate.json", "renovate.json5", ".renovaterc", ".renovaterc.json", ".mailmap",
    ".git-blame-ignore-revs", ".envrc", "**/.envrc", ".husky/**", "lefthook.yml", ".lefthook.yml",
    ".azure-pipelines/**", ".pipelines/**", "bitbucket-pipelines.yaml", ".gitlab-ci.yaml",
)  # fmt: skip


def named_only(paths: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The `paths` upstream's tools obey (`_OBEYED`) that `allowed` does not name exactly."""
    named = {a.lower() for a in allowed if not any(c in a for c in "*?[")}
    return [p for p in paths if _matches(_OBEYED, p) and p.lower() not in named]


def refuse_obeyed(name: str, paths: Iterable[str], allowed: Iterable[str]) -> None:
    """BadInputError for the first file `named_only` finds."""
    found = named_only(paths, allowed)
    if found:
        raise BadInputError(
            f"{name}: touches {found[0]}: a file upstream's forge, CI, editor or git tools run "
            "or obey (dev containers, .lfsconfig, .vscode tasks, pre-commit, other CIs); "
            f"carried only when the entry's `paths` names it (paths = [..., {found[0]!r}]), "
            "which a glob or `adopt` deriving from the PR does not"
        )


# Lines format-patch writes itself, never with a CR: the mail header, and each diff section's
# structure. A CR on one of them means the file was converted (wholly or from some line on).
_STRUCTURE = (b"diff --git ", b"index ", b"@@ ")  # no hunk line starts so: it starts " +-"


def check_bytes(data: bytes, name: str) -> None:
    """A line format-patch writes ending in CR is an editor's doing: refused (in a hunk: kept)."""
    lines = data.split(b"\n")
    blank = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    header = lines[:blank]
    if any(line.endswith(b"\r") for line in header) or any(
        line.endswith(b"\r") and line.startswith(_STRUCTURE) for line in lines[blank:]
    ):
        raise BadInputError(
            f"{name}: has CRLF line endings (an editor or checkout converted it): "
            "re-export it with git format-patch, or run dos2unix on it"
        )


class Hunk(Protocol):
    """One hunk as read (`patchfile.Hunk`); non-UTF-8 bytes kept as surrogates."""

    @property
    def path(self) -> str: ...
    @property
    def old_start(self) -> int: ...
    @property
    def lines(self) -> tuple[str, ...]: ...


def is_utf8(text: str) -> bool:
    """Whether `text` encodes as UTF-8 (non-UTF-8 bytes read with surrogateescape do not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(name: str, hunks: Iterable[Hunk]) -> None:
    """A text hunk holds text: no NUL, no non-UTF-8 bytes added to a UTF-8 file."""
    hunks = list(hunks)
    legacy = {h.path for h in hunks for ln in h.lines if ln[:1] != "+" and not is_utf8(ln)}
    for hunk in hunks:
        for number, line in enumerate(hunk.lines, 1):
            where = f"{name}: {hunk.path}, line {number} of its hunk at line {hunk.old_start}"
            if "\0" in line:
                raise BadInputError(f"{where}: holds a NUL byte (binary data in a text hunk)")
            if line[:1] == "+" and hunk.path not in legacy and not is_utf8(line):
                raise BadInputError(
                    f"{where}: adds bytes that are not UTF-8 to a UTF-8 file (binary data "
                    "in a text hunk); refused"
                )


def utf8(data: bytes, name: str, what: str) -> str:
    """`data` (git's reading of a header, message or path) as text; refused unless UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{name}: {what} is not UTF-8 (byte {exc.start}; Latin-1?): "
                            "re-export it with git format-patch") from None  # fmt: skip


def check_identity(author_name: str, email: str, name: str) -> None:
    """The author as `git mailinfo` reads it; a name git would replace by the email is refused."""
    if not email:
        raise BadInputError(
            f"{name}: no `From:` author line git can read; re-export it with git format-patch"
        )
    if not author_name or author_name == email:
        raise BadInputError(
            f"{name}: its From: line is not `Name <email>` as git reads it (git am would record "
            f"the author as {email}): a name of at most 60 bytes without `@<>` is needed"
        )


_SIGNOFF_VALUE = re.compile(r"^(.*) <(.*)>\s*$")


def signed_off_by(signoff: str, names: Iterable[str], emails: Iterable[str]) -> bool:
    """Whether a `Signed-off-by:` value certifies (DCO App: name AND email, case-insensitive)."""
    match = _SIGNOFF_VALUE.match(signoff.strip())
    names, emails = {n.lower() for n in names}, {e.lower() for e in emails}
    return match is not None and match[1].strip().lower() in names and match[2].lower() in emails


def check(
    name: str, author: str, email: str, signoffs: Iterable[str], changes: Iterable[Change],
    *, author_name: str | None = None,
) -> None:  # fmt: skip
    """Its author's sign-off; only regular text files at safe paths, no workflow files."""
    who = author_name if author_name is not None else author.rsplit(" <", 1)[0]
    values = list(signoffs)
    if not any(signed_off_by(value, [who], [email]) for value in values):
        near = [v for v in values if f"<{email.lower()}>" in v.lower()]
        why = (f"; {near[0]!r} has the email but another name (upstream's DCO App wants the "
               "author's name and email)" if near else "")  # fmt: skip
        raise BadInputError(
            f"{name}: no `Signed-off-by:` from its author {author}{why} "
            "(upstream requires the DCO): git commit --amend -s, then re-export it"
        )
    changes = list(changes)
    for change in changes:
        check_change(change, name)
    refuse_mode_flips(name, changes)


def refuse_mode_flips(name: str, changes: Iterable[Change]) -> None:
    """A path deleted and re-created keeps its mode: else the pair hides a mode change."""
    deleted: dict[str, str] = {}
    for change in changes:
        if change.kind == "delete":
            deleted[change.path] = change.old_mode
        elif (
            change.kind == "create" and deleted.get(change.path, change.new_mode) != change.new_mode
        ):
            raise BadInputError(
                f"{name}: {change.path} is deleted and created again with another mode "
                f"({deleted[change.path]} -> {change.new_mode}): a mode change; only text "
                "edits are carried"
            )


def refuse_mode_against_tree(name: str, changes: Iterable[Change],
                             modes: Mapping[str, str]) -> None:  # fmt: skip
    """A created path the tree holds comes back with the tree's mode (git applies to the tree)."""
    for change in changes:
        had = modes.get(change.path)
        if change.kind == "create" and had is not None and had != change.new_mode:
            raise BadInputError(
                f"{name}: {change.path} is {had} in the tree and the patch creates it again as "
                f"{change.new_mode}: a mode change; only text edits are carried"
            )


def check_change(change: Change, name: str) -> None:
    """One file of git's list: see `check`."""
    path = change.path
    for side in (change.old_path, path):
        check_path(side, name)
    if _matches(_WORKFLOWS, change.old_path, path):
        raise BadInputError(
            f"{name}: touches {path}: a GitHub Actions workflow, never carried (it would run "
            "with the fork's and upstream's credentials; an entry's `paths` cannot allow it): "
            "drop that commit, or send it by hand"
        )
    if _matches(_CI_FILES, change.old_path, path):
        raise BadInputError(
            f"{name}: touches {path}: a file upstream's CI, forge or git runs or obeys "
            "(actions, the scripts workflows call, CODEOWNERS, .gitattributes, .gitmodules), "
            "never carried as workflow files are not (an entry's `paths` cannot allow it): "
            "drop that commit, or send it by hand"
        )
    if change.kind in ("rename", "copy"):
        raise BadInputError(f"{name}: git reads a {change.kind} of {change.old_path} to {path}: "
                            f"renames refused; only text edits are carried")  # fmt: skip
    if change.old_mode and change.new_mode:
        raise BadInputError(
            f"{name}: {path} changes a file mode ({change.old_mode} -> {change.new_mode}); "
            "only text edits are carried"
        )
    for mode in (change.old_mode, change.new_mode, change.index_mode):
        if mode and mode not in _SAFE_MODES:
            kind = {"120000": "a symlink", "160000": "a submodule"}.get(mode, "a mode")
            raise BadInputError(f"{name}: {path} is {kind} ({mode}); refused")
    if change.binary:
        raise BadInputError(f"{name}: {path} carries binary data; only text edits are carried")


def check_path(path: str, name: str) -> None:
    """Relative, normalised, inside the tree, not in `.git/`."""
    parts = path.split("/")
    if (
        not path or path.startswith("/") or "\\" in path or posixpath.normpath(path) != path
        or any(p in ("", ".", "..") for p in parts) or any(p.lower() == ".git" for p in parts)
    ):  # fmt: skip
        raise BadInputError(f"{name}: refusing path {path!r} (absolute, not normalised, or .git)")


def _matches(patterns: Iterable[str], *paths: str) -> bool:
    """Whether a glob in `patterns` matches one of `paths`, ignoring case."""
    return any(_glob_re(g, re.IGNORECASE).match(p) for g in patterns for p in paths)


def _glob_re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`**` spans directories, `*` and `?` stay inside one path component."""
    parts = re.split(r"(\*\*|\*|\?)", pattern)
    out = "".join({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(t, re.escape(t)) for t in parts)
    return re.compile(out + r"\Z", flags)


def outside(paths: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The `paths` that no glob in `allowed` matches."""
    patterns = [_glob_re(p) for p in allowed]
    return [p for p in paths if not any(r.match(p) for r in patterns)]


def refuse_special(name: str, found: list[tuple[str, str]]) -> None:
    """`found`: git's (path, what) for the symlinks, submodules and mode changes of a built tree."""
    if found:
        path, what = found[0]
        raise BadInputError(
            f"{name}: its patches change {path}, {what} in the tree they apply to; refused "
            "(only text edits of regular files are carried)"
        )
