"""Builds small fixture "upstream Megatron-LM" repositories with real git (no mocks).

    repo = make_upstream(tmp_path)            # bare repo + scratch work clone
    repo.url                                  # file:// URL, usable as `--upstream`
    repo.bare                                 # the bare repo path (also usable as `--upstream`)
    repo.base_commit                          # pinned base: both real patches apply clean here
    repo.dev_tip                              # `dev`: adds lines ABOVE both hunks (offset, drift
                                              #   without overlap)
    repo.make_conflicting_tip()               # new `dev` commit that edits the lines next to the
                                              #   random.py insertion -> conflict; returns sha
    repo.make_fuzzy_tip()                     # edits only the outermost context line -> fuzz
    repo.add_pull_head(6117, FIX_0001)        # refs/pull/6117/head = base + that patch (a Path
                                              #   or the patch text); merge_dev=True makes the head
                                              #   a merge of dev into the branch, like GitHub's
    repo.copy(dest)                           # cheap copy of the bare repo (session template ->
                                              #   per-test mutable repo)
    write_manifest(tmp_path, base_commit=repo.base_commit, overrides={...})
                                              # series.toml + copies of the REAL patch files

Every commit pins author, committer and dates, so hashes are the same on every run. Each file
an existing real patch modifies (`megatron/core/tensor_parallel/random.py` for 0001,
`.../transformer_layer.py` for 0003, the upstream test files the test patches extend) is
synthetic: filler lines with the exact old-side lines of that patch placed at the line numbers
its hunks name, so the real patches apply unchanged. Nothing here touches the network.
"""

from __future__ import annotations

import dataclasses
import shutil
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from patchcarry import git
from patchcarry.manifest import DEFAULT_MANIFEST
from patchcarry.patchfile import load as load_patch
from testing.once import copy_tree

PATCHES_DIR = DEFAULT_MANIFEST.parent
FIX_0001 = PATCHES_DIR / "0001-Fix-cross-iteration-gradient-retention-in-Checkpoint.patch"
FIX_0003 = PATCHES_DIR / "0003-Fix-inter-iteration-activation-retention-in-HyperCon.patch"
RANDOM_PY = "megatron/core/tensor_parallel/random.py"
LAYER_PY = "megatron/core/transformer/transformer_layer.py"

# Pinned identity and dates: stable hashes across runs and machines.
PINNED_ENV = {
    "GIT_AUTHOR_NAME": "Fixture Upstream",
    "GIT_AUTHOR_EMAIL": "upstream@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "Fixture Upstream",
    "GIT_COMMITTER_EMAIL": "upstream@example.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
}
_DRIFT_LINES = ["# dev: new import block added above the patched code", "import os", ""]
# The fixture's PR template, on its default branch only (where GitHub reads it), in the shape
# of Megatron-LM's: the author's own box first, the "What" heading with its placeholder, the
# linked issue, the pre-check boxes.
PR_TEMPLATE_PATH = ".github/pull_request_template.md"
COPY_PR_BOT_PATH = ".github/copy-pr-bot.yaml"
PR_TEMPLATE = """- [ ] I, the PR author, have personally reviewed every line of this PR.

# What does this PR do?
<!-- Add a one line overview of what this PR aims to accomplish. -->

## Issue tracking

Linked issue: <!-- e.g. Fixes #1234 / Related to #1234 -->

## Contribution process

### Pre-checks

- [ ] I have added relevant unit tests
- [ ] I have added relevant functional tests
- [ ] I have added relevant documentation

All PRs start as **draft**.
"""


def _g(*args: str, cwd: Path, stdin: str | None = None) -> str:
    _, out, _ = git.git(*args, cwd=cwd, env_extra=PINNED_ENV, stdin=stdin)
    return out.strip()


def _patched_paths() -> dict[str, Path]:
    """Each existing file a real patch modifies -> the first patch (in name order) that does."""
    paths: dict[str, Path] = {}
    for patch in sorted(PATCHES_DIR.glob("*.patch")):
        for hunk in load_patch(patch).hunks:
            if hunk.old_start > 0:  # a new file's hunk is "-0,0"
                paths.setdefault(hunk.path, patch)
    return paths


