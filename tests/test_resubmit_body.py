"""Pure parts of resubmit: classification of closed PRs, check sentences, the PR body."""

from __future__ import annotations

import dataclasses
import re

import pytest

from patchcarry.check.judge import Identity
from patchcarry.check.render import sentences
from patchcarry.check.report import EntryResult
from patchcarry.github_types import EventRef, PullRef, RepoRef, read
from patchcarry.manifest import load
from patchcarry.measure.impact import Impact, Source
from patchcarry.pulls import classify
from patchcarry.resubmit import body
from patchcarry.resubmit import section as sections
from testing.upstream_repos import PR_TEMPLATE

UP = "NVIDIA/Megatron-LM"


def _pull(
    number=6117, *, state="closed", merged=False, head_repo=None, closed_at="2026-08-05T06:41:19Z"
):
    return read(
        PullRef,
        {
            "number": number,
            "state": state,
            "merged": merged,
            "merged_at": None,
            "user": {"login": "htesd"},
            "closed_at": closed_at,
            "html_url": f"u/{number}",
            "head": {"repo": head_repo},
        },
    )


def _closed_by(login):
    return [
        EventRef("subscribed", "x"),
        EventRef("closed", login),
    ]


def test_detachment_close_needs_a_detached_head_and_the_authors_close():
    c = classify.classify(_pull(), _closed_by("htesd"), None, UP)
    assert c.state == classify.PullState.DETACHED
    assert any("head.repo is null" in e for e in c.evidence)
    assert any("attributed to htesd" in e for e in c.evidence)


def test_head_repo_that_is_no_longer_a_fork_is_detachment():
    listed = {"full_name": "htesd/Megatron-LM"}
    now = RepoRef("htesd/Megatron-LM", fork=False)
    c = classify.classify(_pull(head_repo=listed), _closed_by("htesd"), now, UP)
    assert c.state == classify.PullState.DETACHED and any("fork: false" in e for e in c.evidence)
    other = RepoRef("htesd/Megatron-LM", fork=True, source="a/b")
    assert (
        classify.classify(_pull(head_repo=listed), _closed_by("htesd"), other, UP).state
        == classify.PullState.DETACHED
    )


def test_maintainer_close_and_author_withdrawal_are_not_detachment():
    attached = {"full_name": "htesd/M", "fork": True, "source": {"full_name": UP}}
    attached_now = read(RepoRef, attached)
    assert (
        classify.classify(_pull(), _closed_by("yaox12"), None, UP).state
        == classify.PullState.MAINTAINER
    )
    withdrawn = classify.classify(_pull(head_repo=attached), _closed_by("htesd"), attached_now, UP)
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
        check_lines=["applies cleanly to dev at c76ff61 (2026-08-05)"],
        impact=None,
        pr_template=PR_TEMPLATE,
    )
    first, second = body.render(entry, **kwargs), body.render(entry, **kwargs)
    assert first == second
    assert first.startswith("- [ ] I, the PR author, have personally reviewed")  # as upstream's
    what = first.index("# What does this PR do?\n")
    assert first.index(entry.fix.message.strip()[:40]) > what  # the description, under it
    assert "<!-- patchcarry:begin entry=checkpoint-grad title=" in first
    section = sections.find_section(first, "checkpoint-grad")
    assert section is not None and section.title_hash == sections.title_hash(entry.title)
    assert "## Contribution process" in first[section.end :]  # the checklist is outside it
    # filled as the author would, from the manifest's `supersedes` (issue 48)
    assert "Linked issue: Related to #6117\n" in first and "e.g. Fixes #1234" not in first
    assert "Re-submission of #6117" in first and "no measured numbers" in first
    impact = Impact("| a | b |", (Source("counted on CPU", "`evidence/x.json`", "cmd"),))
    with_numbers = body.render(entry, **{**kwargs, "impact": impact})
    assert "| a | b |" in with_numbers and "no measured numbers" not in with_numbers
    assert "Evidence (counted on CPU): `evidence/x.json`." in with_numbers
    assert "\n```sh\ncmd\n```" in with_numbers
    assert sections.normalize(first.replace("\n", "\r\n") + "  \n") == sections.normalize(first)


