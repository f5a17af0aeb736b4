"""Upstream's active rules for the base branch (GitHub's `GET /repos/{owner}/{repo}/rules/
branches/{branch}`), and which of them the commits this tool writes satisfy, judged locally:

- a required status check whose name says DCO: every commit the tool writes carries its
  author's `Signed-off-by:` (patches are loaded only with it; the added commit carries it);
- `required_signatures`: the tool signs nothing (no GPG/SSH key is ever given to it), and
  GitHub's squash merge signs only for the PR's author (none on GitHub Enterprise Server);
- `required_linear_history`: the tool writes no merge commit.

Other checks are upstream CI's to decide after the push; after it, the write phase reads the
head's check runs once and reports the DCO result when it is there.
"""

from __future__ import annotations

from typing import Any, Protocol

from patchcarry.github import Json, NotFoundError

_SIGNED_OFF = "satisfied: every commit the tool writes is signed off by its author"
# What the rulesets answer cannot show: a classic branch protection is read only with admin
# rights on the repository (GET .../branches/{branch}/protection answers 404 to anyone else).
_CLASSIC = "classic branch protection: not readable without admin rights on upstream"


class Reader(Protocol):
    def branch_rules(self, upstream: str, branch: str) -> list[Json]: ...


def read(reads: Reader, upstream: str, branch: str) -> tuple[Json, ...] | None:
    """The branch's active rules; None where GitHub does not serve rulesets (a GitHub
    Enterprise Server without them answers 404): not readable, never "none"."""
    try:
        return tuple(reads.branch_rules(upstream, branch))
    except NotFoundError:
        return None


def judge(rules: list[Json] | None, branch: str) -> dict[str, Any]:
    """What the new head needs on `branch`, and the verdict for the tool's own commits
    (`rules` None: they could not be read)."""
    readable = rules is not None
    rules = rules or []
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
            "NOT satisfied: the tool's commits are unsigned (no key is given to it); GitHub "
            "lets only the PR's author squash-merge into such a branch (and GitHub Enterprise "
            "Server no merge on GitHub at all): a maintainer would merge it locally, signed"
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
        "readable": readable,
    }


def lines(judged: dict[str, Any]) -> list[str]:
    """The plan's sentences for the judged rules."""
    head = f"rules for {judged['branch']}:"
    if not judged.get("readable", True):
        return [
            f"{head} not readable (GET rules/branches answered 404: this GitHub serves no "
            f"rulesets, e.g. an older GitHub Enterprise Server); {_CLASSIC}; what the new "
            "head needs there is not known"
        ]
    if not judged["verdicts"] and not judged["other"]:
        return [f"{head} no ruleset rule active; {_CLASSIC}"]
    out = [f"{head} {name}: {verdict}" for name, verdict in judged["verdicts"].items()]
    if judged["other"]:
        out.append(f"{head} also {', '.join(judged['other'])} (not judged here)")
    out.append(f"{head} {_CLASSIC}")
    return out
