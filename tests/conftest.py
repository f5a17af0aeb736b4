"""Shared fixtures. Autouse guards keep tests off the real GitHub, the real token and $HOME."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

# Shared fixtures from testing/: the loopback fake GitHub and the patched Megatron tree copies.
pytest_plugins = ["testing.fake_github", "testing.tree_fixtures"]

# The test modules that run torch (the proof, measure and audit on the real module). The CPU
# test set on Python 3.12 and 3.13 has no torch (requirements/test-notorch.txt: its +cpu
# build is on disk for cp311 only), so there they skip, saying why; a module that imports
# torch at its top is not collected at all. A new module that runs torch goes here (or marks
# itself `pytest.mark.torch`).
TORCH_MODULES = {
    "test_audit.py",
    "test_audit_holders.py",
    "test_audit_upstream.py",
    "test_audit_walk.py",
    "test_fix_proof.py",
    "test_fix_proof_tp2.py",
    "test_measure.py",
    "test_measure_bf16.py",
    "test_measure_upstream.py",
    "test_upstream_unit_tests.py",
}
HAS_TORCH = importlib.util.find_spec("torch") is not None
_NO_TORCH = (
    f"torch is not installed (Python {sys.version_info.major}.{sys.version_info.minor}'s CPU "
    "test set has no +cpu build here: docs/operations.md, Dependencies)"
)
collect_ignore = [] if HAS_TORCH else sorted(TORCH_MODULES)


def pytest_report_header() -> list[str]:
    return [] if HAS_TORCH else [f"{_NO_TORCH}: not run: {', '.join(sorted(TORCH_MODULES))}"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in TORCH_MODULES or item.get_closest_marker("torch"):
            item.add_marker(pytest.mark.slow)  # a torch child: `scripts/test --fast` skips it
            if not HAS_TORCH:
                item.add_marker(pytest.mark.skip(reason=_NO_TORCH))
    items[:] = sorted(items, key=_longest_first(items))


# Modules whose few tests are long (a stranger's whole journey, a plain install, every
# script's tour, the docs' demos): by their test count alone they would start last.
FEW_LONG_TESTS = {
    "test_journey.py",
    "test_exit_codes.py",
    "test_docs_outputs.py",
    "test_layout.py",
    "test_first_contact.py",
    "test_landing_styles.py",
    "test_demo_live_refresh.py",
    "test_adopt_any_upstream.py",
    "test_megatron_source.py",
}


# Torch modules that only read the proof test_fix_proof.py's fixture builds (testing/once.py):
# handed out beside it, a worker would wait for that build instead of running another child.
READ_THE_PROOF = {"test_fix_proof_tp2.py"}


def _longest_first(items: list[pytest.Item]) -> Callable[[pytest.Item], tuple[int, int]]:
    """The order scripts/test hands whole modules to its workers (`--dist loadfile
    --no-loadscope-reorder`): the modules with a torch child first (their children are the
    longest waits: started last, one worker finishes alone), then FEW_LONG_TESTS, then the
    modules with the most tests, as pytest-xdist's own reordering does. The order within a
    module is kept."""
    counts = Counter(item.path for item in items)
    slow = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item: pytest.Item) -> tuple[int, int]:
        first = 0 if item.path in slow else 1 if item.path.name in FEW_LONG_TESTS else 2
        if item.path.name in READ_THE_PROOF:
            return first, 0  # the last torch module: the proof is built by then
        return first, -counts[item.path]

    return rank


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def _no_real_github(monkeypatch: pytest.MonkeyPatch, _session_cache: Path) -> None:
    """No test may see a real token or reach github.com: the loopback host is forced. Caches
    (the check's scratch repo, fetched trees) go to a temp dir, never the user's ~/.cache."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("GH_HOST", "http://127.0.0.1:9")  # discard port: fails fast if used
    monkeypatch.setenv("XDG_CACHE_HOME", str(_session_cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_session_cache / "no-config"))  # no user manifest
    # pytest-xdist's workers set COLUMNS=80 (and LINES): the tool lays output out to COLUMNS,
    # so a test sees the layout a pipe gets unless it sets COLUMNS itself
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    from patchcarry.github import GitHub

    monkeypatch.setattr(GitHub, "WRITE_SPACING", 0.0)  # tests never sleep between writes
    monkeypatch.setattr(GitHub, "BACKOFF", 0.0)  # nor before a retry (a test's own backoff= may)
