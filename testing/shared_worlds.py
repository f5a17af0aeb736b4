"""Fixture worlds built once per test run and shared, read-only, by every module and every
xdist worker that needs them (testing/once.py); a test takes a cheap copy (`UpstreamRepo.copy`)
of what it changes. Each world is named by what it holds, so two modules that asked for the
same one (test_resubmit's and test_resubmit_live's upstream) share one build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from testing import adopt_scenarios as ad
from testing import journey as jr
from testing import widgets as wd
from testing.once import once_dir
from testing.upstream_repos import FIX_0001, FIX_0003, UpstreamRepo, make_upstream

_BASE = "base-commit"


def _upstream_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], UpstreamRepo]
) -> UpstreamRepo:
    def make(dest: Path) -> None:
        repo = build(dest)
        (dest / _BASE).write_text(repo.base_commit)

    dest = once_dir(tmp_path_factory, name, make)
    return UpstreamRepo(dest / "upstream.git", dest / "work", (dest / _BASE).read_text())


def resubmit_upstream(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    """The fixture upstream with #6117's and #6017's heads (the fix of each, on the base):
    the resubmit tests' starting point. Shared: copy it before changing anything."""

    def build(dest: Path) -> UpstreamRepo:
        repo = make_upstream(dest)
        repo.add_pull_head(6117, FIX_0001)
        repo.add_pull_head(6017, FIX_0003)
        return repo

    return _upstream_once(tmp_path_factory, "resubmit-upstream", build)


def adopt_upstream(tmp_path_factory: pytest.TempPathFactory) -> UpstreamRepo:
    """The fixture upstream with the heads adopt reads: #6117 (one commit), #6017 (dev merged
    into it, like 6a1b608) and #6200 (a three-commit series). Shared: copy it first."""

    def build(dest: Path) -> UpstreamRepo:
        repo = make_upstream(dest)
        repo.add_pull_head(6117, FIX_0001)
        repo.add_pull_head(6017, FIX_0003, merge_dev=True)
        repo.add_pull_head(6200, ad.three_commit_series())
        return repo

    return _upstream_once(tmp_path_factory, "adopt-upstream", build)


def widgets_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """acme/widgets' repositories (testing/widgets.py), to be copied with `copytree`."""
    return once_dir(tmp_path_factory, "widgets", wd.make_widgets)


def journey_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """acme/widgets with every journey shape's head (testing/journey.py), for `jr.copy`."""
    return once_dir(tmp_path_factory, "journey", lambda d: jr.build_template(d / "w")) / "w"
