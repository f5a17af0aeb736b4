"""resubmit and scan against GitHub's fourth round of rules (issue 38), each taught to the
loopback GitHub first: maintainer edits as the user's stated choice, locked conversations,
SAML SSO's partial and 404 answers, a merge's workflow change, the lag of "No commits
between", installation tokens, the title limit, push protection, `fork_collab`, required
signatures, who may edit a PR. Real git, the CLI in-process; a re-run resumes."""

from __future__ import annotations

import json
import types

import pytest

from patchcarry import git
from patchcarry.errors import GitHubError
from patchcarry.github import GitHub
from testing import github_scenarios as sc
from testing.upstream_repos import PINNED_ENV, write_manifest
from tests import test_resubmit
from tests.test_resubmit import ENTRY, PULLS, WORKFLOW, World

template_upstream = test_resubmit.template_upstream  # the fixtures, shared
world = test_resubmit.world

LOCKED = "Unable to create comment because issue is locked."
GRANTS = "Allow edits and access to secrets by maintainers"


def _result(out: str) -> dict:  # type: ignore[type-arg]
    return json.loads(out.strip().splitlines()[-1])


def _manifest(w: World, **entry: object) -> None:
    write_manifest(
        w.tmp,
        base_commit=w.upstream.base_commit,
        overrides={ENTRY: {"pr": None, **entry}, "hc-mlp-norm-manager": {"pr": None}},
    )


# -- "Allow edits by maintainers": the user's stated choice ---------------------------------


def test_maintainer_edits_follow_the_manifest_and_the_plan_says_what_they_grant(world, capsys):
    w: World = world()
    _manifest(w, maintainer_can_modify=False)
    assert w.run("--dry-run", ENTRY) == 0
    out = capsys.readouterr().out
    assert "maintainer edits: off" in out and GRANTS in out
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert w.state.pulls[(sc.UPSTREAM, number)].maintainer_can_modify is False
    assert w.gh.writes()[0].body["maintainer_can_modify"] is False


def test_the_flag_overrides_the_manifest_and_an_existing_pr_is_set_to_the_choice_once(
    world, capsys
):
    w: World = world()
    assert w.run(ENTRY) == 0  # the repository's manifest states true
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    pull = w.state.pulls[(sc.UPSTREAM, number)]
    assert pull.maintainer_can_modify is True
    before = len(w.gh.writes())
    assert w.run("--no-maintainer-edits", ENTRY) == 0
    assert w.gh.writes()[before:][0].body == {"maintainer_can_modify": False}
    assert pull.maintainer_can_modify is False
    after = len(w.gh.writes())
    assert w.run("--no-maintainer-edits", ENTRY) == 0
    assert len(w.gh.writes()) == after  # nothing written twice


def test_an_unstated_choice_grants_nothing_and_says_how_to_grant_it(world, capsys):
    w: World = world()
    text = w.manifest.read_text().replace("maintainer_can_modify = true\n", "")
    w.manifest.write_text(text)
    assert "maintainer_can_modify" not in text
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert w.state.pulls[(sc.UPSTREAM, number)].maintainer_can_modify is False
    out = capsys.readouterr().out
    assert "maintainer edits: off (not stated" in out and "--maintainer-edits" in out


# -- locked conversations ---------------------------------------------------------------------


def test_a_locked_superseded_pr_gets_no_cross_link_a_line_and_the_pr_is_recorded(world, capsys):
    w: World = world()
    w.state.pulls[(sc.UPSTREAM, 6117)].locked = True
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert f"pr = {number}" in w.manifest.read_text()
    assert not [c for c in w.state.comments if c.issue == 6117 and "cross-link" in c.body]
    out = capsys.readouterr().out
    assert "#6117 is locked" in out and "lacks a scope" not in out
    writes = len(w.gh.writes())
    assert w.run(ENTRY) == 0 and len(w.gh.writes()) == writes  # a re-run writes nothing


