"""Pure parts of resubmit: classification of closed PRs, check sentences, the PR body."""

from __future__ import annotations

import re

from patchcarry.check.judge import Identity
from patchcarry.check.render import sentences
from patchcarry.check.report import EntryResult
from patchcarry.manifest import load
from patchcarry.pulls import classify
from patchcarry.resubmit import body
from patchcarry.resubmit import section as sections

UP = "NVIDIA/Megatron-LM"


def _pull(
    number=6117, *, state="closed", merged=False, head_repo=None, closed_at="2026-08-05T06:41:19Z"
):
    return {
        "number": number,
        "state": state,
        "merged": merged,
        "merged_at": None,
        "user": {"login": "htesd"},
        "closed_at": closed_at,
        "html_url": f"u/{number}",
        "head": {"repo": head_repo},
    }


def _closed_by(login):
    return [
        {"event": "subscribed", "actor": {"login": "x"}},
        {"event": "closed", "actor": {"login": login}},
    ]


def test_detachment_close_needs_a_detached_head_and_the_authors_close():
    c = classify.classify(_pull(), _closed_by("htesd"), None, UP)
    assert c.state == classify.PullState.DETACHED
    assert any("head.repo is null" in e for e in c.evidence)
    assert any("attributed to htesd" in e for e in c.evidence)


def test_head_repo_that_is_no_longer_a_fork_is_detachment():
    listed = {"full_name": "htesd/Megatron-LM"}
    now = {"full_name": "htesd/Megatron-LM", "fork": False}
    c = classify.classify(_pull(head_repo=listed), _closed_by("htesd"), now, UP)
    assert c.state == classify.PullState.DETACHED and any("fork: false" in e for e in c.evidence)
    other = {"full_name": "htesd/Megatron-LM", "fork": True, "source": {"full_name": "a/b"}}
    assert (
        classify.classify(_pull(head_repo=listed), _closed_by("htesd"), other, UP).state
        == classify.PullState.DETACHED
    )


def test_maintainer_close_and_author_withdrawal_are_not_detachment():
    attached = {"full_name": "htesd/M", "fork": True, "source": {"full_name": UP}}
    assert (
        classify.classify(_pull(), _closed_by("yaox12"), None, UP).state
        == classify.PullState.MAINTAINER
    )
    withdrawn = classify.classify(_pull(head_repo=attached), _closed_by("htesd"), attached, UP)
    assert withdrawn.state == classify.PullState.AUTHOR


def test_merged_and_open():
    assert classify.classify(_pull(merged=True), [], None, UP).state == classify.PullState.MERGED
    assert classify.classify(_pull(state="open"), [], None, UP).state == classify.PullState.OPEN


def test_same_second_siblings_are_noted():
    a = classify.classify(_pull(6117), _closed_by("htesd"), None, UP)
    b = classify.classify(_pull(6017), _closed_by("htesd"), None, UP)
    c = classify.classify(
        _pull(6000, closed_at="2026-01-01T00:00:00Z"), _closed_by("htesd"), None, UP
    )
    classify.add_sibling_evidence([a, b, c])
    assert "closed in the same second as #6017 (same author)" in a.evidence
    assert not any("same second" in e for e in c.evidence)


def _identity(result, comments_only):
    return Identity(
        6117,
        "h" * 40,
        False,
        "p" * 40,
        result,
        comments_only,
        ["megatron/core/tensor_parallel/random.py"],
        [],
    )


def test_check_sentences_never_claim_identity_the_check_did_not_find():
    entry = load().select(["checkpoint-grad"])[0]
    lines = sentences(EntryResult("checkpoint-grad", [], identity=[]), entry)
    assert lines[0].startswith("not checked")
    for result, comments_only, expected in (
        ("identical", None, "identical to #6117"),
        ("different", True, "differs from #6117 only in comments/whitespace"),
        ("different", False, "differs from #6117 in code"),
    ):
        from patchcarry.check.report import PatchApply, RefApply

        ref = RefApply("base", "c76ff61", "c" * 40, [PatchApply("0001", "clean", [])])
        out = sentences(
            EntryResult("checkpoint-grad", [ref], [], [_identity(result, comments_only)]), entry
        )
        assert any(line.startswith(expected) for line in out), out
        assert result == "identical" or not any("identical" in line for line in out)


