"""Finds a user's upstream PRs closed by fork detachment and not yet re-submitted.

Re-submitted means: a manifest entry that lists it under `supersedes` records its new `pr`, or
it carries this tool's cross-link comment (so a re-submission from another checkout counts).
"""

from __future__ import annotations

import dataclasses

from patchcarry.github import GitHub
from patchcarry.resubmit import classify
from patchcarry.resubmit.body import LINK_PREFIX
from patchcarry.resubmit.classify import Classification
from patchcarry.resubmit.preflight import own_comments
from patchcarry.resubmit.reads import Reads, pull_state


@dataclasses.dataclass
class Found:
    item: Classification
    title: str
    resubmitted_by: str | None  # "#6339 (manifest entry X)" / "cross-link comment" / None
    planned_in: str | None = None  # a manifest entry lists it but has no PR yet

    def to_json(self) -> dict[str, object]:
        return {
            **self.item.to_json(),
            "title": self.title,
            "resubmitted_by": self.resubmitted_by,
            "planned_in": self.planned_in,
        }


def scan(
    gh: GitHub,
    upstream: str,
    author: str,
    known: dict[int, tuple[str, int | None]],
    *,
    trusted: str | None = None,
) -> list[Found]:
    """Every closed-by-detachment PR of `author` on `upstream`; `known` maps a PR number to the
    manifest entry that supersedes it and that entry's recorded PR (None if none yet). Only
    cross-link comments written by `trusted` (the token's user; default `author`) count."""
    found: list[Found] = []
    classes = []
    reads = Reads(gh)
    for number in gh.search_closed_pulls(upstream, author):
        item = pull_state(reads, upstream, number)
        pull = reads.pull(upstream, number)
        classes.append(item)
        if item.state != classify.DETACHED:
            continue
        entry, new_pr = known.get(number, (None, None))
        by = f"#{new_pr} (manifest entry {entry})" if entry and new_pr else None
        comments = own_comments(reads.comments(upstream, number), trusted or author)
        if by is None and any(LINK_PREFIX in (c.get("body") or "") for c in comments):
            by = "cross-link comment"
        found.append(Found(item, pull.get("title", ""), by, entry if by is None else None))
    classify.add_sibling_evidence(classes)
    return sorted(found, key=lambda f: f.item.number)