def test_a_conversation_locked_after_the_read_is_skipped_and_the_pr_recorded_first(world, capsys):
    w: World = world()
    body = {"message": LOCKED, "documentation_url": "https://help.github.com/articles/"
            "locking-conversations/"}  # fmt: skip
    w.gh.fail_next("POST", r"/issues/6117/comments$", 403, body=body)
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    assert f"pr = {number}" in w.manifest.read_text()
    said = "".join(capsys.readouterr())
    assert "locked" in said and "lacks a scope" not in said
    assert w.run(ENTRY) == 0  # unlocked now: the re-run posts the link, no second PR
    assert w.pulls_from(sc.CHECKPOINT_BRANCH) == [number]
    links = [c for c in w.state.comments if c.issue == 6117 and "cross-link" in c.body]
    assert len(links) == 1
    assert sum(1 for r in w.gh.requests if (r.method, r.path) == ("POST", PULLS)) == 1


def test_a_locked_pr_of_ours_gets_its_new_head_but_no_revision_comment(world, capsys):
    w: World = world()
    _manifest(w, tests=None)
    assert w.run(ENTRY) == 0
    (number,) = w.pulls_from(sc.CHECKPOINT_BRANCH)
    first = w.fork_branch()
    w.state.pulls[(sc.UPSTREAM, number)].locked = True
    write_manifest(
        w.tmp,
        base_commit=w.upstream.base_commit,
        overrides={ENTRY: {"pr": number}, "hc-mlp-norm-manager": {"pr": None}},
    )
    capsys.readouterr()
    assert w.run("--update-live", ENTRY) == 0
    assert w.fork_branch() != first  # the new revision is pushed
    assert not [c for c in w.state.comments if c.issue == number]
    assert f"revision comment: not posted, #{number} is locked" in capsys.readouterr().out


# -- SAML SSO: partial results, 404 instead of 403 -----------------------------------------


def _sso(w: World, *, not_found: bool = False) -> None:
    w.state.saml_orgs["NVIDIA"] = "https://github.com/orgs/NVIDIA/sso?authorization_request=A"
    w.state.org_members["NVIDIA"] = {sc.OWNER}
    if not_found:
        w.state.sso_not_found.add("NVIDIA")


def test_scan_all_says_the_list_is_incomplete_when_github_leaves_sso_orgs_out(world, capsys):
    w: World = world()
    _sso(w)
    code = w.scan("--all")
    out = capsys.readouterr().out
    assert "incomplete" in out and "SAML" in out and str(w.state.users["NVIDIA"].id) in out
    assert code != 0


def test_scan_says_the_list_is_incomplete_too(world, capsys):
    w: World = world()
    _sso(w)
    assert w.scan("--json") == 6
    out, err = capsys.readouterr()
    assert out == "" and "incomplete" in err  # stdout stays one JSON object per PR
    w.state.sso_authorized.add((sc.TOKEN, "NVIDIA"))
    assert w.scan("--json") == 1  # authorized: the whole list, #6117 and #6017 not resubmitted
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_a_supersedes_line_github_hides_behind_sso_is_not_called_wrong(world, capsys):
    w: World = world()
    _sso(w, not_found=True)
    assert w.run("--upstream-url", str(w.upstream.bare), ENTRY) != 0
    err = capsys.readouterr().err
    assert "SAML" in err and "fix that line of the manifest" not in err
    assert w.writes() == []


def test_a_non_member_is_not_asked_for_sso_and_the_run_goes_through(world):
    w: World = world()
    _sso(w)
    w.state.org_members["NVIDIA"] = {sc.MAINTAINER}  # htesd is an outside contributor
    assert w.run(ENTRY) == 0


# -- a workflow change made only in a merge commit -------------------------------------------


