"""Shared fixtures. Autouse guards keep tests off the real GitHub, the real token and $HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

# Shared fixtures from testing/: the loopback fake GitHub and the patched Megatron tree copies.
pytest_plugins = ["testing.fake_github", "testing.tree_fixtures"]


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
    from patchcarry.github import GitHub

    monkeypatch.setattr(GitHub, "WRITE_SPACING", 0.0)  # tests never sleep between writes
