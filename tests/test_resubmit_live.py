"""Refreshing a live PR: the fork branch and the body are shared with people. Real git repos
(upstream, fork) and the loopback GitHub; assertions on the repos and the server's state."""

from __future__ import annotations

import collections
import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchcarry import cli, git
from patchcarry.errors import FatalError
from testing import github_scenarios as sc
from testing import pr_bodies as pb
from testing.fake_github import FakeGitHub, GitHubState
from testing.shared_worlds import resubmit_upstream
from testing.upstream_repos import (
    FIX_0001,
    FIX_0003,
    PINNED_ENV,
    RANDOM_PY,
    UpstreamRepo,
    write_manifest,
)

CKPT, HC = "checkpoint-grad", "hc-mlp-norm-manager"
HAND_6339 = (
    "Fix cross-iteration gradient retention in CheckpointFunction.backward\r\n\r\n"
    "Re-submission of #6117 on current dev (c76ff61). Written by hand.\r\n\r\n"
    "- [ ] a box nobody ticked\r\n"
)
MAINTAINER = {"GIT_AUTHOR_NAME": "Xin Yao", "GIT_AUTHOR_EMAIL": "xiny@nvidia.com"}
AUTHOR = {"GIT_AUTHOR_NAME": "iiap", "GIT_AUTHOR_EMAIL": "1471127927@qq.com"}