def synthetic_file(patch: Path, path: str, *, tail: int = 20) -> str:
    """Filler text holding each hunk's old-side lines of `patch` for `path` at their line."""
    lines: list[str] = []
    for hunk in load_patch(patch).hunks:
        if hunk.path != path:
            continue
        while len(lines) < hunk.old_start - 1:
            lines.append(f"# filler line {len(lines) + 1}")
        lines.extend(t[1:] for t in hunk.lines if not t.startswith("+"))
    lines.extend(f"# trailing filler {i}" for i in range(tail))
    return "\n".join(lines) + "\n"


@dataclasses.dataclass
class UpstreamRepo:
    """A bare fixture upstream and its work clone (where commits are made, then pushed)."""

    bare: Path
    work: Path
    base_commit: str

    @property
    def url(self) -> str:
        return self.bare.resolve().as_uri()

    @property
    def dev_tip(self) -> str:
        return _g("rev-parse", "refs/heads/dev", cwd=self.bare)

    def copy(self, dest: Path) -> UpstreamRepo:
        """A separate copy (bare + work) under `dest`, safe to mutate."""
        dest.mkdir(parents=True, exist_ok=True)
        copy_tree(self.bare, dest / "upstream.git")
        copy_tree(self.work, dest / "work")
        _g("remote", "set-url", "origin", str(dest / "upstream.git"), cwd=dest / "work")
        return UpstreamRepo(dest / "upstream.git", dest / "work", self.base_commit)

    def _commit_on_dev(self, path: str, edit: Mapping[str, str], message: str) -> str:
        _g("checkout", "-q", "-B", "dev", self.dev_tip, cwd=self.work)
        file = self.work / path
        text = file.read_text()
        for old, new in edit.items():
            assert old in text, f"fixture: {old!r} not in {path}"
            text = text.replace(old, new, 1)
        file.write_text(text)
        _g("commit", "-q", "-am", message, cwd=self.work)
        _g("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=self.work)
        return self.dev_tip

    def make_conflicting_tip(self) -> str:
        """Move `dev` to a commit that rewrites the lines around the random.py insertion."""
        return self._commit_on_dev(
            RANDOM_PY,
            {"\n\n        _unset_checkpointing()\n": "\n        self._cleanup(detached_inputs)\n"},
            "dev: restructure CheckpointFunction.backward tail",
        )

    def make_fuzzy_tip(self) -> str:
        """Move `dev` to a commit that edits only the hunk's first context line."""
        return self._commit_on_dev(
            RANDOM_PY,
            {"backward(outputs, args)\n": "backward(outputs, args)  # annotated\n"},
            "dev: annotate backward call",
        )

    def add_pull_head(self, number: int, patch: Path | str, *, merge_dev: bool = False) -> str:
        """Create refs/pull/N/head: base + `patch` (a Path or format-patch text); optionally
        a merge of `dev` into that branch (first parent = the branch, like GitHub's heads)."""
        text = patch.read_text() if isinstance(patch, Path) else patch
        _g("checkout", "-q", "-B", f"pr-{number}", self.base_commit, cwd=self.work)
        _g("am", "-q", "--committer-date-is-author-date", cwd=self.work, stdin=text)
        if merge_dev:
            _g(
                "merge",
                "-q",
                "--no-ff",
                "--no-edit",
                "-m",
                f"Merge branch 'dev' into pr-{number}",
                self.dev_tip,
                cwd=self.work,
            )
        _g("push", "-q", "-f", "origin", f"HEAD:refs/pull/{number}/head", cwd=self.work)
        return _g("rev-parse", "HEAD", cwd=self.work)


def make_upstream(
    tmp_path: Path,
    *,
    random_py: str | None = None,
    layer_py: str | None = None,
    extra_files: Mapping[str, str] | None = None,
) -> UpstreamRepo:
    """Build the fixture upstream under `tmp_path` (see the module docstring). `extra_files`
    ({path: text}) are added to the base commit, e.g. a large file a cheap fetch must skip."""
    work, bare = tmp_path / "work", tmp_path / "upstream.git"
    git.init(work)
    _g("checkout", "-q", "-b", "dev", cwd=work)
    files = {path: synthetic_file(patch, path) for path, patch in _patched_paths().items()}
    if random_py is not None:
        files[RANDOM_PY] = random_py
    if layer_py is not None:
        files[LAYER_PY] = layer_py
    files.update({"README.md": "fixture upstream\n", **(extra_files or {})})
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _g("add", "-A", cwd=work)
    _g("commit", "-q", "-m", "base: pinned upstream commit", cwd=work)
    base = _g("rev-parse", "HEAD", cwd=work)
    for path in (RANDOM_PY, LAYER_PY):  # dev tip: lines added above both hunks
        file = work / path
        lines = file.read_text().split("\n")
        file.write_text("\n".join(lines[:5] + _DRIFT_LINES + lines[5:]))
    (work / "README.md").write_text("fixture upstream, dev\n")
    _g("commit", "-q", "-am", "dev: add imports above the patched code", cwd=work)
    _g("init", "-q", "--bare", str(bare), cwd=tmp_path)
    _g("remote", "add", "origin", str(bare), cwd=work)
    _g("checkout", "-q", "-b", "main", base, cwd=work)  # the default branch: the template
    (work / PR_TEMPLATE_PATH).parent.mkdir(parents=True)
    (work / PR_TEMPLATE_PATH).write_text(PR_TEMPLATE)
    # like Megatron-LM's: copy-pr-bot vets PR heads (`/ok to test <sha>`)
    (work / COPY_PR_BOT_PATH).write_text("enabled: true\nauto_sync_draft: false\n")
    _g("add", "-A", cwd=work)
    _g("commit", "-q", "-m", "main: the pull request template", cwd=work)
    _g("checkout", "-q", "dev", cwd=work)
    _g("push", "-q", "origin", "dev", "main", cwd=work)
    # Like Megatron-LM: the default branch is `main` (behind `dev`); a fork made with
    # default_branch_only holds just that one.
    _g("symbolic-ref", "HEAD", "refs/heads/main", cwd=bare)
    return UpstreamRepo(bare, work, base)


DRIFT_OFFSET = len(_DRIFT_LINES)  # the offset each patch applies with at the fixture's dev tip


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_manifest(
    tmp_path: Path,
    *,
    base_commit: str,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    entries: list[Mapping[str, Any]] | None = None,
) -> Path:
    """Write `tmp_path/patches/series.toml` + copies of our real patch files; return its path.

    Starts from the real manifest with `base_commit` replaced. `overrides` maps an entry name
    to keys to set (a value of None deletes the key); `entries`, if given, replaces the entry
    list (each a dict of keys). Patch files named in entries must be copied/written by the
    caller unless they are the real ones (all real patches are copied).
    """
    real = tomllib.loads(DEFAULT_MANIFEST.read_text())
    dest = tmp_path / "patches"
    dest.mkdir(parents=True, exist_ok=True)
    for patch in PATCHES_DIR.glob("*.patch"):
        shutil.copy(patch, dest / patch.name)
    defaults = {**real["defaults"], "base_commit": base_commit}
    raw = [dict(e) for e in (entries if entries is not None else real["entry"])]
    for entry in raw:
        for key, value in (overrides or {}).get(entry.get("name", ""), {}).items():
            if value is None:
                entry.pop(key, None)
            else:
                entry[key] = value
    out = ["[defaults]", *(f"{k} = {_toml_value(v)}" for k, v in defaults.items()), ""]
    for entry in raw:
        out += ["[[entry]]", *(f"{k} = {_toml_value(v)}" for k, v in entry.items()), ""]
    (dest / "series.toml").write_text("\n".join(out))
    return dest / "series.toml"
