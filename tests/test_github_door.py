"""GitHub's JSON is read in one place (issue 45, item 2): the door (`github`, `github_types`)
reads each answer into the tool's own records; past it, code reads attributes. A key read by
hand elsewhere is an answer read twice, and a malformed one ends in a traceback there."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from patchcarry import github_types
from testing.package_source import tree

PACKAGE = Path(__file__).resolve().parent.parent / "patchcarry"
DOOR = {"github.py", "github_types.py"}
RECORDS = [v for v in vars(github_types).values() if dataclasses.is_dataclass(v)]
# every key of GitHub's answers a record reads
KEYS = {key for r in RECORDS for f in dataclasses.fields(r) for key in github_types.path_of(f)}
# keys that are words of the tool's own data too (manifest fields, evidence and plan JSON):
# banned where a module takes GitHub's answers (it imports the door or `pulls`), not elsewhere
SHARED = {"name", "status", "label", "title", "fork", "source", "protected"}
# ... and where such a module reads its own data by that word: a manifest's defaults, the
# fields a PATCH sends, the judged rules, the revision list's own line (a regex group)
OWN = {("adopt/run.py", "fork"), ("commands/resubmit.py", "name"), ("resubmit/execute.py", "title"),
       ("resubmit/gate.py", "protected"), ("resubmit/revisions.py", "head")}  # fmt: skip
NEAR = ("patchcarry.github", "patchcarry.pulls")


def _near(tree: ast.AST) -> bool:
    """Whether the module imports the door or the readers of pulls."""
    names = {f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             for a in n.names}  # fmt: skip
    return any(name.startswith(NEAR) for name in names)


def _key_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """`x.get("key")` and `x["key"]` (read, not written) for a key of GitHub's answers."""
    keys = KEYS if _near(tree) else KEYS - SHARED
    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args:
            key = node.args[0]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
        if isinstance(key, ast.Constant) and key.value in keys:
            found.append((node.lineno, key.value))
    return found


def test_the_records_name_the_keys_the_tool_reads() -> None:
    assert {"login", "full_name", "label", "clone_url", "contexts", "check_runs"} <= KEYS


def test_github_s_json_is_read_only_at_the_door() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name in DOOR:
            continue
        for line, key in _key_reads(tree(path)):
            if (name, key) not in OWN:
                found.append(f"{name}:{line}: {key!r}")
    assert found == []
