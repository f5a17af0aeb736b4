"""The check's results as the PR body states them: a reviewer's words (branch, commit and its
date), never the tool's own ("pinned base", "not under our hunks", "git patch-id")."""

from __future__ import annotations

from patchcarry import manifest
from patchcarry.check import render
from patchcarry.check.report import EntryResult, FileDrift, Identity, PatchApply, RefApply

BASE = "c76ff610bfa064d4af3035daa594d8c41ca7fce6"
TIP = "d48bd6be0a" + "0" * 30
RANDOM_PY = "megatron/core/tensor_parallel/random.py"
TEST_PY = "tests/unit_tests/tensor_parallel/test_random.py"


def _result(tip_status: str = "offset", tip: str = TIP) -> EntryResult:
    refs = [
        RefApply("base", BASE[:7], BASE, [PatchApply("0001", "clean", [])]),
        RefApply("tip", f"dev {tip[:7]}", tip, [PatchApply("0001", tip_status, [79])]),
    ]
    drift = [
        FileDrift(RANDOM_PY, True, False, [(10, 12)], [], 480),
        FileDrift(TEST_PY, False, False, [], [], None),
        FileDrift("tests/new_test.py", False, False, [], [], None, new_file=True),
    ]
    same = Identity(6117, "16eb82d" + "0" * 33, False, BASE, "identical", None, [], [RANDOM_PY])
    return EntryResult("checkpoint-grad", refs, drift, [same])


def test_the_body_says_where_it_applies_by_branch_commit_and_date() -> None:
    entry = manifest.load().select(["checkpoint-grad"])[0]
    dates = {BASE: "2026-08-05", TIP: "2026-08-21"}
    lines = render.review_sentences(_result(), entry, dates)
    assert lines == [
        "applies cleanly to dev at c76ff610bfa0 (2026-08-05)",
        "applies to dev at d48bd6be0a00 (2026-08-21) without fuzz (its hunks moved +79 lines)",
        f"{RANDOM_PY} changed on dev since c76ff610bfa0, but none of the lines this PR changes "
        "(the nearest change is 480 lines away)",
        f"{TEST_PY} is unchanged on dev since c76ff610bfa0",
        "tests/new_test.py is a new file",
        "the change is identical to #6117's",
    ]
    said = " ".join(lines)
    assert not any(w in said for w in ("pinned base", "our hunks", "patch-id"))


def test_a_tip_that_is_the_base_is_said_once_and_a_conflict_says_rebase() -> None:
    entry = manifest.load().select(["checkpoint-grad"])[0]
    lines = render.review_sentences(_result("clean", BASE), entry, {BASE: "2026-08-05"})
    assert lines[:2] == ["applies cleanly to dev at c76ff610bfa0 (2026-08-05)", lines[1]]
    assert sum(line.startswith("applies") for line in lines) == 1
    lines = render.review_sentences(_result("conflict"), entry, {})
    assert lines[1] == "does not apply to dev at d48bd6be0a00 (conflict): it needs a rebase"
