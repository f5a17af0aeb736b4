"""A PR closed by fork detachment whose change has landed upstream since (through another PR,
or NVIDIA's internal process): adopt refuses it as it refuses a merged PR, and `scan --all`
says where it landed instead of offering `adopt`. Real git, loopback GitHub."""

from __future__ import annotations

import json

from patchcarry import cli, git
from testing import github_scenarios as sc
from testing.upstream_repos import FIX_0001, PINNED_ENV
from tests.test_adopt import World, template_upstream, world  # noqa: F401 (fixtures)


def _land_0001(world: World) -> str:  # noqa: F811
    work = world.upstream.work
    git.git("checkout", "-q", "-B", "dev", world.upstream.dev_tip, cwd=work)
    git.git("apply", str(FIX_0001), cwd=work)
    message = "Free checkpoint grads, internal sync (#7001)"
    git.git("commit", "-q", "-am", message, cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    return world.upstream.dev_tip


def test_adopt_refuses_a_pr_whose_change_landed_since(world: World, capsys) -> None:  # noqa: F811
    landed = _land_0001(world)
    before = world.manifest.read_bytes()
    assert world.adopt(f"{sc.UPSTREAM}#6117") == 1
    err = capsys.readouterr().err
    assert "its change has landed upstream since it closed" in err and landed[:12] in err
    assert "(PR #7001)" in err and "nothing to adopt" in err
    assert world.patches() == [] and world.manifest.read_bytes() == before
    assert world.adopt(f"{sc.UPSTREAM}#6017", "--dry-run") == 0  # not landed: still adoptable


def test_scan_all_says_landed_instead_of_adopt(world: World, capsys) -> None:  # noqa: F811
    landed = _land_0001(world)
    cli.main(["scan", "--all", "--json", "--manifest", str(world.manifest)])
    rows = {r["pr"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows[6117]["adopt"] is None
    assert rows[6117]["landing"]["verdict"] == "landed"
    assert rows[6117]["landing"]["commit"]["sha"] == landed
    assert rows[6017]["adopt"] is not None and rows[6017]["landing"]["verdict"] == "not landed"
    cli.main(["scan", "--all", "--manifest", str(world.manifest)])
    out = capsys.readouterr().out
    assert f"landed upstream since, as {landed[:12]}" in out and "nothing to adopt" in out
