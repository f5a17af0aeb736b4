#!/usr/bin/env python3
"""Apply each manifest entry's patches to a copy of a Megatron tree; print the files to lint.

Usage: patched_tree.py DEST. Run with the repository's .venv (it imports patchcarry and finds
the installed megatron-core). The tree is MEGATRON_SRC when set, else the installed
megatron-core; entries whose manifest says `offline` are skipped on the installed tree. Prints
one absolute path per line: each touched `.py` file of the patched copy DEST/<entry>/..., so
that `scripts/hooks/upstream-lint` can run upstream's linters on the files as upstream will
see them after the merge.
"""

from __future__ import annotations

import sys
from pathlib import Path

from patchcarry import manifest
from patchcarry.errors import FatalError
from patchcarry.runtime import tree as megatron_tree


def _note(message: str) -> None:
    print(f"upstream-lint: {message}", file=sys.stderr)


def prepare(dest: Path) -> list[Path]:
    upstream = megatron_tree.upstream_tree_from_env()
    src = upstream or megatron_tree.installed_tree()
    _note(f"patching copies of {megatron_tree.tree_label(src)}")
    files: list[Path] = []
    for entry in manifest.load().entries:
        if upstream is None and entry.offline:
            _note(f"{entry.name}: skipped on the installed tree ({entry.offline})")
            continue
        patches = entry.patches(with_tests=True)
        try:
            tree = megatron_tree.prepared_copy(src, patches, dest / entry.name)
        except FatalError:
            if not entry.tests:
                raise
            # The installed package has no tests/: test patches that edit upstream test files
            # need an upstream tree. Lint the fix alone and say what was not linted.
            patches = entry.patches(with_tests=False)
            tree = megatron_tree.prepared_copy(src, patches, dest / f"{entry.name}-fix")
            _note(f"{entry.name}: test patches not linted here (set MEGATRON_SRC to lint them)")
        for patch in patches:
            for rel in patch.files:
                if rel.endswith(".py") and (tree / rel).is_file():
                    files.append(tree / rel)
    return sorted(set(files))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        for path in prepare(Path(argv[0]).resolve()):
            print(path)
    except FatalError as exc:
        _note(str(exc))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
