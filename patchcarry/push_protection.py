"""Secret scanning's push protection: GitHub refuses the push with the ruleset's reason and
GH013 ("push declined due to repository rule violations"), but its `remote:` lines say
"GITHUB PUSH PROTECTION" ... "Push cannot contain secrets" and where the secret is. The
ruleset's advice would be wrong for it: the secret has to go from the commit."""

from __future__ import annotations

import re

from patchcarry.git.sha import short

_AT = re.compile(r"^remote:\s*-?\s*(commit|path):\s*(\S+)\s*$", re.MULTILINE)


def advice(output: str) -> str:
    """What to do about a push GitHub's push protection refused ("" for any other push)."""
    if "push cannot contain secrets" not in output.lower():
        return ""
    where = {key: value[:120] for key, value in _AT.findall(output)}
    at = f" (commit {short(where['commit'])}, {where['path']})" if len(where) == 2 else ""
    return (
        f"GitHub's push protection found a secret in a pushed commit{at}: remove it from the "
        "patch that carries it and re-run; if it is no secret, follow the URL on GitHub's "
        "`remote:` lines to allow it"
    )
