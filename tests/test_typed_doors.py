"""Facts that live in one place, read from the source: a sha is cut only by `git.sha`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "patchcarry"
# i49 rewrites these two in parallel; their cuts go to `short` once both branches are merged
NOT_YET = {"check/landing.py", "check/history.py"}


def _hand_cuts(path: Path) -> list[str]:
    """`x[:7]`, `x[:12]` (any short length) where `x` is not a hash digest of the tool's own."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        cut = node.slice if isinstance(node, ast.Subscript) else None
        if not (isinstance(cut, ast.Slice) and cut.lower is None and cut.step is None):
            continue
        if not (isinstance(cut.upper, ast.Constant) and cut.upper.value in (7, 8, 10, 12)):
            continue
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "hexdigest":
            continue
        found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_a_sha_is_cut_only_by_its_type() -> None:
    skip = {"git/sha.py", *NOT_YET}
    paths = [p for p in sorted(PACKAGE.rglob("*.py")) if str(p.relative_to(PACKAGE)) not in skip]
    assert [cut for p in paths for cut in _hand_cuts(p)] == []


def test_the_tool_s_markers_are_spelled_in_one_module() -> None:
    """Written and read back by `markers` alone: a second spelling drifts from the first."""
    spelled = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "<!-- patchcarry" in p.read_text() or "patchcarry:begin" in p.read_text()
    )
    assert spelled == ["markers.py"]


def test_messages_name_the_token_s_variable_as_tokens_reads_it() -> None:
    """GH_TOKEN, GITHUB_TOKEN or an Enterprise Server's: `tokens.variable()` says which; a
    message that spells one by hand names the wrong one for the others."""
    readers = {"tokens.py", "proc.py", "git/env.py"}  # where the variables are read or hidden
    spelled = [
        f"{p.relative_to(PACKAGE)}:{node.lineno}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if str(p.relative_to(PACKAGE)) not in readers
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Constant) and "GITHUB_TOKEN" in str(node.value)
    ]
    assert spelled == []