def test_a_merge_that_alone_changes_a_workflow_needs_the_scope(world, monkeypatch, capsys):
    """Upstream's dev takes a main->dev merge whose result changes a workflow the fork holds
    otherwise: `git diff-tree` without `-m` prints nothing for it; GitHub refuses the push."""
    w: World = world()
    work = w.upstream.work
    git.git("checkout", "-q", "-B", "side", w.upstream.base_commit, cwd=work)
    (work / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (work / WORKFLOW).write_text("on: push\njobs: {}\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "ci on main", cwd=work, env_extra=PINNED_ENV)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)  # the owner's own push, long ago
    git.git("push", "-q", str(w.fork_git), "HEAD:refs/heads/side", cwd=work)
    git.git("checkout", "-q", "-B", "dev", w.upstream.dev_tip, cwd=work)
    git.git("merge", "-q", "--no-ff", "--no-commit", "side", cwd=work, env_extra=PINNED_ENV)
    (work / WORKFLOW).write_text("on: pull_request\njobs: {}\n")  # the bot's resolution
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "Merge main into dev", cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    w.state.add_token("ghp_publiconly", sc.OWNER, scopes=("public_repo",))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_publiconly")
    assert w.run("--rebase", "--json", ENTRY) == 1
    plan = json.loads(capsys.readouterr().out)
    assert plan.get("action") == "refused", plan  # before the push, not by GitHub's refusal
    assert "lacks the workflow scope" in plan["reason"]
    assert WORKFLOW in plan["reason"] and "merge" in plan["reason"]
    assert w.writes() == [] and w.fork_branch() is None


# -- "No commits between" right after a push ---------------------------------------------


def test_no_commits_between_right_after_the_push_is_rechecked_with_a_bounded_wait(
    world, monkeypatch, capsys
):
    from patchcarry.resubmit import execute

    w: World = world()
    w.state.compare_lag = 2
    sleeps: list[float] = []
    monkeypatch.setattr(execute, "time", types.SimpleNamespace(sleep=sleeps.append))
    assert w.run(ENTRY) == 0
    assert len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1
    assert len(sleeps) == 2 and sum(sleeps) <= 120


def test_no_commits_between_that_lasts_says_so_and_a_rerun_resumes(world, monkeypatch, capsys):
    from patchcarry.resubmit import execute

    w: World = world()
    w.state.compare_lag = 100
    sleeps: list[float] = []
    monkeypatch.setattr(execute, "time", types.SimpleNamespace(sleep=sleeps.append))
    assert w.run(ENTRY) == 6
    err = capsys.readouterr().err
    assert "No commits between" in err and "re-run" in err and sum(sleeps) <= 120
    pushed = w.fork_branch()
    assert pushed is not None and w.pulls_from(sc.CHECKPOINT_BRANCH) == []
    w.state.compare_lag = 0
    assert w.run(ENTRY) == 0
    assert w.fork_branch() == pushed and len(w.pulls_from(sc.CHECKPOINT_BRANCH)) == 1


# -- installation tokens, the title limit ----------------------------------------------------


def test_an_installation_token_meets_the_token_kind_rule_not_a_missing_scope(world, capsys):
    w: World = world(token="ghs_installationtoken")
    assert w.run(ENTRY) != 0
    said = "".join(capsys.readouterr())
    assert "installation" in said and "classic token" in said
    assert "lacks a scope" not in said and w.writes() == []


def test_a_title_over_256_characters_is_refused_before_the_first_write(world, capsys):
    w: World = world()
    _manifest(w, title="A" * 257)
    assert w.run(ENTRY) == 1
    said = "".join(capsys.readouterr())
    assert "256" in said and "title" in said
    assert w.writes() == [] and w.fork_branch() is None


# -- push protection, fork_collab, required signatures, who may edit a PR --------------------


def test_push_protection_gets_the_secret_advice_not_the_rulesets(world, monkeypatch):
    from patchcarry import push_refusals

    w: World = world()
    work = w.tmp / "leak"
    git.git("clone", "-q", str(w.fork_git), str(work), cwd=w.tmp)
    git.git("checkout", "-q", "-B", "leak", w.upstream.base_commit, cwd=work)
    (work / "conf.py").write_text("TOKEN = 'ghp_" + "b2" * 18 + "'\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-q", "-m", "oops", cwd=work, env_extra=PINNED_ENV)
    head = git.rev_parse("HEAD", cwd=work)
    pushed = git.push_refs_with_lease(str(w.fork_git), [(head, "refs/heads/leak", None)], cwd=work)
    assert not pushed.accepted
    with pytest.raises(push_refusals.PushRefused) as caught:
        push_refusals.raise_push_failure(pushed, "leak", None)
    said = str(caught.value)
    assert "secret" in said and "push protection" in said.lower()
    assert "change the ruleset" not in said


def test_fork_collab_gets_its_hint_from_the_errors_field(world):
    w: World = world()
    w.state.users[sc.OWNER].type = "Organization"  # an organisation's fork
    w.state.org_members[sc.OWNER] = {sc.OWNER}
    git.git("push", "-q", str(w.fork_git), "refs/pull/6117/head:refs/heads/x",
            cwd=w.upstream.bare)  # fmt: skip
    gh = GitHub(token=sc.TOKEN)
    with pytest.raises(GitHubError) as caught:
        gh.create_pull(sc.UPSTREAM, title="t", head=f"{sc.OWNER}:x", base="dev", body="b",
                       maintainer_can_modify=True)  # fmt: skip
    assert "Fork collab can't be granted" in str(caught.value)
    assert "cannot grant maintainers push access" in str(caught.value)


def test_required_signatures_line_says_a_squash_merge_is_the_pr_authors_alone():
    from patchcarry.github_types import RuleRef
    from patchcarry.resubmit import gate

    judged = gate.judge_rules([RuleRef("required_signatures")], "dev")
    said = " ".join(gate.rule_lines(judged))
    assert "a maintainer's squash merge signs the result" not in said
    assert "author" in said and "Enterprise Server" in said


def test_the_strangers_pr_rule_is_what_keeps_the_fork_owner_from_taking_it_over(world, monkeypatch):
    """GitHub lets the head's writers edit a PR from it (the loopback one enforces that now:
    a stranger cannot edit ours), so a stranger's PR on the fork's branch is kept from us by
    the tool's own rule alone: without it, the run would edit theirs."""
    from patchcarry.pulls import ownership

    w: World = world()
    w.state.add_token("fake-token-mallory", "mallory")
    theirs = w.state.add_pull(sc.UPSTREAM, title="someone else's", user="mallory",
                              head_ref=sc.CHECKPOINT_BRANCH, head_repo=sc.NEW_FORK,
                              base_ref="dev", body="theirs")  # fmt: skip
    assert w.run(ENTRY) == 1 and w.writes() == []
    monkeypatch.setattr(ownership, "is_own_pr", lambda pull, login: True)
    monkeypatch.setattr(ownership, "refuse_stranger", lambda pull, login: pull)
    assert w.run(ENTRY) == 0  # GitHub would have taken the edit
    assert ("PATCH", f"{PULLS}/{theirs.number}") in w.writes()
    mallory = GitHub(token="fake-token-mallory")
    with pytest.raises(GitHubError) as caught:  # but not the other way round
        mallory.update_pull(sc.UPSTREAM, 6117, body="x")
    assert "403" in str(caught.value)


def test_a_maintainer_may_push_to_the_branch_only_when_the_pr_allows_it(world, monkeypatch):
    w: World = world()
    assert w.run(ENTRY) == 0
    w.state.org_members["NVIDIA"] = {sc.MAINTAINER}
    w.state.sync_push_rules()
    tip = w.fork_branch()
    work = w.tmp / "maint"
    git.git("clone", "-q", str(w.fork_git), str(work), cwd=w.tmp)
    git.git("checkout", "-q", tip, cwd=work)
    git.git("commit", "-q", "--allow-empty", "-m", "a maintainer's merge", cwd=work,
            env_extra=PINNED_ENV)  # fmt: skip
    monkeypatch.setenv("GITHUB_TOKEN", sc.MAINTAINER_TOKEN)
    push = (*git.credential_args(), "push", "--porcelain", str(w.fork_git),
            f"HEAD:refs/heads/{sc.CHECKPOINT_BRANCH}")  # fmt: skip
    assert git.git(*push, cwd=work, check=False)[0] == 0  # the manifest states true
