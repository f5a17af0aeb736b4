"""Whether the token can finish the run, judged before the first write from answers the run
reads anyway (GitHub's own rules, as its documentation states them):

- the token's kind, from its prefix: a fine-grained personal access token, a GitHub App's
  token or an Actions `GITHUB_TOKEN` reaches only repositories its owner granted; upstream
  answers its writes (open the PR, edit it, comment) with 403 "Resource not accessible by
  personal access token" / "... by integration", after the fork push has already landed;
- a classic (or OAuth) token's scopes, from `X-OAuth-Scopes` on every answer: writes to a
  public repository need `public_repo` (or `repo`);
- GitHub's receive-pack refuses a push whose new commits create or update a file under
  `.github/workflows/` unless the token has the `workflow` scope. A push needs it when the
  pushed head's `.github/workflows` tree differs from what the fork has there (its branch,
  or for a new branch its default branch, or upstream's for a fork still to be made).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from patchcarry import git
from patchcarry.github import ACTIONS, APP_USER, CLASSIC, FINE_GRAINED, OAUTH
from patchcarry.resubmit.live import Cache
from patchcarry.resubmit.observe import ForkSide

WORKFLOWS = ".github/workflows"
_NO_SCOPES = {
    FINE_GRAINED: "Resource not accessible by personal access token",
    APP_USER: "Resource not accessible by integration",
    ACTIONS: "Resource not accessible by integration",
}


def _workflows_tree(commit: str, cwd: Any) -> str | None:
    """The id of `commit`'s .github/workflows tree (None: it has none). Trees only."""
    code, out, _ = git.git(
        "rev-parse", "-q", "--verify", f"{commit}:{WORKFLOWS}", cwd=cwd, check=False
    )
    return out.strip() if code == 0 else None


def workflow_change(
    target: str | None,
    push_from: Path | None,
    cache: Cache,
    branch: str,
    live: str | None,
    side: ForkSide | None,
) -> str | None:
    """Why the planned push needs the `workflow` scope, or None when it does not push or
    leaves .github/workflows as the fork has it (its `branch` at `live`, else what `side` read;
    that commit's trees are fetched into the cache here, by the id observed)."""
    if target is None or push_from is None:
        return None
    pushed = _workflows_tree(target, push_from)
    have, where = live, f"the fork's {branch}"
    if live is None and side is not None:
        have, where = side.sha, side.where
        if side.sha is not None:
            cache.fetch_head(cache.add_fork(side.url), side.sha)
    if have is not None and _workflows_tree(have, cache.repo) == pushed:
        return None
    if have is None and pushed is None:
        return None
    return f"the pushed history changes {WORKFLOWS}/ relative to {where}"


def judge(
    kind: str | None,
    scopes: frozenset[str] | None,
    *,
    login: str,
    upstream: str,
    api_writes: bool,
    workflow: str | None,
) -> tuple[dict[str, Any], str]:
    """(what the plan shows about the token, the one-line refusal or "")."""
    needed: list[str] = []
    if api_writes:
        needed.append(f"public_repo (open/refresh the PR on {upstream})")
    if workflow:
        needed.append(f"workflow ({workflow})")
    shown: dict[str, Any] = {
        "kind": kind,
        "scopes": sorted(scopes) if scopes is not None else None,
        "needs": needed,
    }
    if kind is None:
        return shown, ""
    owner = upstream.split("/")[0]
    if kind in _NO_SCOPES and api_writes and owner.lower() != login.lower():
        return shown, (
            f"GITHUB_TOKEN is a {kind} token: GitHub answers its writes on {upstream} (not "
            f'{login}\'s) with 403 "{_NO_SCOPES[kind]}", so the PR could not be opened or '
            "refreshed after the push; use a classic token with the public_repo and workflow "
            "scopes (docs/operations.md)"
        )
    if kind not in (CLASSIC, OAUTH) or scopes is None:
        return shown, ""
    missing = []
    if api_writes and not scopes & {"repo", "public_repo"}:
        missing.append("public_repo")
    if workflow and "workflow" not in scopes:
        missing.append("workflow")
    if not missing:
        return shown, ""
    why = "; ".join(n for n in needed if n.split(" ")[0] in missing)
    have = ", ".join(sorted(scopes)) or "none"
    return shown, (
        f"GITHUB_TOKEN ({kind}, scopes: {have}) lacks the {' and '.join(missing)} scope: "
        f"{why}; GitHub would refuse it part-way. Add the scope (classic token settings, or "
        f"`gh auth refresh -s {','.join(missing)}`), then re-run"
    )