def test_body_is_deterministic_and_marked():
    entry = load().select(["checkpoint-grad"])[0]
    item = classify.classify(_pull(), _closed_by("htesd"), None, UP)
    kwargs = dict(
        superseded=[item],
        check_lines=["applies cleanly at the pinned base c76ff61"],
        evidence_markdown=None,
    )
    first, second = body.render(entry, **kwargs), body.render(entry, **kwargs)
    assert first == second
    assert first.startswith("# What does this PR do?\n")  # the description: outside the section
    assert "<!-- patchcarry:begin entry=checkpoint-grad title=" in first
    section = sections.find_section(first, "checkpoint-grad")
    assert section is not None and section.title_hash == sections.title_hash(entry.title)
    assert "- [ ] I, the PR author" in first[section.end :]  # the checklist is outside it
    assert "# What does this PR do?" in first and "## Contribution process" in first
    assert "- [ ] I, the PR author, have personally reviewed" in first  # a human ticks it
    assert "Re-submission of #6117" in first and "no measured numbers" in first
    with_numbers = body.render(entry, **{**kwargs, "evidence_markdown": "| a | b |"})
    assert "| a | b |" in with_numbers and "no measured numbers" not in with_numbers
    assert sections.normalize(first.replace("\n", "\r\n") + "  \n") == sections.normalize(first)


def test_drift_sentences_tell_a_new_file_from_an_unchanged_one():
    from patchcarry.check.report import FileDrift, PatchApply, RefApply

    entry = load().select(["checkpoint-grad"])[0]
    ref = RefApply("base", "c76ff61", "c" * 40, [PatchApply("0001", "clean", [])])
    drift = [
        FileDrift("tests/new_test.py", False, False, [], [], None, new_file=True),
        FileDrift("a.py", False, False, [], [], None),
    ]
    out = sentences(EntryResult("checkpoint-grad", [ref], drift, []), entry)
    assert "tests/new_test.py is new: absent at the pinned base and the tip" in out
    assert "a.py is unchanged between the pinned base and the tip" in out


def test_merge_keeps_every_byte_outside_the_section():
    entry = load().select(["checkpoint-grad"])[0]
    kwargs = dict(superseded=[], check_lines=["x"], evidence_markdown=None)
    old = body.render_section(entry, **kwargs)
    new = body.render_section(entry, **{**kwargs, "check_lines": ["y"]})
    hand = "Hand text\r\n- [x] ticked\r\n\r\n"
    merged = sections.merge(hand + old + "\r\nA paragraph after.\r\n", new, entry.name)
    assert merged == hand + new + "\r\nA paragraph after.\r\n"
    assert sections.merge(hand, new, entry.name) == hand + new  # first refresh: appended
    assert sections.merge(None, new, entry.name) == new


def test_a_series_of_fix_commits_is_described_commit_by_commit():
    import dataclasses

    entry = load().select(["checkpoint-grad"])[0]
    second = load().select(["hc-mlp-norm-manager"])[0].fix
    series = dataclasses.replace(entry, fixes=(entry.fix, second))
    summary = body.render_description(series).split("# What does this PR do?", 1)[1]
    assert f"**{entry.fix.subject}**" in summary and f"**{second.subject}**" in summary
    assert summary.index(entry.fix.subject) < summary.index(second.subject)
    assert "in 2 commits" in summary


def test_revision_comment_fence_is_longer_than_any_backtick_run_in_the_diff():
    entry = load().select(["checkpoint-grad"])[0]
    diff = "+```\n+ a fenced block in a docstring\n+`````\n"
    text = body.revision_comment(entry, head="a" * 40, old="b" * 40, kind="rewrite", diff=diff)
    fence = "``````"  # one longer than the longest run inside
    assert text.endswith(f"\n{fence}diff\n{diff}{fence}")
    opening = text.index(f"{fence}diff\n")
    assert text[opening:].count(fence) == 2  # nothing inside can close it


def test_locate_takes_only_the_one_pair_whose_id_matches():
    entry = load().select(["checkpoint-grad"])[0]
    section = body.render_section(entry, superseded=[], check_lines=["x"], evidence_markdown=None)
    hand = "Hand text\r\n"
    found = sections.locate(hand + section.replace("\n", "\r\n") + "\r\nafter\r\n", entry.name)
    assert found.section is not None and not found.problem  # GitHub's CRLF is the same text
    twice = sections.locate(hand + section + "\n\n> quoted:\n" + section, entry.name)
    assert twice.section is None and "2 copies" in twice.problem
    no_begin = sections.locate(hand + section[section.index("\n") :], entry.name)
    assert no_begin.section is None and "a begin marker is missing" in no_begin.problem
    merged = hand + section + "\n\n> quoted:\n" + section
    assert sections.merge(merged, "new", entry.name) == merged  # a problem: left as it is
    legacy = re.sub(r" id=[0-9a-f]{16}", "", section)  # written before ids: the only pair
    assert sections.locate(hand + legacy, entry.name).section is not None
    assert sections.merge(hand + legacy, section, entry.name) == hand + section


def test_a_close_without_an_identifiable_actor_is_unknown_never_a_detachment():
    for events in ([], [{"event": "closed", "actor": None}], _closed_by("ghost")):
        c = classify.classify(_pull(), events, None, UP)  # head.repo null: looks detached
        assert c.state == classify.PullState.UNKNOWN
        assert any("closer unknown" in e for e in c.evidence)
        assert any("head.repo is null" in e for e in c.evidence)  # the evidence is still shown
