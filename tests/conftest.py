"""Shared fixtures. Autouse guards keep tests off the real GitHub and the real token."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_real_github(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may see a real token or reach github.com: the loopback host is forced."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("GH_HOST", "http://127.0.0.1:9")  # discard port: fails fast if used
