"""Facts that live in one place, read from the source: a sha is cut only by `git.sha`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "patchcarry"
# i49 rewrites these two in parallel; their cuts go to `short` once both branches are merged
NOT_YET: set[str] = set()


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


# git's own words, as it prints them: read inside git/ alone (its typed results say them)
GIT_WORDS = ("shallow update not allowed", "corrupt patch", "No valid patches", "patch failed",
             "succeeded at")  # fmt: skip


def test_only_the_git_door_reads_git_s_text_or_catches_its_failures() -> None:
    """Outside git/ (and proc, which runs every program, and the face that prints any
    failure in one line) no code catches proc's CalledProcessError, reads a failure's
    `.err`, or matches what git prints: the door says it as `GitError`, `Pushed`, `Applied`."""
    door = ("git/", "proc.py", "error_handler.py")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name.startswith(door):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            named = isinstance(node, ast.Name | ast.alias) and "CalledProcessError" in (
                getattr(node, "id", None) or getattr(node, "name", "")
            )
            reads_err = isinstance(node, ast.Attribute) and node.attr == "err"
            text = node.value if isinstance(node, ast.Constant) else None
            words = isinstance(text, str) and any(w in text for w in GIT_WORDS)
            if named or reads_err or words:
                found.append(f"{name}:{getattr(node, 'lineno', '?')}")
    assert found == []


def test_check_s_statuses_and_verdicts_are_compared_as_their_enums() -> None:
    """`report.Status` and `report.Verdict` carry what each word means (ok, landed, may be
    retired); a word compared or copied elsewhere would drift from it."""
    words = {"landed, changed since", "does not apply", "not landed"}
    copied = [
        f"{p.relative_to(PACKAGE)}:{node.lineno}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE) != Path("check/report.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Constant) and node.value in words
    ]
    assert copied == []


def test_the_tool_s_own_refs_are_named_in_one_place() -> None:
    """`git.own_ref`: a ref spelled by hand elsewhere is one a cache clean-up would miss."""
    spelled = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "refs/patchcarry/" in p.read_text() and str(p.relative_to(PACKAGE)) not in NOT_YET
    )
    assert spelled == ["git/repo.py"]
