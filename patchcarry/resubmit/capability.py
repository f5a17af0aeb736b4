"""Whether the token can finish the run, judged before the first write from answers the run
reads anyway (GitHub's own rules, as its documentation states them):

- the token's kind, from its prefix: a fine-grained personal access token, a GitHub App's
  token or an Actions `GITHUB_TOKEN` reaches only repositories its owner granted; upstream
  answers its writes (open the PR, edit it, comment) with 403 "Resource not accessible by
  personal access token" / "... by integration", after the fork push has already landed;
- a classic (or OAuth) token's scopes, from `X-OAuth-Scopes` on every answer: writes to a
  public repository need `public_repo` (or `repo`);
- GitHub's receive-pack refuses a push whose new commits create or update a file under
  `.github/workflows/` unless the token has the `workflow` scope (judged per pushed commit
  by `workflow_scope.needs_scope`).
"""

from __future__ import annotations

from typing import Any

from patchcarry.github import ACTIONS, APP_USER, CLASSIC, FINE_GRAINED, OAUTH

_NO_SCOPES = {
    FINE_GRAINED: "Resource not accessible by personal access token",
    APP_USER: "Resource not accessible by integration",
    ACTIONS: "Resource not accessible by integration",
}


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
