"""`patchcarry tree`: an upstream source tree at the pinned base (or tip), fetched cheaply."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchcarry import cli, git
from testing.upstream_repos import RANDOM_PY, make_upstream, write_manifest


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory):
    return make_upstream(tmp_path_factory.mktemp("tree-upstream"))


def _tree(upstream, tmp_path: Path, *extra: str) -> int:
    series = write_manifest(tmp_path, base_commit=upstream.base_commit)
    args = ["tree", "--manifest", str(series), "--upstream", str(upstream.bare)]
    return cli.main([*args, "--work-dir", str(tmp_path / "cache"), *extra])


def test_base_tree_is_the_pinned_commit_with_only_the_sparse_paths(upstream, tmp_path, capsys):
    dest = tmp_path / "src"
    assert _tree(upstream, tmp_path, str(dest)) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(dest.resolve())
    assert f"{upstream.base_commit[:12]} checked out; fetched" in err
    assert git.rev_parse("HEAD", cwd=dest) == upstream.base_commit
    base_text = git.show_file(upstream.base_commit, RANDOM_PY, cwd=upstream.bare)
    assert (dest / RANDOM_PY).read_bytes() == base_text
    assert (dest / "README.md").is_file()  # top-level files come with cone mode
    assert _tree(upstream, tmp_path, str(dest)) == 0  # same commit again: reused


def test_tip_tree_and_refusals(upstream, tmp_path):
    tip = tmp_path / "tip"
    assert _tree(upstream, tmp_path, "--at", "tip", str(tip)) == 0
    assert git.rev_parse("HEAD", cwd=tip) == upstream.dev_tip != upstream.base_commit
    assert _tree(upstream, tmp_path, str(tip)) == 5  # holds another commit: refused (input)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    assert _tree(upstream, tmp_path, str(occupied)) == 5
    assert (occupied / "keep.txt").read_text() == "mine"
    unreachable = tmp_path / "nowhere.git"
    series = write_manifest(tmp_path, base_commit=upstream.base_commit)
    code = cli.main(["tree", "--manifest", str(series), "--upstream", str(unreachable),
                     "--work-dir", str(tmp_path / "cache2"), str(tmp_path / "x")])  # fmt: skip
    assert code == 4


def test_measure_fetches_its_tree_through_the_same_fetcher(upstream, tmp_path, monkeypatch):
    import argparse

    from patchcarry.measure import setup as measure

    monkeypatch.delenv("MEGATRON_SRC", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    series = write_manifest(tmp_path, base_commit=upstream.base_commit)
    args = argparse.Namespace(
        model="hc-gpt", megatron_src=None, upstream=str(upstream.bare), manifest=series
    )
    tree = measure.source_tree(args)
    assert tree == tmp_path / "xdg" / "patchcarry" / "trees" / upstream.base_commit
    assert git.rev_parse("HEAD", cwd=tree) == upstream.base_commit
    assert measure.source_tree(args) == tree  # cached: the second call reuses it


def test_a_plain_tree_inside_a_checkout_has_no_commit_of_its_own(tmp_path):
    from patchcarry.runtime import tree as megatron_tree

    outer = tmp_path / "outer"
    git.init(outer)
    git.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
            "-m", "outer", cwd=outer)  # fmt: skip
    plain = outer / "site-packages"
    (plain / "megatron" / "core").mkdir(parents=True)
    assert megatron_tree.tree_commit(plain) is None
    assert megatron_tree.tree_label(plain).endswith("@ unknown commit")