def test_the_checklist_is_the_templates_with_only_true_boxes_ticked():
    entry = load().select(["checkpoint-grad"])[0]
    kwargs = dict(superseded=[], check_lines=[], impact=None, pr_template=PR_TEMPLATE)
    boxes = re.compile(r"^- \[[ x]\] (.*)$", re.MULTILINE)
    text = body.render(entry, **kwargs)
    assert boxes.findall(text) == boxes.findall(PR_TEMPLATE)  # the template's items, in order
    assert re.findall(r"^- \[x\] .*$", text, re.MULTILINE) == [
        "- [x] I have added relevant unit tests"  # 0002 adds one; nothing else is known true
    ]
    without = dataclasses.replace(entry, include_tests=False)
    assert "[x]" not in body.render(without, **kwargs)  # the PR carries no test: no tick
    assert body.render(entry, **{**kwargs, "pr_template": None}).startswith(
        "# What does this PR do?\n"
    )  # an upstream without a template: the description and the section


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
    kwargs = dict(superseded=[], check_lines=["x"], impact=None)
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
    section = body.render_section(entry, superseded=[], check_lines=["x"], impact=None)
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
    for events in ([], [read(EventRef, {"event": "closed", "actor": None})], _closed_by("ghost")):
        c = classify.classify(_pull(), events, None, UP)  # head.repo null: looks detached
        assert c.state == classify.PullState.UNKNOWN
        assert any("closer unknown" in e for e in c.evidence)
        assert any("head.repo is null" in e for e in c.evidence)  # the evidence is still shown


def _crafted_body(entry_name: str) -> str:
    """65,520 characters of 280 begin and 504 end markers, each begin carrying an id."""
    begin = sections.section_begin(entry_name, title="t", summary=False, section_id="0" * 16)
    end = sections.section_end(entry_name)
    parts = [begin + "\n" for _ in range(280)] + [end + "\n" for _ in range(504)]
    text = "".join(parts)
    return text + "y" * (65_520 - len(text))


def test_locating_the_section_hashes_each_character_of_the_body_at_most_once(monkeypatch):
    """280 begin and 504 end markers: every begin tried with every end took 13 s; only a begin
    followed directly by an end can be the pair the tool wrote (counted, never timed)."""
    hashed = []
    real = sections.section_id
    monkeypatch.setattr(
        sections, "section_id", lambda inner: hashed.append(len(inner)) or real(inner)
    )
    text = _crafted_body("checkpoint-grad")
    assert len(text) == 65_520
    found = sections.locate(text, "checkpoint-grad")
    assert found.section is None and "280 begin and 504 end marker(s)" in found.problem
    assert sum(hashed) <= len(text)


def test_a_marker_in_outside_text_is_defused_so_the_section_is_found_again():
    """A commit message quoting the section's end marker: the section shows it defused, and
    the pair the tool wrote is still the one found."""
    import dataclasses

    entry = load().select(["checkpoint-grad"])[0]
    begin = sections.section_begin(entry.name, title="x", summary=True)
    quoted = f"{sections.section_end(entry.name)} and {begin}"
    fix = dataclasses.replace(entry.fix, message=f"{entry.fix.message}\n\n{quoted}")
    entry = dataclasses.replace(entry, fixes=(fix,))
    own = frozenset({fix.author_email.lower()})  # the user's own text: kept, but defused
    section = body.render_section(entry, superseded=[], check_lines=["x"], impact=None,
                                  summary=True, own=own)  # fmt: skip
    assert section.count("<!-- patchcarry:end ") == 1 and "patchcarry&#58;end" in section
    found = sections.locate("Hand text\n" + section, entry.name)
    assert found.section is not None and not found.problem


