"""What a patch may carry, checked once when it is parsed (so at `check` time, before any write).

A patch is pushed to a fork and opened upstream, and `check` writes its paths into a temp
tree: every path must be relative, normalised, outside `.git/`, and the same in `diff --git`
and `---/+++`; no symlinks, submodules, mode changes, renames or binary data; a `From:` author
and a `Signed-off-by:` (upstream requires the DCO); UTF-8 text with LF line endings. Which
paths an entry may touch is the manifest's (`allowed`, below). Pure Python.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from patchcarry.errors import BadInputError

DEFAULT_PATHS = ("megatron/**", "tests/**")
_SAFE_MODES = ("100644", "100755")
_REFUSED_HEADERS = {
    "old mode ": "changes a file mode",
    "new mode ": "changes a file mode",
    "similarity index": "renames or copies a file",
    "rename from ": "renames a file",
    "copy from ": "copies a file",
    "GIT binary patch": "carries binary data",
    "Binary files ": "carries binary data",
}
_MODE_RE = re.compile(r"^(?:new file mode|deleted file mode|index \S+) (\d{6})$")
_EMAIL_RE = re.compile(r"<([^<>\s]+@[^<>\s]+)>")


def decode(data: bytes, name: str) -> str:
    """The patch text: UTF-8 only (git format-patch writes UTF-8), LF line endings only."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(
            f"{name}: not UTF-8 (byte {exc.start}; Latin-1?): re-export it with git format-patch"
        ) from None
    if "\r" in text:
        raise BadInputError(
            f"{name}: has CRLF line endings (an editor or checkout converted it): "
            "re-export it with git format-patch, or run dos2unix on it"
        )
    return text


def check_header(text: str, name: str) -> None:
    """A `From:` author and a `Signed-off-by:` from that author in the commit message."""
    head, _, _ = text.partition("\n\n")
    author = re.search(r"^From: (.+)$", head, re.MULTILINE)
    if not author or not author.group(1).strip():
        raise BadInputError(f"{name}: no `From:` author line; re-export it with git format-patch")
    message = text.split("\n---\n", 1)[0]
    signoffs = re.findall(r"^Signed-off-by: (.+)$", message, re.MULTILINE)
    email = _EMAIL_RE.search(author.group(1))
    signed = [s for s in signoffs if email is None or email.group(1) in s]
    if not signed:
        raise BadInputError(
            f"{name}: no `Signed-off-by:` from its author {author.group(1).strip()} "
            "(upstream requires the DCO): git commit --amend -s, then re-export it"
        )


def check_path(path: str, name: str) -> None:
    """Relative, normalised, inside the tree, not in `.git/`."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or posixpath.normpath(path) != path
        or any(p in ("", ".", "..") for p in parts)
        or any(p.lower() == ".git" for p in parts)
    ):
        raise BadInputError(f"{name}: refusing path {path!r} (absolute, not normalised, or .git)")


def check_diff_headers(text: str, name: str) -> None:
    """Each file's header: safe, consistent paths and nothing but plain text edits."""
    in_header, path = False, ""
    for line in text.splitlines():
        if line.startswith("diff --git "):
            match = re.match(r"^diff --git a/(\S+) b/(\S+)$", line)
            if not match:
                raise BadInputError(f"{name}: bad diff header {line!r}")
            old, new = match.groups()
            check_path(old, name)
            check_path(new, name)
            if old != new:
                raise BadInputError(f"{name}: diff --git names {old} and {new}: renames refused")
            in_header, path = True, new
            continue
        if not in_header:
            continue
        if line.startswith("@@"):
            in_header = False
            continue
        for prefix, why in _REFUSED_HEADERS.items():
            if line.startswith(prefix):
                raise BadInputError(f"{name}: {path} {why}; only text edits are carried")
        mode = _MODE_RE.match(line)
        if mode and mode.group(1) not in _SAFE_MODES:
            kind = {"120000": "a symlink", "160000": "a submodule"}.get(mode.group(1), "a mode")
            raise BadInputError(f"{name}: {path} is {kind} ({mode.group(1)}); refused")
        for marker, side in (("--- ", "a/"), ("+++ ", "b/")):
            if line.startswith(marker):
                named = line[len(marker) :]
                if named != "/dev/null" and named != f"{side}{path}":
                    raise BadInputError(
                        f"{name}: diff --git names {path} but `{line}` names another file"
                    )


def _glob_re(pattern: str) -> re.Pattern[str]:
    """`**` spans directories, `*` and `?` stay inside one path component."""
    out = []
    for token in re.split(r"(\*\*|\*|\?)", pattern):
        out.append({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(token, re.escape(token)))
    return re.compile("".join(out) + r"\Z")


def outside(paths: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """The `paths` that no glob in `allowed` matches."""
    patterns = [_glob_re(p) for p in allowed]
    return [p for p in paths if not any(r.match(p) for r in patterns)]
