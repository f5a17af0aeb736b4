"""A refused push in one line, from `git.Pushed`: the server's reason first, then a lease."""

from __future__ import annotations

import re

from patchcarry import push_protection, tokens
from patchcarry.errors import FatalError
from patchcarry.git.remote import Pushed
from patchcarry.git.sha import short


class LeaseRejected(FatalError):
    """The fork branch moved since it was read: someone else pushed."""


class PushRefused(FatalError):
    """The server refused a ref for its own reason (not a lease): nothing more is written."""


# GitHub's documented refusals, by the words of its reason or the GHxxx code GitHub prints
# only on `remote:` lines: what the user does about each.
_REASONS = (
    (("without `workflow` scope",), "the token needs the `workflow` scope to push commits that "
     "change .github/workflows/ (classic token: tick `workflow`; `gh auth refresh -s workflow`)"),
    (("without `workflows` permission",), "the GitHub App needs the `workflows` permission to "
     "push commits that change .github/workflows/; use a classic token with `workflow`"),
    (("hidden ref",), "GitHub reserves that ref namespace (refs/pull/...); nothing may push there"),
    (("protected branch hook declined", "GH006"), "the fork's branch is protected (GH006); lift "
     "the protection on the fork or set another head_branch"),
    (("repository rule violations", "GH013"), "a ruleset of the fork refuses this push (GH013); "
     "see the rule it names, then change the ruleset or set another head_branch"),
    (("email privacy restrictions", "GH007"), "the commit carries an email your GitHub account "
     "keeps private (GH007; the tool commits with the patch author's email): untick \"Block "
     "command line pushes that expose my email\" at https://github.com/settings/emails, or carry "
     "a patch made with your noreply address"),
    (("pre-receive hook declined",), "a server-side hook refused it; see the `remote:` lines"),
)  # fmt: skip


def _advice(text: str) -> str:
    low = text.lower()
    return next((said for keys, said in _REASONS if any(k.lower() in low for k in keys)), "")


_REMOTE_CODE = re.compile(r"^(?:error:\s*)?(GH\d{3}: .*)$")


def raise_push_failure(pushed: Pushed, branch: str, expected: str | None) -> None:
    """The one line for a refused push: the server's reason (quoted, what to do), then a lease."""
    # in an atomic push the refs the server did not object to say so: the reason is the
    # other ref's, so that one is quoted first
    refused = sorted((r for r in pushed.refs if not r.accepted), key=lambda r: r.atomic)
    codes = [m.group(1) for m in map(_REMOTE_CODE.match, pushed.server) if m]
    for result in (r for r in refused if r.remote):
        advice = push_protection.advice(pushed.server) or _advice(result.why) or _advice(str(codes))
        said = f" (remote: {codes[0][:200]!r})" if codes else ""
        raise PushRefused(f"GitHub refused the push to {result.ref}: {result.why!r}{said}"
                          + (f": {advice}" if advice else "")
                          + "; nothing after the push was written")  # fmt: skip
    if any(r.lease for r in refused):
        raise LeaseRejected(
            f"push to {branch} refused by the lease: the fork branch is no longer at "
            f"{short(expected or 'absent')} (someone pushed to it); inspect it, then re-run"
        )
    if pushed.lagging:
        raise FatalError(
            f"the fork does not accept the push to {branch} yet (a new fork's git side lags "
            "its API): retry in a minute"
        )
    need = f"check {tokens.variable()}'s push access"
    raise FatalError(f"git push to the fork failed: {pushed.last}; {need}")
