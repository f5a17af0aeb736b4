"""What the PR-body tests share: #6339's real description (the text its page shows, Markdown
markup not captured), the carried test's one line, and this repository's evidence committed
in a test's own repository with a web remote (so the body can link it)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from patchcarry import git
from patchcarry.install import CHECKOUT
from patchcarry.measure import impact

REAL_6339 = (CHECKOUT / "testing" / "pr_6339_description.txt").read_text()
TEST_COMMAND = (
    "pytest tests/unit_tests/tensor_parallel/test_random.py"
    "::test_checkpoint_clears_detached_input_grad"
)
BOXES = re.compile(r"^\s*[-*+] \[[ x]\] (.*)$", re.MULTILINE)
TOOL_WORDS = ("pinned base", "our hunks", "patch-id")
IDENT = ("-c", "user.name=A", "-c", "user.email=a@example.com")


def commit_evidence(root: Path, remote: str) -> str:
    """evidence/ of the repository holding the manifest, committed, with a web remote."""
    (root / "evidence").mkdir(exist_ok=True)
    shutil.copy(CHECKOUT / "evidence" / impact.CPU_EVIDENCE, root / "evidence")
    git.init(root)
    git.git("remote", "add", "origin", remote, cwd=root)
    git.git("add", "evidence", cwd=root)
    git.git(*IDENT, "commit", "-qm", "evidence", cwd=root)
    return git.rev_parse("HEAD", cwd=root)


def paragraphs(text: str) -> set[str]:
    return {p.strip() for p in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if p.strip()}
