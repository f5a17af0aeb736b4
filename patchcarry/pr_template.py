"""Upstream's PR template, read from its default branch and filled in as GitHub fills it."""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from patchcarry import git
from patchcarry.errors import GitReadError

# GitHub's places for one PR template, in its order (`.github/`, the root, `docs/`), any case;
# without one, the owner's `.github` repository's.
FOLDERS = (".github", "", "docs")
_NAME_RE = re.compile(r"pull_request_template(?:\.md|\.txt)?", re.IGNORECASE | re.ASCII)
REF = git.own_ref("template", "{branch}")
OWNER_REF = git.own_ref("owner-template", "{branch}")
OWNER_REPO = ".github"  # the owner's repository of default community health files

_WHAT_RE = re.compile(r"^#+[ \t]*what does this pr do\??[ \t]*$", re.IGNORECASE | re.MULTILINE)
_COMMENT_LINE_RE = re.compile(r"(?:[ \t]*<!--.*?-->[ \t]*\n)+", re.DOTALL)
_BOX_RE = re.compile(r"^(?P<lead>[ \t]*[-*+] \[) \](?P<text>.*)$", re.MULTILINE)


def fetch(cache: Path, branch: str) -> str | None:
    """The default branch's tip in the check's cache (commit and trees); None without one."""
    ref = REF.format(branch=branch)
    refused = git.fetch_partial("origin", [f"+refs/heads/{branch}:{ref}"], depth=1, cwd=cache)
    return ref if refused is None else None


def fetch_owner(cache: Path, url: str, branch: str) -> str | None:
    """The owner's `.github` `branch` tip into the cache with its blobs; None when unreadable."""
    ref = OWNER_REF.format(branch=branch)
    refused = git.fetch_partial(url, [f"+refs/heads/{branch}:{ref}"], depth=1, cwd=cache,
                                object_filter="blob:limit=262144")  # fmt: skip
    return ref if refused is None else None


class Places:
    """What GitHub's places for a PR template hold at `rev` (the root, `.github/`, `docs/`):
    one `ls-tree` lists them all (one more for a folder spelled in another case), and the
    blobs wanted of them come in one `cat-file --batch` (the template's reads were five gits,
    a file's two more)."""

    def __init__(self, cache: Path, rev: str) -> None:
        self.cache, self.rev = cache, rev
        self.listed = set(FOLDERS)  # folders whose own entries `entries` holds ("": the root)
        self.entries = git.entries_in(rev, [f for f in FOLDERS if f], cwd=cache)
        self._read: dict[str, bytes] = {}
        self._tried: set[str] = set()  # paths `load` asked for, read or not

    def _list(self, folder: str) -> None:
        """Add `folder`'s own entries (a folder spelled in another case) to the listing."""
        more = git.entries_in(self.rev, [folder], cwd=self.cache) if self.entries else None
        if more is not None and self.entries is not None:
            self.listed.add(folder)
            self.entries.update(more)

    def _names(self, folder: str) -> list[str]:
        """The entry names of `folder` ("" for the root), in git's order; none if not a tree."""
        prefix = f"{folder}/" if folder else ""
        found = (path[len(prefix) :].split("/")[0] for path in self.entries or {}
                 if path.startswith(prefix))  # fmt: skip
        return list(dict.fromkeys(found))

    def template_path(self) -> str | None:
        """The template's path: the first of GitHub's places that holds one (None: none)."""
        for folder in FOLDERS:
            real = _spelled(self._names(""), folder) if folder else ""
            if real is None:
                continue
            if real not in self.listed:
                self._list(real)
            for name in sorted(self._names(real)):
                path = f"{real}/{name}" if real else name
                if _NAME_RE.fullmatch(name) and self._entry(path)[1] != "tree":
                    return path  # a file (the folder is not one)
        return None

    def _entry(self, path: str) -> tuple[str, str, str]:
        return (self.entries or {}).get(path, ("", "", ""))

    def load(self, paths: Collection[str | None]) -> None:
        """Read the blobs at `paths` (those that are files here) in one `cat-file --batch`; one
        git cannot read is left to `file`, which asks for it alone and says what git said."""
        wanted = {p: self._entry(p)[2] for p in paths
                  if p and p not in self._tried and self._entry(p)[1] == "blob"}  # fmt: skip
        self._tried.update(wanted)
        try:
            blobs = git.read_blobs(list(wanted.values()), cwd=self.cache)
        except GitReadError:
            return
        self._read.update({p: blobs[oid] for p, oid in wanted.items() if oid in blobs})

    def file(self, path: str) -> bytes | None:
        """`path`'s content at `rev`, as `git.show_file` answers it (None: absent)."""
        self.load([path])
        if path in self._read:
            return self._read[path]
        if not self.holds(path):
            return None
        return git.show_file(self.rev, path, cwd=self.cache)

    def holds(self, path: str) -> bool:
        """Whether `path` is in `rev`'s tree, by the listing (True where it cannot tell)."""
        known = self.entries is not None and path.rpartition("/")[0] in self.listed
        return not known or path in (self.entries or {})

    def template(self) -> str | None:
        """The template, from the first of GitHub's places that holds one."""
        path = self.template_path()
        data = self.file(path) if path is not None else None
        if data is None:
            return None
        return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _spelled(names: list[str], folder: str) -> str | None:
    """The first of `names` that is `folder` in any case."""
    return next((n for n in names if n.lower() == folder), None)


def read(cache: Path, rev: str) -> str | None:
    """The template at `rev`, from the first of GitHub's places that holds one."""
    return Places(cache, rev).template()


_LINKED_RE = re.compile(
    r"^(?P<label>[ \t]*(?:\*\*)?linked issues?:?(?:\*\*)?:?)[ \t]*(?:<!--.*?-->)?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


def fill(template: str, what: str, *, ticks: Collection[str] = (), linked: str = "") -> str:
    """`template` with `what` under "What does this PR do?" (on top without it), boxes whose
    text holds one of `ticks` ticked, "Linked issue:" given `linked`; nothing else changes."""
    if linked:
        template = _LINKED_RE.sub(lambda m: f"{m.group('label')} {linked}", template, count=1)

    def box(match: re.Match[str]) -> str:
        text = match.group("text")
        ticked = any(t.lower() in text.lower() for t in ticks)
        return f"{match.group('lead')}{'x' if ticked else ' '}]{text}"

    template = _BOX_RE.sub(box, template.strip("\n"))
    heading = _WHAT_RE.search(template)
    if heading is None:
        return f"{what.strip()}\n\n{template}\n"
    at = heading.end() + 1 if template[heading.end() : heading.end() + 1] == "\n" else heading.end()
    placeholder = _COMMENT_LINE_RE.match(template, at)
    at = placeholder.end() if placeholder else at
    return f"{template[:at].rstrip()}\n\n{what.strip()}\n\n{template[at:].lstrip()}\n"
