"""What others wrote is kept (issue 19): the shapes people produce on a shared fork branch and
PR body beyond the ones the live refresh was built for. Real git repos and the loopback GitHub
(the `live` fixture of test_resubmit_live); assertions on the server's state and the fork's refs."""

from __future__ import annotations

import json
import tomllib

from patchcarry import git
from patchcarry.manifest import DEFAULT_MANIFEST
from patchcarry.resubmit import branch as branch_mod
from patchcarry.resubmit.section import title_hash
from testing import github_scenarios as sc
from testing.upstream_repos import PINNED_ENV, RANDOM_PY, UpstreamRepo, write_manifest
from tests import test_resubmit_live
from tests.test_resubmit_live import (
    AUTHOR,
    CKPT,
    HAND_6339,
    MAINTAINER,
    Live,
    _commit,
    _older_fix,
)

template_upstream = test_resubmit_live.template_upstream  # the fixtures, shared
live = test_resubmit_live.live

HC = "hc-mlp-norm-manager"


def _log(w: Live, rev: str) -> list[str]:
    _, out, _ = git.git("rev-list", rev, cwd=w.fork_git)
    return out.split()


def test_a_branch_another_entry_published_is_never_rebuilt_by_a_second_entry(live, capsys):
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"})])
    assert w.run(CKPT) == 0  # entry A publishes (one commit on top): the record is A's
    assert w.run("--rewrite", CKPT) == 0  # now A's own build: the record licenses A's rebuilds
    a_head = w.head(sc.CHECKPOINT_BRANCH)
    a_commits = _log(w, a_head)
    real = {e["name"]: e for e in tomllib.loads(DEFAULT_MANIFEST.read_text())["entry"]}
    other = write_manifest(  # another manifest (a second clone, an adopt elsewhere): entry B
        w.tmp / "elsewhere",
        base_commit=w.upstream.base_commit,
        entries=[
            {
                **{k: v for k, v in real[HC].items() if k != "pr"},
                "head_branch": sc.CHECKPOINT_BRANCH,
            }
        ],  # fmt: skip
    )
    writes = len(w.gh.writes())
    capsys.readouterr()
    w.manifest = other
    assert w.run(HC) == 1
    out = capsys.readouterr().out
    assert "REFUSED" in out and f"entry {CKPT!r} published" in out
    assert "its own head_branch" in out
    assert len(w.gh.writes()) == writes and w.head(sc.CHECKPOINT_BRANCH) == a_head
    assert _log(w, a_head) == a_commits
    record = f"refs/patchcarry/publisher/{CKPT}/{sc.CHECKPOINT_BRANCH}"
    assert git.rev_parse(record, cwd=w.fork_git) == a_head  # the record names entry A
    assert w.run("--rewrite", HC) == 1  # not even when asked to rewrite
    assert len(w.gh.writes()) == writes and w.head(sc.CHECKPOINT_BRANCH) == a_head


def _merge_side_branch(w: Live, count: int = 3) -> str:
    """A maintainer's merge of a side branch of `count` commits into the PR branch."""
    git.git("checkout", "-q", "-b", "side", f"{sc.CHECKPOINT_BRANCH}~1", cwd=w.work)
    for n in range(count):
        _commit(w.work, MAINTAINER, f"side {n}", {f"SIDE{n}.md": f"{n}\n"})
    git.git("checkout", "-q", sc.CHECKPOINT_BRANCH, cwd=w.work)
    git.git("merge", "-q", "--no-ff", "-m", "Merge side", "side", cwd=w.work,
            env_extra={**PINNED_ENV, **MAINTAINER})  # fmt: skip
    git.git("push", "-q", "origin", f"HEAD:refs/heads/{sc.CHECKPOINT_BRANCH}", cwd=w.work)
    return w.head(sc.CHECKPOINT_BRANCH)


def test_rewrite_lists_every_commit_it_drops_with_a_total_and_a_cap(live, capsys, monkeypatch):
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"}),
                           (AUTHOR, "more", {"MORE.md": "b\n"})])  # fmt: skip
    head = _merge_side_branch(w)
    _, out, _ = git.git("rev-list", f"{w.upstream.base_commit}..{head}", cwd=w.fork_git)
    expected = out.split()
    assert len(expected) == 6  # two commits, three on the side branch, the merge
    assert w.run("--rewrite", "--dry-run", "--json", CKPT) == 0
    planned = json.loads(capsys.readouterr().out)
    assert [d["sha"] for d in planned["branch"]["dropped"]] == expected
    assert w.run("--rewrite", "--dry-run", CKPT) == 0
    text = capsys.readouterr().out
    assert "--rewrite drops 6 commit(s)" in text
    assert all(f"drops {sha[:12]} " in text for sha in expected)
    monkeypatch.setattr(branch_mod, "LISTED", 4)
    assert w.run("--rewrite", "--dry-run", CKPT) == 0
    text = capsys.readouterr().out
    assert "--rewrite drops 6 commit(s)" in text and "and 2 more" in text
    assert sum(f"drops {sha[:12]} " in text for sha in expected) == 4
    assert w.writes() == [] and w.head(sc.CHECKPOINT_BRANCH) == head


