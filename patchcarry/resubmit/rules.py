"""Upstream's active rules for the base branch (GitHub's `GET /repos/{owner}/{repo}/rules/
branches/{branch}`), and which of them the commits this tool writes satisfy, judged locally:

- a required status check whose name says DCO: every commit the tool writes carries its
  author's `Signed-off-by:` (patches are loaded only with it; the added commit carries it);
- `required_signatures`: the tool signs nothing (no GPG/SSH key is ever given to it);
- `required_linear_history`: the tool writes no merge commit.

Other checks are upstream CI's to decide after the push; after it, the write phase reads the
head's check runs once and reports the DCO result when it is there.
"""

from __future__ import annotations

from typing import Any

from patchcarry.github import Json

_SIGNED_OFF = "satisfied: every commit the tool writes is signed off by its author"


def judge(rules: list[Json], branch: str) -> dict[str, Any]:
    """What the new head needs on `branch`, and the verdict for the tool's own commits."""
    checks: list[str] = []
    kinds: set[str] = set()
    for rule in rules:
        kinds.add(str(rule.get("type")))
        if rule.get("type") == "required_status_checks":
            wanted = (rule.get("parameters") or {}).get("required_status_checks") or []
            checks.extend(str(c.get("context")) for c in wanted if c.get("context"))
    verdicts: dict[str, str] = {}
    for name in dict.fromkeys(checks):
        dco = "dco" in name.lower()
        verdicts[f"check {name}"] = _SIGNED_OFF if dco else "decided by upstream's CI"
    if "required_signatures" in kinds:
        verdicts["signed commits"] = (
            "NOT satisfied: the tool's commits are unsigned (no key is given to it); a "
            "maintainer's squash merge signs the result"
        )
    if "required_linear_history" in kinds:
        verdicts["linear history"] = "satisfied by the tool's commits (it writes no merges)"
    judged = {"required_status_checks", "required_signatures", "required_linear_history"}
    return {
        "branch": branch,
        "required_status_checks": list(dict.fromkeys(checks)),
        "required_signatures": "required_signatures" in kinds,
        "required_linear_history": "required_linear_history" in kinds,
        "other": sorted(kinds - judged),
        "verdicts": verdicts,
    }


def lines(judged: dict[str, Any]) -> list[str]:
    """The plan's sentences for the judged rules."""
    head = f"rules for {judged['branch']}:"
    if not judged["verdicts"] and not judged["other"]:
        return [f"{head} none active"]
    out = [f"{head} {name}: {verdict}" for name, verdict in judged["verdicts"].items()]
    if judged["other"]:
        out.append(f"{head} also {', '.join(judged['other'])} (not judged here)")
    return out
