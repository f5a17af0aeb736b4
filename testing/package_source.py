"""The package's modules parsed once a process, for the tests that read its code (a dozen of
them walk every module; each parsed the whole package again). Read-only: never change a tree."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def tree(path: Path) -> ast.Module:
    """`path`'s module."""
    return ast.parse(path.read_text())


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of `path`'s module, in `ast.walk`'s order."""
    return tuple(ast.walk(tree(path)))
