"""What a documented command prints (testing/docs_outputs.py's `run`), run once per test run
and shared by every test that reads it: tests/test_docs_outputs.py compares it with the block
a doc shows, tests/test_demo_adopt.py checks what the demo did in it (one demo run, not two)."""

from __future__ import annotations

import re

import pytest

from testing import docs_outputs
from testing.once import once_json


def printed(tmp_path_factory: pytest.TempPathFactory, command: str) -> str:
    """`docs_outputs.run(command)` (normalised), computed by the first caller of this run."""
    name = "printed-" + re.sub(r"\W+", "-", command).strip("-")
    out: str = once_json(tmp_path_factory, name, lambda: docs_outputs.run(command))
    return out