@pytest.fixture(scope="session")
def template_upstream(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    """#6117's and #6017's heads on the fixture upstream, built once per run (read-only)."""
    return resubmit_upstream(tmp_path_factory)


def _commit(work: Path, env: dict[str, str], message: str, edit: dict[str, str]) -> str:
    for path, text in edit.items():
        (work / path).write_text(text)
    git.git("add", "-A", cwd=work)
    signoff = f"Signed-off-by: {env['GIT_AUTHOR_NAME']} <{env['GIT_AUTHOR_EMAIL']}>"  # the DCO
    git.git("commit", "-q", "-m", message, "-m", signoff, cwd=work,
            env_extra={**PINNED_ENV, **env})  # fmt: skip
    return git.rev_parse("HEAD", cwd=work)


@dataclass
class Live:
    tmp: Path
    gh: FakeGitHub
    upstream: UpstreamRepo
    fork_git: Path
    manifest: Path
    work: Path

    def run(self, *args: str) -> int:
        return cli.main(["resubmit", "--manifest", str(self.manifest), *args])

    def writes(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.gh.writes()]

    def head(self, branch: str) -> str:
        return git.rev_parse(f"refs/heads/{branch}", cwd=self.fork_git)

    def reachable(self, old: str, branch: str) -> bool:
        code, _, _ = git.git(
            "merge-base", "--is-ancestor", old, f"refs/heads/{branch}", cwd=self.fork_git,
            check=False,
        )  # fmt: skip
        return code == 0

    def pull(self, number: int):  # noqa: ANN201
        return self.gh.state.pulls[(sc.UPSTREAM, number)]

    def comments(self, number: int, marker: str) -> list[str]:
        return [c.body for c in self.gh.state.comments if c.issue == number and marker in c.body]


@pytest.fixture
def live(tmp_path, template_upstream, monkeypatch, request):  # noqa: ANN001, ANN201
    """The real state's shapes: #6339 and #6338 open from htesd/Megatron-LM-oss with
    hand-written bodies, branches built by the test, the manifest recording both PRs."""

    def make(ckpt_commits=(), hc_shape: bool = False, hc_fix: str | None = None) -> Live:  # noqa: ANN001
        upstream = template_upstream.copy(tmp_path / "up")
        fork_git = tmp_path / "fork.git"
        git.git("clone", "-q", "--bare", str(upstream.bare), str(fork_git), cwd=tmp_path)
        work = tmp_path / "fork-work"
        git.git("clone", "-q", str(fork_git), str(work), cwd=tmp_path)
        git.git("checkout", "-q", "-b", sc.CHECKPOINT_BRANCH, upstream.base_commit, cwd=work)
        for env, message, edit in ckpt_commits:
            _commit(work, env, message, edit(upstream) if callable(edit) else edit)
        if ckpt_commits:
            git.git("push", "-q", "origin", f"HEAD:refs/heads/{sc.CHECKPOINT_BRANCH}", cwd=work)
        if hc_shape:  # the fix, a maintainer's merge of dev, then the author's merge of dev
            git.git("checkout", "-q", "-b", sc.HC_BRANCH, upstream.base_commit, cwd=work)
            git.git("am", "-q", cwd=work, env_extra=PINNED_ENV,
                    stdin=hc_fix or FIX_0003.read_text())  # fmt: skip
            for env in (MAINTAINER, AUTHOR):
                git.git(
                    "merge", "-q", "--no-ff", "-m",
                    f"Merge branch 'dev' into {sc.HC_BRANCH}", "origin/dev", cwd=work,
                    env_extra={**PINNED_ENV, **env},
                )  # fmt: skip
                upstream.make_fuzzy_tip() if env is MAINTAINER else None
                git.git("fetch", "-q", str(upstream.bare), "dev:refs/remotes/origin/dev",
                        cwd=work)  # fmt: skip
            git.git("push", "-q", "origin", f"HEAD:refs/heads/{sc.HC_BRANCH}", cwd=work)
        manifest = write_manifest(
            tmp_path,
            base_commit=upstream.base_commit,
            overrides={CKPT: {"pr": 6339}, HC: {"pr": 6338}},
        )
        storage = tmp_path / "forks"
        storage.mkdir()
        gh = FakeGitHub(GitHubState(fork_storage=storage)).start()
        request.addfinalizer(gh.stop)
        sc.detached_fork_close(gh.state, upstream.bare, fork_git)
        for number, title, branch, body in (
            (6339, sc.CHECKPOINT_TITLE, sc.CHECKPOINT_BRANCH, HAND_6339),
            (6338, sc.HC_TITLE, sc.HC_BRANCH, "Hand-written #6338 description.\n"),
        ):
            gh.state.add_pull(sc.UPSTREAM, number=number, title=title, user=sc.OWNER,
                              head_ref=branch, head_repo=sc.NEW_FORK, base_ref="dev",
                              body=body)  # fmt: skip
        monkeypatch.setenv("GH_HOST", gh.url)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
        return Live(tmp_path, gh, upstream, fork_git, manifest, work)

    return make


def _older_fix(upstream: UpstreamRepo) -> dict[str, str]:
    """random.py with the same fix but another comment: #6339's real shape."""
    text = (git.show_file(upstream.base_commit, RANDOM_PY, cwd=upstream.bare) or b"").decode()
    anchor = "\n\n        _unset_checkpointing()\n"
    older = (
        "\n\n        # Release the recomputation-leaf gradients (older comment).\n"
        "        for inp in detached_inputs:\n            if isinstance(inp, torch.Tensor):\n"
        "                inp.grad = None\n"
    )
    assert anchor in text
    return {RANDOM_PY: text.replace(anchor, older + anchor, 1)}


HC_PY = "megatron/core/transformer/transformer_layer.py"
HC_TEST = "tests/unit_tests/transformer/test_hyper_connection_layer_retention.py"
OLDER_HC_COMMENT = "+        # Release the manager after use (older comment)."
_HC_FIX_LINE = "+        self.mlp_norm_manager = None"


def _older_hc_fix() -> str:
    """0003 with a comment line above its one line: an earlier revision (same code, another
    comment), as #6338's branch could hold."""
    text = FIX_0003.read_text()
    assert text.count(_HC_FIX_LINE) == 1
    text = text.replace(_HC_FIX_LINE, f"{OLDER_HC_COMMENT}\n{_HC_FIX_LINE}")
    text = re.sub(r"^(@@ -\d+,\d+ \+\d+),(\d+) @@", lambda m: f"{m[1]},{int(m[2]) + 1} @@",
                  text, count=1, flags=re.M)  # fmt: skip
    return text.replace("1 insertion(+)", "2 insertions(+)")


def _fix_author() -> str:
    line = next(x for x in FIX_0001.read_text().splitlines() if x.startswith("From: "))
    return line[len("From: ") :]


def _ours(w: Live, path: str) -> str | None:
    """`path` as this repo's patches make it on the pinned base."""
    work = w.tmp / "ours"
    if not work.exists():
        git.git("clone", "-q", str(w.upstream.bare), str(work), cwd=w.tmp)
    git.git("checkout", "-q", "--detach", w.upstream.base_commit, cwd=work)
    patches = sorted(FIX_0001.parent.glob("000[1-4]-*.patch"))
    git.git("apply", *map(str, patches), cwd=work)
    return (work / path).read_text()


def test_foreign_commit_on_another_file_gets_one_commit_on_top_and_a_noop_rerun(live, capsys):
    w = live(ckpt_commits=[(AUTHOR, "Author's own note", {"NOTES.md": "mine\n"})])
    foreign = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run("--dry-run", "--json", CKPT) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["branch"]["kind"] == "fast-forward" and w.writes() == []
    assert w.run(CKPT) == 0
    new = w.head(sc.CHECKPOINT_BRANCH)
    assert new != foreign and w.reachable(foreign, sc.CHECKPOINT_BRANCH)
    assert git.commit_parents(new, cwd=w.fork_git) == [foreign]  # exactly one commit on top
    record = git.rev_parse(f"refs/patchcarry/published/{sc.CHECKPOINT_BRANCH}", cwd=w.fork_git)
    assert record == new
    body = w.pull(6339).body
    assert body.startswith(HAND_6339)  # the hand-written text, byte for byte
    assert "<!-- patchcarry:begin entry=checkpoint-grad" in body and "fast-forward" in body
    assert w.pull(6339).title == sc.CHECKPOINT_TITLE
    assert len(w.comments(6339, "patchcarry:revision")) == 1
    capsys.readouterr()
    before = len(w.gh.requests)
    assert w.run("--json", CKPT) == 0  # second run: a no-op
    result = json.loads(capsys.readouterr().out)
    assert result["action"] == "unchanged" and result["branch"]["kind"] == "unchanged"
    assert w.gh.requests[before:] and not [r for r in w.gh.requests[before:] if r.is_write]
    assert len(w.comments(6339, "patchcarry:revision")) == 1
    assert result["cost"]["api_reads"] <= 10 and result["cost"]["bytes_fetched"] < 1_000_000
    gets = collections.Counter(
        (r.path, tuple(sorted(r.query.items()))) for r in w.gh.requests[before:]
    )
    assert [k for k, n in gets.items() if n > 1] == []  # each object read at most once


def test_6339_shape_earlier_revision_gets_one_revising_commit_and_a_noop_rerun(live, capsys):
    """Also: the refresh shows the rules of dev and the DCO verdict of the new head (it was
    test_refresh_shows_the_rules_of_dev_and_the_dco_verdict_of_the_new_head)."""
    w = live(ckpt_commits=[(AUTHOR, sc.CHECKPOINT_TITLE, _older_fix)])
    w.gh.state.add_branch_rule(sc.UPSTREAM, "dev", "required_linear_history")
    w.gh.state.add_branch_rule(sc.UPSTREAM, "dev", "required_signatures")
    foreign = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run("--dry-run", "--json", CKPT) == 0  # plain: the live PR's head stays
    planned = json.loads(capsys.readouterr().out)
    assert planned["branch"]["kind"] == "unchanged" and planned["branch"]["held"]
    assert not [c for c in planned["writes"] if "push" in c or "PATCH" in c]
    assert w.run("--dry-run", "--json", "--update-live", CKPT) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["branch"]["kind"] == "fast-forward" and w.writes() == []
    assert planned["branch"]["revises"]["sha"] == foreign
    assert "comment/whitespace" in planned["branch"]["revises"]["why"]
    rules = planned["rules"]
    assert rules["required_status_checks"] == ["DCO gate"]
    assert rules["required_signatures"] and rules["required_linear_history"]
    assert rules["verdicts"]["check DCO gate"].startswith("satisfied")
    assert rules["verdicts"]["signed commits"].startswith("NOT satisfied")
    assert w.run("--json", "--update-live", CKPT) == 0
    result = json.loads(capsys.readouterr().out)
    new = w.head(sc.CHECKPOINT_BRANCH)
    assert result["rules"]["after_push"] == {
        "sha": new, "dco": {"DCO": "success", "DCO gate": "success"}}  # fmt: skip
    assert f"DCO: DCO success, DCO gate success for {new[:12]}" in result["facts"]
    assert git.commit_parents(new, cwd=w.fork_git) == [foreign]  # one commit, nothing dropped
    assert (git.show_file(new, RANDOM_PY, cwd=w.fork_git) or b"").decode() == _ours(w, RANDOM_PY)
    _, message, _ = git.git("log", "-1", "--format=%an <%ae>%n%B", new, cwd=w.fork_git)
    author, subject = message.splitlines()[:2]
    assert author == _fix_author() and subject.endswith("to the revision carried by patchcarry")
    assert foreign[:12] in message  # the DCO: signed off by its author, in their own words
    assert message.rstrip().splitlines()[-1] == f"Signed-off-by: {_fix_author()}"
    assert w.pull(6339).body.startswith(HAND_6339)
    capsys.readouterr()
    assert w.run("--json", CKPT) == 0  # second run: a no-op
    result = json.loads(capsys.readouterr().out)
    assert result["action"] == "unchanged" and result["writes"] == []
    assert w.head(sc.CHECKPOINT_BRANCH) == new


def test_earlier_revision_also_edited_by_a_maintainer_is_refused(live, capsys):
    def maintainer_edit(upstream: UpstreamRepo) -> dict[str, str]:
        text = _older_fix(upstream)[RANDOM_PY]
        return {RANDOM_PY: text.replace("(older comment).", "(maintainer's wording).")}

    w = live(ckpt_commits=[(AUTHOR, sc.CHECKPOINT_TITLE, _older_fix),
                           (MAINTAINER, "Reword the comment", maintainer_edit)])  # fmt: skip
    foreign = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run(CKPT) == 1
    out = " ".join(capsys.readouterr().out.split())  # the plan's lines wrap at 120 columns
    assert "REFUSED" in out and "holds an earlier revision" in out
    assert "someone else also edited the lines it revises" in out
    assert w.writes() == [] and w.head(sc.CHECKPOINT_BRANCH) == foreign
    assert w.pull(6339).body == HAND_6339


def test_rewrite_names_what_it_drops(live, capsys):
    w = live(ckpt_commits=[(AUTHOR, sc.CHECKPOINT_TITLE, _older_fix)])
    foreign = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run("--rewrite", "--dry-run", CKPT) == 0
    out = capsys.readouterr().out
    assert f"drops {foreign[:12]} iiap <1471127927@qq.com>: {sc.CHECKPOINT_TITLE}" in out
    assert w.run("--rewrite", CKPT) == 0
    assert not w.reachable(foreign, sc.CHECKPOINT_BRANCH)
    assert w.pull(6339).body.startswith(HAND_6339)


def test_6338_shape_with_an_earlier_revision_keeps_both_merges_and_adds_the_tests(live):
    w = live(hc_shape=True, hc_fix=_older_hc_fix())
    old = w.head(sc.HC_BRANCH)
    assert w.run("--update-live", HC) == 0
    new = w.head(sc.HC_BRANCH)
    assert git.commit_parents(new, cwd=w.fork_git) == [old]  # both merges stay, one on top
    live_text = (git.show_file(old, HC_PY, cwd=w.fork_git) or b"").decode()
    assert OLDER_HC_COMMENT[1:] in live_text  # the merges of dev kept the older revision
    expected = live_text.replace(OLDER_HC_COMMENT[1:] + "\n", "")  # only it changes
    assert git.show_file(new, HC_PY, cwd=w.fork_git) == expected.encode()
    assert git.show_file(new, HC_TEST, cwd=w.fork_git)  # the missing test patch came too
    assert w.pull(6338).body.startswith("Hand-written #6338 description.\n")
    writes = len(w.gh.writes())
    assert w.run(HC) == 0
    assert len(w.gh.writes()) == writes and w.head(sc.HC_BRANCH) == new


def test_6338_shape_plain_run_pushes_nothing_and_opted_in_adds_only_the_missing_tests(live, capsys):
    w = live(hc_shape=True)
    old = w.head(sc.HC_BRANCH)
    _, log, _ = git.git("log", "--format=%an", f"{old}", "-3", cwd=w.fork_git)
    assert log.split("\n")[:2] == ["iiap", "Xin Yao"]
    assert w.run(HC) == 0  # plain: the head holds the carried fix, only the cross-link is missing
    out = " ".join(capsys.readouterr().out.split())  # the plan's lines wrap at 120 columns
    assert w.head(sc.HC_BRANCH) == old
    assert w.pull(6338).body == "Hand-written #6338 description.\n"
    assert w.writes() == [("POST", "/repos/NVIDIA/Megatron-LM/issues/6017/comments")]
    assert "Held back until you pass --update-live" in out and "`/ok to test " in out
    assert w.run(HC) == 0 and len(w.writes()) == 1  # the cross-link is there now
    capsys.readouterr()
    assert w.run("--update-live", HC) == 0
    out = capsys.readouterr().out
    assert "needs a maintainer's `/ok to test" in out  # the cost, said again as it is paid
    assert w.reachable(old, sc.HC_BRANCH)
    assert git.commit_parents(w.head(sc.HC_BRANCH), cwd=w.fork_git) == [old]
    assert w.pull(6338).body.startswith("Hand-written #6338 description.\n")
    writes = len(w.gh.writes())
    assert w.run(HC) == 0
    assert len(w.gh.writes()) == writes


def test_ticked_box_and_added_paragraph_survive_and_rename_stands(live):
    w = live(ckpt_commits=[(AUTHOR, "note", {"NOTES.md": "a\n"})])
    assert w.run(CKPT) == 0
    pull = w.pull(6339)
    pull.body = pull.body.replace("- [ ] a box nobody ticked", "- [x] a box nobody ticked")
    pull.body += "\r\n\r\nA paragraph a reviewer added.\r\n"
    pull.title = "Maintainer's title"
    outside = pull.body.split("<!-- patchcarry:begin")[0], pull.body.split("-->")[-1]
    _commit(w.work, MAINTAINER, "maintainer tweak", {"MORE.md": "x\n"})  # the branch moves
    git.git("fetch", "-q", str(w.fork_git), sc.CHECKPOINT_BRANCH, cwd=w.work)
    git.git("rebase", "-q", "FETCH_HEAD", cwd=w.work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", f"HEAD:refs/heads/{sc.CHECKPOINT_BRANCH}", cwd=w.work)
    assert w.run(CKPT) == 0
    after = w.pull(6339).body
    assert after.split("<!-- patchcarry:begin")[0] == outside[0]
    assert after.split("-->")[-1] == outside[1]
    assert w.pull(6339).title == "Maintainer's title"
    w.manifest.write_text(w.manifest.read_text().replace(sc.CHECKPOINT_TITLE, "New title"))
    assert w.run(CKPT) == 0
    assert w.pull(6339).title == "New title"  # the manifest's title changed: it is set


def test_one_commit_on_a_live_branch_carries_each_added_fix_of_a_series(tmp_path):
    import dataclasses

    from patchcarry.manifest import load
    from patchcarry.resubmit.live import Cache

    entry = load().select(["checkpoint-grad"])[0]
    other = load().select(["hc-mlp-norm-manager"])[0].fix
    second = dataclasses.replace(  # its own author, signed off with their name and email
        other, author_name="Other Author",
        signoffs=(f"Other Author <{other.author_email}>",),
    )  # fmt: skip
    series = dataclasses.replace(entry, fixes=(entry.fix, second))
    repo = tmp_path / "r"
    git.init(repo)
    tree = git.git("write-tree", cwd=repo)[1].strip()
    live = git.commit_tree(tree, [], "live\n", author=("A", "a@x", "2026-01-01T00:00:00Z"),
                           cwd=repo)  # fmt: skip
    both = Cache(repo).commit_on(live, tree, series, [entry.fix.name, second.name])
    message = git.git("log", "-1", "--format=%an%n%B", both, cwd=repo)[1]
    assert message.startswith(f"{entry.fix.author_name}\n{entry.fix.subject}\n")
    assert f"\n{second.subject}\n" in message  # the second fix commit is described too
    only_second = Cache(repo).commit_on(live, tree, series, [second.name])
    message = git.git("log", "-1", "--format=%an%n%s", only_second, cwd=repo)[1]
    assert message.splitlines() == ["Other Author", second.subject]  # its own author and title


def test_the_added_commit_carries_the_authors_own_signoff_or_is_refused():
    from patchcarry.manifest import load
    from patchcarry.resubmit.live import author_signoff

    entry = next(e for e in load().entries if e.name == CKPT)
    assert author_signoff(entry) == f"{_fix_author()}"  # the patch's own words, byte for byte
    unsigned = dataclasses.replace(
        entry,
        fixes=(dataclasses.replace(entry.fix, signoffs=("Someone Else <else@example.com>",)),),
        tests=tuple(dataclasses.replace(t, signoffs=()) for t in entry.tests),
    )
    with pytest.raises(FatalError, match="no patch carries a `Signed-off-by:` of"):
        author_signoff(unsigned)


def _carried_fix(upstream: UpstreamRepo) -> dict[str, str]:
    """random.py with exactly the carried fix: #6339's head holds the fix and no test."""
    work = upstream.bare.parent / "carried"
    if not work.exists():
        git.git("clone", "-q", str(upstream.bare), str(work), cwd=upstream.bare.parent)
    git.git("checkout", "-q", "--detach", upstream.base_commit, cwd=work)
    git.git("apply", str(FIX_0001), cwd=work)
    text = (work / RANDOM_PY).read_text()
    git.git("checkout", "-q", "--", ".", cwd=work)
    return {RANDOM_PY: text}


def test_update_live_on_6339s_real_description_adds_only_what_it_lacks(live):
    w = live(ckpt_commits=[(AUTHOR, sc.CHECKPOINT_TITLE, _carried_fix)])
    pb.commit_evidence(w.tmp, "git@github.com:carrier/patches.git")
    w.pull(6339).body = pb.REAL_6339
    old = w.head(sc.CHECKPOINT_BRANCH)
    assert w.run("--update-live", CKPT) == 0
    body = w.pull(6339).body
    assert body.startswith(pb.REAL_6339)  # the hand-written description, whole
    added = body[len(pb.REAL_6339) :]
    assert not pb.paragraphs(added) & pb.paragraphs(pb.REAL_6339)  # no paragraph of it again
    # none of the description's figures again; the figures it lacks: what the fix frees
    # alone and with #6338 merged (issue 48, "Why both PRs?")
    figures = set(re.findall(r"\d[\d,.]*\s?[kMG]B\b", pb.REAL_6339))
    assert figures and not any(f in added for f in figures)
    assert "Re-submission" not in added and "Measured impact" not in added
    assert "### Why both PRs?" in added and "With #6338 merged" in added
    assert f"\n{pb.TEST_COMMAND}\n" in added  # what it lacked
    assert "Evidence (counted on CPU): [`evidence/hc-gpt-cpu.json`](https://github.com/" in added
    assert not any(words in body for words in pb.TOOL_WORDS)

    new = w.head(sc.CHECKPOINT_BRANCH)
    assert git.commit_parents(new, cwd=w.fork_git) == [old]  # the test, one commit on top
    (comment,) = w.comments(6339, "patchcarry:revision")
    assert "+def test_checkpoint_clears_detached_input_grad():" in comment  # the added lines
    assert "+    assert torch.equal(input1.grad, input2.grad)" in comment