@pytest.mark.parametrize("template", [None, PR_TEMPLATE], ids=["no-template", "template"])
@pytest.mark.parametrize("whose", ["own", "another's"])
def test_a_forged_section_in_the_commit_message_cannot_disable_later_refreshes(template, whose):
    """The new PR's description is the closed PR's commit message, outside the tool's
    section: a begin/end pair forged there (its id right for its text) would make every later
    `--update-live` find two sections and leave the body alone. It is shown defused."""
    entry = load().select(["checkpoint-grad"])[0]
    inner = "\nforged results\n"
    begin = sections.section_begin(
        entry.name, title=entry.title, summary=False, section_id=sections.section_id(inner)
    )
    forged = f"{begin}{inner}{sections.section_end(entry.name)}"
    fix = dataclasses.replace(entry.fix, message=f"{entry.fix.message}\n\n{forged}")
    entry = dataclasses.replace(entry, fixes=(fix,))
    own = frozenset({fix.author_email.lower()}) if whose == "own" else None
    new = body.render(
        entry, superseded=[], check_lines=["x"], impact=None, pr_template=template, own=own
    )
    found = sections.locate(new, entry.name)
    assert found.section is not None and not found.problem, found.problem
    assert "forged results" in new  # the message is still all there, inert


def test_markers_in_upstreams_template_are_defused_too():
    entry = load().select(["checkpoint-grad"])[0]
    inner = "\nx\n"
    begin = sections.section_begin(
        entry.name, title=entry.title, summary=False, section_id=sections.section_id(inner)
    )
    template = f"{PR_TEMPLATE}\n{begin}{inner}{sections.section_end(entry.name)}\n"
    new = body.render(entry, superseded=[], check_lines=["x"], impact=None, pr_template=template)
    assert not sections.locate(new, entry.name).problem


def test_upstream_commit_subjects_quoted_by_the_check_are_inert_in_the_section():
    """A landing sentence quotes upstream's commit subject: a mention or raw HTML there is
    someone else's, made inert like any other outside text."""
    entry = load().select(["checkpoint-grad"])[0]
    line = "landed upstream in abc123 'Revert @nvidia/all <img src=http://127.0.0.2/p.png>'"
    section = body.render_section(entry, superseded=[], check_lines=[line], impact=None)
    assert "@nvidia" not in section and "<img" not in section
    assert "nvidia/all" in section and "127.0.0.2/p.png" in section


def _fresh_body(name="checkpoint-grad", **extra):
    from patchcarry.install import CHECKOUT
    from patchcarry.measure import impact

    entry = load().select([name])[0]
    found = impact.measured_impact(
        None, CHECKOUT / "patches" / "series.toml", entry.measure, **extra
    )
    item = classify.classify(_pull(), _closed_by("htesd"), None, UP)
    return entry, found, body.render(
        entry, superseded=[item], check_lines=["applies cleanly"], impact=found,
        test_command="pytest tests/unit_tests/x.py::test_y", pr_template=PR_TEMPLATE,
    )  # fmt: skip


