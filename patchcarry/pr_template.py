"""Upstream's PR template, read from its default branch and filled in as GitHub fills it."""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from patchcarry import git

# GitHub's places for one PR template, in its order (`.github/`, the root, `docs/`), any case;
# without one, the owner's `.github` repository's.
FOLDERS = (".github", "", "docs")
_NAME_RE = re.compile(r"pull_request_template(?:\.md|\.txt)?", re.IGNORECASE)
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


def read(cache: Path, rev: str) -> str | None:
    """The template at `rev`, from the first of GitHub's places that holds one."""
    root = git.names_in(rev, "", cwd=cache) or []
    for folder in FOLDERS:
        real = next((n for n in root if n.lower() == folder), None) if folder else ""
        if real is None:
            continue
        for name in sorted(git.names_in(rev, real, cwd=cache) or []):
            path = f"{real}/{name}" if real else name
            if _NAME_RE.fullmatch(name) and git.names_in(rev, path, cwd=cache) is None:
                data = git.show_file(rev, path, cwd=cache)  # a file (the folder is not one)
                if data is not None:
                    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    return None


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
