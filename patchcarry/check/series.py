"""An entry's patches together on its base: the tree and net diff identity and landing use."""

from __future__ import annotations

import tempfile
from pathlib import Path

from patchcarry import git
from patchcarry.patchfile import Patch


def series_files(repo: Path, base: str, patches: list[Patch]) -> list[tuple[str, str]] | None:
    """The change `patches` make on `base`, one (path, diff section) per file (None: no apply),
    from the tree they make together on a scratch index."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-series-") as tmp:
        index = Path(tmp) / "index"
        git.read_tree(base, index=index, cwd=repo)
        for patch in patches:
            if not git.apply_to_index(
                patch.path, index=index, cwd=repo, reverse=False, check=False
            ):
                return None
        tree = git.write_tree(index=index, cwd=repo)
    files = sorted({f for p in patches for f in p.files})
    return git.diff_files(base, tree, files, cwd=repo)


def applies(repo: Path, commit: str, diff: Path, *, reverse: bool = False) -> bool:
    """Whether `diff` applies to `commit`'s tree (`reverse`: is in it), on a scratch index."""
    with tempfile.TemporaryDirectory(prefix="patchcarry-applies-") as tmp:
        index = Path(tmp) / "index"
        git.read_tree(commit, index=index, cwd=repo)
        return git.apply_to_index(diff, index=index, cwd=repo, reverse=reverse, check=True)


def reverse_applies(repo: Path, commit: str, diff: Path) -> bool:
    return applies(repo, commit, diff, reverse=True)