def _prose(text):
    """The lines of `text` outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def test_no_paragraph_of_the_body_is_one_long_line():
    """Issue 48: the "Measured impact" paragraph was one 775-character line."""
    _, _, text = _fresh_body(entry="checkpoint-grad", siblings={"reset": "#6338"})
    found = sections.find_section(text, "checkpoint-grad")
    assert found is not None and "### Measured impact" in found.text
    longest = max(_prose(found.text), key=len)
    assert len(longest) <= 320, longest


def test_the_description_is_the_commit_message_reflowed_for_github():
    """GitHub shows each newline of a PR body as a line break: the message's 72-column
    wraps are joined into paragraphs (code, lists and trailers kept line for line)."""
    entry, _, text = _fresh_body()
    first = entry.fix.message.strip().split("\n\n")[0]
    assert "\n" in first  # the commit message is hard-wrapped
    assert " ".join(first.split("\n")) in text
    message = (
        "Clear the .grad of each detached\ninput after collecting it.\n\n"
        "- one item that wraps\n  onto a second line\n- two\n\n"
        "    kept = code()\n    as_is()\n\n```\nfenced\n  too\n```\n\n"
        "Signed-off-by: A <a@example.com>\nCo-authored-by: B <b@example.com>"
    )
    from patchcarry.resubmit.inert import reflow

    assert reflow(message) == (
        "Clear the .grad of each detached input after collecting it.\n\n"
        "- one item that wraps onto a second line\n- two\n\n"
        "    kept = code()\n    as_is()\n\n```\nfenced\n  too\n```\n\n"
        "Signed-off-by: A <a@example.com>\nCo-authored-by: B <b@example.com>"
    )


def test_reproduction_leads_with_upstreams_own_test_its_result_and_needs():
    """Issue 48: the carried test needs CUDA and Python 3.12+ as printed, and the body
    never said it fails without the fix."""
    _, _, text = _fresh_body()
    how = text[text.index("### How to reproduce") :]
    test = how.index("pytest tests/unit_tests/x.py::test_y")
    assert test < how.index("Evidence (counted on CPU)")
    assert "Expected: it fails without this PR's fix and passes with it." in how
    assert "It needs a CUDA device and Python 3.12+" in how


def test_why_both_is_answered_beside_a_description_that_states_its_own_figures():
    """#6339's own description quotes #6117's figures: the section adds no figures, but
    says what the fix frees alone and with #6338 merged (measured)."""
    from patchcarry.install import CHECKOUT
    from patchcarry.measure import impact
    from testing import pr_bodies

    entry = load().select(["checkpoint-grad"])[0]
    found = impact.measured_impact(
        None, CHECKOUT / "patches" / "series.toml", "fix", siblings={"reset": "#6338"},
        tested=True,
    )  # fmt: skip
    item = classify.classify(_pull(), _closed_by("htesd"), None, UP)
    text = body.render_section(
        entry, superseded=[item], check_lines=["applies cleanly"], impact=found,
        handwritten=pr_bodies.REAL_6339,
    )  # fmt: skip
    assert "### Measured impact" not in text
    assert "### Why both PRs?" in text and "With #6338 merged, this fix frees nothing more" in text


def test_the_revision_list_is_read_back_from_its_own_place_only():
    """The revisions and the count left out are data the section writes and reads back
    (`revisions`): a line of the description shaped like one is someone's text, never a
    revision the tool pushed."""
    from patchcarry.resubmit.revisions import Revision, Revisions

    entry = load().select(["checkpoint-grad"])[0]
    shaped = "- 2026-01-01 `0123456789ab` rewrite"
    fix = dataclasses.replace(entry.fix, message=f"{entry.fix.message}\n\n{shaped}")
    entry = dataclasses.replace(entry, fixes=(fix,))
    pushed = Revisions((Revision("2026-08-10", "abcdef012345", "fast-forward", "0123456789ab"),), 3)
    section = body.render_section(entry, superseded=[], check_lines=["x"], impact=None,
                                  summary=True, own=frozenset({fix.author_email.lower()}),
                                  revisions=pushed)  # fmt: skip
    found = sections.find_section(section, entry.name)
    assert shaped in section and found is not None and found.revisions == pushed


def test_the_tools_commit_on_top_is_told_by_its_note_above_the_sign_off_alone():
    """A head the tool built whole is rebuilt; one it added on top of someone's work is not.
    The fix's own message may quote the note: only the paragraph right above the sign-off
    that ends the message is the tool's."""
    from patchcarry.resubmit import live

    note = f"{live.FAST_FORWARD_NOTE} checkpoint-grad (0001-a.patch), on top of the commits "
    note += "already here."
    signed = "Signed-off-by: A <a@example.com>\n"
    assert live.on_top(f"Fix x\n\nWhy.\n\n{note}\n\n{signed}", "checkpoint-grad")
    assert not live.on_top(f"Fix x\n\nIt said: {note}\n\nWhy.\n\n{signed}", "checkpoint-grad")
    assert not live.on_top(f"Fix x\n\n{note}\n\n{signed}", "other-entry")
