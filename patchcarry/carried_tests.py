"""The tests an entry's test patches add (pytest node ids), read from the patch text."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from patchcarry.patchfile import Patch

# A module-level test function or test class a patch adds.
_ADDED_TEST_RE = re.compile(r"^\+(?:def (test_\w+)\(|class (Test\w+)\b)")


def added_test_ids(patches: Iterable[Patch]) -> list[str]:
    """pytest node ids of the test functions/classes the patches add under tests/."""
    ids = []
    for patch in patches:
        for hunk in patch.hunks:
            if not (hunk.path.startswith("tests/") and hunk.path.endswith(".py")):
                continue
            for line in hunk.lines:
                match = _ADDED_TEST_RE.match(line)
                if match:
                    ids.append(f"{hunk.path}::{match.group(1) or match.group(2)}")
    return ids


def command(patches: Iterable[Patch]) -> str | None:
    """`pytest FILE::TEST ...` for the tests the patches add (None: they add none)."""
    ids = added_test_ids(patches)
    return "pytest " + " ".join(shlex.quote(i) for i in ids) if ids else None


# What an upstream's own unit-test suite needs to run (on CPU: patchcarry/runtime/ stands in).
NEEDS = {
    "nvidia/megatron-lm": (
        "a CUDA device and Python 3.12+: upstream's `tests/unit_tests/conftest.py` imports "
        "`tests/unit_tests/test_utilities.py`, which sets up CUDA and NCCL and imports "
        "`megatron.training`, which imports `typing.override` (Python 3.12)"
    ),
}


def needs(upstream: str) -> str | None:
    """What `upstream`'s unit tests need to run (None: not known to this tool)."""
    return NEEDS.get(upstream.lower())
