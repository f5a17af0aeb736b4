"""Facts that live in one place, read from the source: a sha is cut only by `git.sha`."""

from __future__ import annotations

import ast
from pathlib import Path

from testing.package_source import nodes

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "patchcarry"
# i49 rewrites these two in parallel; their cuts go to `short` once both branches are merged
NOT_YET: set[str] = set()


def _hand_cuts(path: Path) -> list[str]:
    """`x[:7]`, `x[:12]` (any short length) where `x` is not a hash digest of the tool's own."""
    found = []
    for node in nodes(path):
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
        for node in nodes(p)
        if isinstance(node, ast.Constant) and "GITHUB_TOKEN" in str(node.value)
    ]
    assert spelled == []


# git's own words, as it prints them: read inside git/ alone (its typed results say them)
GIT_WORDS = ("shallow update not allowed", "corrupt patch", "No valid patches", "patch failed",
             "succeeded at", "[remote rejected]", "[rejected]", "stale info", "fetch first",
             "non-fast-forward", "atomic push failed", "no commits selected")  # fmt: skip


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
        for node in nodes(path):
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
        for node in nodes(p)
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


def test_a_push_s_result_is_read_per_ref_at_the_git_door(tmp_path: Path) -> None:
    """A lost lease in an atomic push: the ref that moved says so (`lease`), the other was
    refused only for it (`atomic`); nothing outside git/ reads git's porcelain lines."""
    from patchcarry import git

    bare, work = tmp_path / "b.git", tmp_path / "w"
    git.git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git.git("init", "-q", str(work), cwd=tmp_path)
    ident = ("-c", "user.name=a", "-c", "user.email=a@example.com")
    for message in ("a", "b"):
        git.git(*ident, "commit", "-q", "--allow-empty", "-m", message, cwd=work)
    first, second = git.rev_parse("HEAD~", cwd=work), git.rev_parse("HEAD", cwd=work)
    assert git.push_refs_with_lease(str(bare), [(first, "refs/heads/x", None)], cwd=work).accepted
    pushed = git.push_refs_with_lease(
        str(bare), [(second, "refs/heads/x", second), (second, "refs/heads/y", None)], cwd=work
    )
    assert not pushed.accepted and not pushed.shallow
    assert [(r.ref, r.accepted, r.lease, r.atomic) for r in pushed.refs] == [
        ("refs/heads/x", False, True, False),
        ("refs/heads/y", False, False, True),
    ]


def test_an_error_is_judged_by_its_type_and_the_answer_s_words_never_by_its_sentence() -> None:
    """`str(exc)` is the tool's sentence about an error (label, hint): a decision that
    searches it turns on the tool's own wording. GitHub's words ride as `said`."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        caught = {h.name for h in nodes(path) if isinstance(h, ast.ExceptHandler) and h.name}
        for node in nodes(path):
            if not (isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn)):
                continue
            said = [
                call for side in (node.left, *node.comparators) for call in ast.walk(side)
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "str"
                and any(getattr(a, "id", "") in caught for a in call.args)
            ]  # fmt: skip
            if said:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


def test_the_server_s_remote_lines_reach_push_protection_without_git_s_prefix() -> None:
    """GitHub's push protection names the commit and the path on indented `remote:` lines;
    the door hands them on as the server wrote them, so the advice can name both."""
    from patchcarry import git, push_protection

    said = git.read_push(1, "\n".join([
        "remote: error: GH013: Repository rule violations found for refs/heads/leak.",
        "remote:     - Push cannot contain secrets", "remote:       - commit: 0123456789abcdef",
        "remote:         path: conf.py:1",
        "!\tabc:refs/heads/leak\t[remote rejected] (push declined due to repository rule "
        "violations)",
    ]))  # fmt: skip
    assert [(r.ref, r.remote) for r in said.refs] == [("refs/heads/leak", True)]
    assert "(commit 0123456789ab, conf.py:1)" in push_protection.advice(said.server)
