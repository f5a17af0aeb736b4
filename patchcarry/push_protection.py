"""Secret scanning's push protection (GH013 with "GITHUB PUSH PROTECTION" in `remote:`): the
ruleset's advice would be wrong, the secret has to go from the commit."""

from __future__ import annotations

import re

from patchcarry.git.sha import short

_AT = re.compile(r"^-?\s*(commit|path):\s*(\S+)$")


def advice(server: tuple[str, ...]) -> str:
    """What to do about a push push protection refused ("" otherwise), from `remote:` lines."""
    if not any("push cannot contain secrets" in line.lower() for line in server):
        return ""
    where = {m.group(1): m.group(2)[:120] for m in map(_AT.match, server) if m}
    at = f" (commit {short(where['commit'])}, {where['path']})" if len(where) == 2 else ""
    return (f"GitHub's push protection found a secret in a pushed commit{at}: remove it from the "
            "patch that carries it and re-run; if it is no secret, follow the URL on GitHub's "
            "`remote:` lines to allow it")  # fmt: skip