def test_the_revision_comment_after_a_rewrite_is_a_range_diff_naming_what_left(live):
    w = live(ckpt_commits=[(AUTHOR, sc.CHECKPOINT_TITLE, _older_fix),
                           (AUTHOR, "Author's own note", {"NOTES.md": "mine\n"})])  # fmt: skip
    old = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run("--rewrite", CKPT) == 0
    (comment,) = w.comments(6339, "patchcarry:revision")
    _, out, _ = git.git("range-diff", "--no-color", f"{old}...{w.head(sc.CHECKPOINT_BRANCH)}",
                        cwd=w.fork_git)  # fmt: skip
    assert out.strip() and out.strip() in comment  # git's own range-diff, all of it
    assert "< -:" in comment and "Author's own note" in comment  # the dropped commit is named


def test_an_earlier_revision_plus_a_separate_comment_edit_is_foreign_and_the_edit_stays(
    live, capsys
):
    note = "# A maintainer's note on this module, far from the fix.\n"

    def revision_and_a_note(upstream: UpstreamRepo) -> dict[str, str]:
        return {RANDOM_PY: note + _older_fix(upstream)[RANDOM_PY]}

    w = live(ckpt_commits=[(MAINTAINER, sc.CHECKPOINT_TITLE, revision_and_a_note)])
    head = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run("--dry-run", "--json", CKPT) == 1
    planned = json.loads(capsys.readouterr().out)
    assert planned["branch"]["revises"] is None  # not "an earlier revision of the fix"
    assert w.run(CKPT) == 1
    assert "REFUSED" in capsys.readouterr().out
    assert w.writes() == [] and w.head(sc.CHECKPOINT_BRANCH) == head
    assert (git.show_file(head, RANDOM_PY, cwd=w.fork_git) or b"").startswith(note.encode())
    assert w.pull(6339).body == HAND_6339


def _move_branch(w: Live, name: str) -> None:
    """Someone pushes to the PR branch, so the next run has a revision to record."""
    git.git("fetch", "-q", str(w.fork_git), sc.CHECKPOINT_BRANCH, cwd=w.work)
    git.git("checkout", "-q", "-B", sc.CHECKPOINT_BRANCH, "FETCH_HEAD", cwd=w.work)
    _commit(w.work, MAINTAINER, name, {f"{name}.md": "x\n"})
    git.git("push", "-q", "origin", f"HEAD:refs/heads/{sc.CHECKPOINT_BRANCH}", cwd=w.work)


BEGIN = f"<!-- patchcarry:begin entry={CKPT} "
END = f"<!-- patchcarry:end entry={CKPT} -->"


def test_a_deleted_end_marker_leaves_the_body_alone_and_says_how_to_repair(live, capsys):
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"})])
    assert w.run(CKPT) == 0
    pull = w.pull(6339)
    pull.body = pull.body.replace(END, "") + "\r\n- [x] checked by hand\r\nA reviewer's note.\r\n"
    edited = pull.body
    for n in range(2):
        _move_branch(w, f"more{n}")
        capsys.readouterr()
        assert w.run(CKPT) == 0
        out = capsys.readouterr().out
        assert "left as is" in out and "end marker" in out
        assert w.pull(6339).body == edited  # not a byte changed, in either run


def test_a_quoted_begin_marker_above_the_section_is_hand_written_text(live, capsys):
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"})])
    assert w.run(CKPT) == 0
    pull = w.pull(6339)
    start = pull.body.index(BEGIN)
    quoted = pull.body[start : pull.body.index("-->", start) + 3]
    pull.body = (
        pull.body[:start] + f"The tool's section starts with\r\n\r\n    {quoted}\r\n\r\n"
        "and a paragraph a reviewer wrote between.\r\n\r\n" + pull.body[start:]
    )
    before, after = (
        pull.body[: pull.body.rindex(BEGIN)],
        pull.body[pull.body.index(END) + len(END) :],
    )
    for n in range(2):  # a new title each run: the tool rewrites its section each time
        title = f"Fix gradient retention, take {n}"
        w.manifest.write_text(w.manifest.read_text().replace(w.pull(6339).title, title))
        assert w.run(CKPT) == 0
        body = w.pull(6339).body
        assert body.startswith(before) and body.endswith(after)
        section = body[len(before) : len(body) - len(after)]
        assert section.startswith(BEGIN) and f"title={title_hash(title)} " in section
        assert w.pull(6339).title == title


def test_a_section_edited_by_hand_is_kept_and_reported(live, capsys):
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"})])
    assert w.run(CKPT) == 0
    pull = w.pull(6339)
    pull.body = pull.body.replace(
        "### Check results", "### Check results\r\n\r\nA reviewer: see #1."
    )
    edited = pull.body
    _move_branch(w, "more")
    capsys.readouterr()
    assert w.run(CKPT) == 0
    out = capsys.readouterr().out
    assert "edited by hand since" in out and "kept as is" in out
    assert w.pull(6339).body == edited


def test_the_description_of_a_pr_the_tool_opened_is_outside_its_section(live, capsys):
    w = live()
    text = w.manifest.read_text().replace("pr = 6339\n", "")
    w.manifest.write_text(text.replace(f'"{sc.CHECKPOINT_BRANCH}"', '"fix/fresh"'))
    assert w.run(CKPT) == 0
    ((_, number),) = [k for k, p in w.gh.state.pulls.items() if p.head_ref == "fix/fresh"]
    pull = w.pull(number)
    section = pull.body[pull.body.index(BEGIN) : pull.body.index(END)]
    assert "# What does this PR do?" in pull.body and "# What does this PR do?" not in section
    pull.body = pull.body.replace("# What does this PR do?", "# What this PR does (maintainer)")
    edited = pull.body
    writes = len(w.gh.writes())
    assert w.run(CKPT) == 0
    assert len(w.gh.writes()) == writes and w.pull(number).body == edited
