"""Sites this repository already carries a fix for, by manifest entry name.

A site is known when its name matches the entry's pattern and, where one is given, a tensor of
the site came from the named origin (the function that made it, see `audit.child.ORIGINS`).
Order matters: the `.grad` of a detached input is reached through `mlp_norm_manager` too, but
it is what `checkpoint-grad` frees, so that entry is tried first.
"""

from __future__ import annotations

import re
from typing import Any

KNOWN: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
    (
        "checkpoint-grad",
        re.compile(r"AccumulateGrad\.variable\.grad$"),
        "CheckpointFunction detached input .grad",
    ),
    ("hc-mlp-norm-manager", re.compile(r"^decoder\.layers\.\*\.mlp_norm_manager\b"), None),
)


def entry_for(site: dict[str, Any]) -> str | None:
    """The manifest entry whose fix removes `site` (a grouped site), or None when new."""
    for name, pattern, origin in KNOWN:
        if pattern.search(site["site"]) and (origin is None or origin in site["origins"]):
            return name
    return None
