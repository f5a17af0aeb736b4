"""The fake GitHub's rules for a branch and its check runs, with a DCO verdict computed from
the commits, as upstream's DCO App and `DCO gate` (its .github/scripts/dco_gate.py mirrors
the App's conclusion into a repository-owned check) give it.

- GET /repos/{owner}/{repo}/rules/branches/{branch}: the active rules (`GitHubState.
  branch_rules`), readable without authentication for a public repository;
- GET /repos/{owner}/{repo}/commits/{ref}/check-runs: for the head of an open pull request,
  `DCO` (app `dco`) and `DCO gate`: success when every non-merge commit of the pull request
  carries a `Signed-off-by:` whose name and email are its author's or committer's (the App's
  rule, case-insensitive), failure naming the first that does not.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from patchcarry import git as gitmod
from testing.fake_github_json import Json, error_json, user_json
from testing.fake_github_routes import HttpError, Reply, Request, _page, _repo, route
from testing.fake_github_state import GitHubState, Pull, _local_git_dir, fake_sha

DCO_APP, DCO_CHECK, GATE_CHECK = "dco", "DCO", "DCO gate"


@route("GET", "/repos/{owner}/{repo}/rules/branches/{branch}")
def get_branch_rules(state: GitHubState, req: Request, owner: str, repo: str, branch: str) -> Reply:
    found = _repo(state, req, owner, repo, "/repos/rules#get-rules-for-a-branch")
    if not state.rulesets_api:  # a GitHub Enterprise Server that predates rulesets
        raise HttpError(404, error_json(404, "Not Found", "/repos/rules#get-rules-for-a-branch"))
    rules = [
        {**rule, "ruleset_source_type": "Repository", "ruleset_source": found.full_name,
         "ruleset_id": 900 + n}
        for n, rule in enumerate(state.branch_rules.get((found.full_name, branch), []))
    ]  # fmt: skip
    chunk, headers = _page(req, rules)
    return Reply(200, chunk, headers)


def _pull_at(state: GitHubState, repo: str, sha: str) -> Pull | None:
    for pull in state.pulls.values():
        if pull.repo != repo or pull.state != "open" or pull.head_repo is None:
            continue
        head = state.repos.get(pull.head_repo)
        if head is not None and state.branch_sha(head, pull.head_ref) == sha:
            return pull
    return None


def dco_verdict(git_dir: Path, head: str, base: str | None) -> tuple[str, str]:
    """(conclusion, summary) of the DCO App for the commits in `head` and not in `base`."""
    ok = gitmod.git("cat-file", "-e", f"{base}^{{commit}}", cwd=git_dir, check=False)[0] == 0
    limit = ["--not", base] if base and ok else ["--max-count=1"]
    _, out, _ = gitmod.git(
        "log", "--no-merges", "--max-count=250",
        "--format=%H%x00%an%x00%ae%x00%cn%x00%ce%x00%B%x01", head, *limit, cwd=git_dir,
    )  # fmt: skip
    for record in filter(None, (r.strip() for r in out.split("\x01"))):
        sha, an, ae, cn, ce, message = record.split("\x00", 5)
        # dcoapp/app lib/dco.js: a sign-off counts when its name is the author's or the
        # committer's AND its email is the author's or the committer's, case-insensitively
        signed = _SIGNOFF.findall(message)
        if not signed:
            return "failure", f"Commit {sha[:7]} is missing a Signed-off-by from its author"
        names, emails = {an.lower(), cn.lower()}, {ae.lower(), ce.lower()}
        if not any(n.lower() in names and e.lower() in emails for n, e in signed):
            got = ", ".join(f'"{n} <{e}>"' for n, e in signed)
            return "failure", f'Commit {sha[:7]}: Expected "{an} <{ae}>", but got {got}.'
    return "success", "All commits are signed off!"


_SIGNOFF = re.compile(r"^Signed-off-by: (.*) <(.*)>\s*$", re.IGNORECASE | re.MULTILINE)


def _check_run(req: Request, state: GitHubState, pull: Pull, sha: str, name: str,
               conclusion: str, summary: str) -> Json:  # fmt: skip
    ident = int(fake_sha(pull.repo, sha, name)[:6], 16)
    url = f"{req.base}/repos/{pull.repo}/check-runs/{ident}"
    slug = DCO_APP if name == DCO_CHECK else "github-actions"
    app: dict[str, Any] = {
        "id": 1861 if slug == DCO_APP else 15368, "slug": slug, "node_id": f"A_{slug}",
        "client_id": f"Iv1.{slug}", "name": slug,
        "owner": user_json(req.base, state.add_user("dcoapp" if slug == DCO_APP else "github",
                                                    type="Organization")), "description": None,
        "external_url": f"https://github.com/apps/{slug}",
        "html_url": f"https://github.com/apps/{slug}", "created_at": "2018-01-01T00:00:00Z",
        "updated_at": "2018-01-01T00:00:00Z", "permissions": {"checks": "write"},
        "events": ["pull_request"],
    }  # fmt: skip
    return {
        "id": ident, "head_sha": sha, "node_id": f"CR_{ident}", "external_id": "",
        "url": url, "html_url": f"https://github.com/{pull.repo}/runs/{ident}",
        "details_url": None, "status": "completed", "conclusion": conclusion,
        "started_at": pull.updated_at, "completed_at": pull.updated_at,
        "output": {"title": name, "summary": summary, "text": None, "annotations_count": 0,
                   "annotations_url": f"{url}/annotations"},
        "name": name, "check_suite": {"id": ident + 1}, "app": app, "pull_requests": [],
    }  # fmt: skip


def _has_commit(clone_url: str, ref: str) -> bool:
    where = _local_git_dir(clone_url)
    if where is None:
        return False
    code, _, _ = gitmod.git("cat-file", "-e", f"{ref}^{{commit}}", cwd=where, check=False)
    return code == 0


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs")
def list_check_runs(state: GitHubState, req: Request, owner: str, repo: str, ref: str) -> Reply:
    doc = "/checks/runs#list-check-runs-for-a-git-reference"
    found = _repo(state, req, owner, repo, doc)
    pull = _pull_at(state, found.full_name, ref)
    if pull is None and not _has_commit(found.clone_url, ref):
        # github.com, for a sha not (yet) in the repository's network: right after a push,
        # before the PR's refs/pull/N/head moves, this is what a reader gets
        raise HttpError(422, error_json(422, f"No commit found for SHA: {ref}", doc))
    runs: list[Json] = []
    head_dir = _local_git_dir(state.repos[pull.head_repo].clone_url) if pull else None
    if pull is not None and head_dir is not None:
        base = state.branch_sha(found, pull.base_ref)
        conclusion, summary = dco_verdict(head_dir, ref, base)
        runs = [_check_run(req, state, pull, ref, name, conclusion, summary)
                for name in (DCO_CHECK, GATE_CHECK)]  # fmt: skip
    wanted = req.query.get("check_name")
    runs = [r for r in runs if wanted is None or r["name"] == wanted]
    chunk, headers = _page(req, runs)
    return Reply(200, {"total_count": len(runs), "check_runs": chunk}, headers)
