"""Patch shapes git reads differently from how they look: the rules run on what git would
apply. A mode change written as a delete plus a create of one path, and a section whose
`---`/`+++` names disagree with its `diff --git` header (git would move the file), are refused
with exit 5 at load, and git's own tree modes catch an executable bit a series sets."""

from __future__ import annotations

import re

import pytest

from patchcarry import cli, git
from testing.upstream_repos import FIX_0001, RANDOM_PY, write_manifest
from tests.test_patchrules import BASE, REAL

TOOL = "megatron/core/tool.py"


def _sections(*extra: str) -> str:
    return REAL.replace("\n-- \n", "\n" + "".join(extra) + "-- \n", 1)


def _delete(path: str, mode: str = "100644") -> str:
    return (
        f"diff --git a/{path} b/{path}\ndeleted file mode {mode}\nindex 1111111..0000000\n"
        f"--- a/{path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )


def _create(path: str, mode: str = "100755") -> str:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode {mode}\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"
    )


def _line_of(text: str, line: str) -> int:
    return text.split("\n").index(line) + 1


MOVED_PLUS = REAL.replace(f"+++ b/{RANDOM_PY}", "+++ b/megatron/core/other.py", 1)
MOVED_MINUS = REAL.replace(f"--- a/{RANDOM_PY}", "--- a/megatron/core/other.py", 1)
BOTH_ELSEWHERE = REAL.replace(
    f"diff --git a/{RANDOM_PY} b/{RANDOM_PY}", f"diff --git a/{RANDOM_PY} b/megatron/y.py", 1
).replace(f"--- a/{RANDOM_PY}\n+++ b/{RANDOM_PY}", "--- a/megatron/c.py\n+++ b/megatron/c.py")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_sections(_delete(TOOL), _create(TOOL)), rf"{TOOL} is deleted and created again"),
        (_sections(_delete(TOOL, "100755"), _create(TOOL, "100644")), r"100755 -> 100644"),
        (MOVED_PLUS, rf"line {_line_of(MOVED_PLUS, '+++ b/megatron/core/other.py')} "),
        (MOVED_MINUS, rf"line {_line_of(MOVED_MINUS, '--- a/megatron/core/other.py')} "),
        (BOTH_ELSEWHERE, rf"line {_line_of(BOTH_ELSEWHERE, '--- a/megatron/c.py')} "),
    ],
)
def test_check_refuses_what_git_reads_otherwise_with_exit_5(tmp_path, capsys, text, message):
    manifest = write_manifest(tmp_path, base_commit=BASE)
    (manifest.parent / FIX_0001.name).write_text(text)
    assert cli.main(["check", "--offline", "--manifest", str(manifest), "checkpoint-grad"]) == 5
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(message, err), err


def test_a_delete_and_a_create_of_one_path_with_its_own_mode_is_still_carried(tmp_path) -> None:
    from patchcarry.patchfile import parse

    patch = parse(_sections(_delete(TOOL), _create(TOOL, "100644")), name="p")
    assert [c.kind for c in patch.changes if c.path == TOOL] == ["delete", "create"]


def test_a_mode_flip_across_an_entrys_patches_is_refused(tmp_path, capsys) -> None:
    """Patch 1 deletes a file, patch 2 creates it executable: each alone is a text edit."""
    manifest = write_manifest(tmp_path, base_commit=BASE)
    fix = manifest.parent / FIX_0001.name
    fix.write_text(_sections(_delete(TOOL)))
    tests = sorted(manifest.parent.glob("0002-*.patch"))[0]
    text = tests.read_text()
    tests.write_text(text.replace("\n-- \n", "\n" + _create(TOOL) + "-- \n", 1))
    assert cli.main(["check", "--offline", "--manifest", str(manifest), "checkpoint-grad"]) == 5
    assert "deleted and created again with another mode" in capsys.readouterr().err


def test_git_tree_modes_name_the_executable_bit(tmp_path) -> None:
    """The built tree's own modes (what check, the live apply and the git am build compare)."""
    repo = tmp_path / "r"
    git.init(repo)
    (repo / "x.py").write_text("x\n")
    ident = ("-c", "user.name=A", "-c", "user.email=a@example.com")
    git.git("add", "x.py", cwd=repo)
    git.git(*ident, "commit", "-qm", "a", cwd=repo)
    (repo / "x.py").chmod(0o755)
    git.git(*ident, "commit", "-qam", "b", cwd=repo)
    found = git.special_paths("HEAD~1", "HEAD", cwd=repo)
    assert found == [("x.py", "a mode change (100644 -> 100755)")]


def test_a_hidden_mode_change_is_judged_by_the_trees_own_mode(tmp_path) -> None:
    """The patch states the old mode as 100755 (git apply only warns that the tree's file is
    100644) and creates the file 100755 again: the stated modes agree, the tree's does not.
    What check compares is git's `ls-tree` mode of the path at the commit it judges."""
    from patchcarry import patchrules
    from patchcarry.errors import BadInputError
    from patchcarry.patchfile import parse

    repo = tmp_path / "r"
    git.init(repo)
    (repo / "megatron" / "core").mkdir(parents=True)
    (repo / TOOL).write_text("x\n")
    git.git("add", TOOL, cwd=repo)
    git.git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "a", cwd=repo)
    patch = parse(_sections(_delete(TOOL, "100755"), _create(TOOL, "100755")), name="p")
    patchrules.refuse_mode_flips("p", patch.changes)  # the stated modes agree: not caught there
    modes = git.modes_at("HEAD", [TOOL], cwd=repo)
    assert modes == {TOOL: "100644"}
    with pytest.raises(BadInputError, match="is 100644 in the tree"):
        patchrules.refuse_mode_against_tree("p", patch.changes, modes)
