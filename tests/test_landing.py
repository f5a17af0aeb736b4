"""`check`'s landing verdict on real histories built with real git (testing/landing_history):
every shape says its verdict and names its commit; no control is ever called landed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchcarry import git
from patchcarry.check import landing
from patchcarry.cli import main
from testing.landing_history import OTHER, SHAPES, LandingWorld, Shape
from testing.shared_worlds import adopt_upstream
from testing.upstream_repos import FIX_0001, PATCHES_DIR, PINNED_ENV, UpstreamRepo, write_manifest

TEST_0002 = PATCHES_DIR / "0002-Test-that-CheckpointFunction.backward-clears-detache.patch"


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _check(world: LandingWorld, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    argv = ["check", "--manifest", str(world.manifest), "--upstream", world.url]
    code = main([*argv, "--work-dir", str(world.root / "wd"), *args])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_landing_verdict(shape: Shape, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = shape.world(tmp_path)
    shape.build(world)
    code, out = _check(world, capsys, "--json")
    (entry,) = json.loads(out)["entries"]
    landing = entry["landing"]
    assert landing["verdict"] == shape.verdict, landing
    if shape.subject is None:
        assert landing["commit"] is None
    else:
        assert landing["commit"]["subject"] == shape.subject
        assert landing["commit"]["pr"] == shape.pr
        assert landing["evidence"]
    assert [c["subject"] for c in landing["changed_since"]][: len(shape.changed_by)] == list(
        shape.changed_by
    )
    merged_by = landing["merged_by"]
    assert (merged_by and merged_by["subject"]) == shape.merge, landing
    if shape.verdict == "undetermined":
        assert landing["partial"] and landing["commit"] is None and code == 1
    if landing["verdict"] in ("landed", "landed, changed since"):
        assert entry["status"] == "landed" and code == 0  # not a failure
        assert "retire widget-grads" in landing["next"]
    if shape.verdict == "superseded":
        assert code == 1 and "retire" in landing["next"]
    if shape.verdict == "landed, then undone":  # not landed any more: keep carrying it
        assert entry["status"] != "landed" and "retire" not in landing["next"]
        assert landing["next"].startswith("keep carrying it: it landed in ")
        assert landing["commit"]["sha"][:12] in landing["next"]


def test_landed_table_says_commit_evidence_and_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = LandingWorld.create(tmp_path)
    world.squash("Clear detached grads in backward (#101)")
    code, out = _check(world, capsys)
    sha = world.tip()
    assert code == 0
    assert (
        f"landing   landed: {sha[:12]} 'Clear detached grads in backward (#101)' (PR #101)" in out
    )
    assert "by: same git patch-id --verbatim over the fix's files" in out
    assert "next: nothing to carry: `scripts/retire widget-grads`" in out
    assert "result: landed upstream, nothing to carry: widget-grads (exit 0)" in out
    assert "tip dev" in out and "conflict" in out and "rejected hunk" not in out  # it is the fix


def test_partial_evidence_is_said_and_not_called_landed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = LandingWorld.create(tmp_path)
    world.squash(
        "Widget internals (#500)",
        after={"        detached.grad = None\n": "        detached.grad = detached.grad\n"},
    )
    code, out = _check(world, capsys, "--json")
    landing = json.loads(out)["entries"][0]["landing"]
    assert landing["verdict"] == "not landed"
    assert any("Widget internals (#500)" in p and "not enough" in p for p in landing["partial"])


def _real_world(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[UpstreamRepo, Path]:
    """A copy of the fixture upstream with #6117 and #6017 (dev merged into it) as adopt's
    tests read it (built once per run; its #6200 is no entry's), and the real manifest."""
    repo = adopt_upstream(tmp_path_factory).copy(tmp_path / "up")
    return repo, write_manifest(tmp_path / "m", base_commit=repo.base_commit)


def _run(
    mf: Path, url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict]:
    argv = ["check", "--json", "--manifest", str(mf), "--upstream", url]
    code = main([*argv, "--work-dir", str(tmp_path / "wd")])
    return code, json.loads(capsys.readouterr().out)


def test_own_fixes_read_not_landed_and_apply(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, mf = _real_world(tmp_path, tmp_path_factory)
    code, data = _run(mf, repo.url, tmp_path, capsys)
    assert code == 0
    for entry in data["entries"]:
        assert entry["status"] == "applies"
        assert entry["landing"]["verdict"] == "not landed"
        assert entry["landing"]["partial"] == []


def test_own_fix_squash_merged_reads_landed(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real 0001 squash-merged on dev as #6339 (its test with it): landed, the other not."""
    repo, mf = _real_world(tmp_path, tmp_path_factory)
    work = repo.work
    git.git("checkout", "-q", "-B", "dev", repo.dev_tip, cwd=work)
    for patch in (FIX_0001, TEST_0002):
        git.git("apply", str(patch), cwd=work)
    git.git("add", "-A", cwd=work)
    git.git(
        "commit",
        "-q",
        "-m",
        "Fix checkpoint grad retention (#6339)",
        cwd=work,
        env_extra=PINNED_ENV,
    )
    git.git("push", "-q", "origin", "HEAD:refs/heads/dev", cwd=work)
    code, data = _run(mf, repo.url, tmp_path, capsys)
    landed = next(e for e in data["entries"] if e["name"] == "checkpoint-grad")["landing"]
    other = next(e for e in data["entries"] if e["name"] == "hc-mlp-norm-manager")["landing"]
    assert code == 0
    assert landed["verdict"] == "landed"
    assert landed["commit"]["sha"] == repo.dev_tip and landed["commit"]["pr"] == 6339
    assert other["verdict"] == "not landed"


# names git quotes in its diffs and lists: non-ASCII, a double quote, a space, glob characters
QUOTED = "megatron/core/na\u00efve.py"
CREATED = 'megatron/core/\u00fcber [v2] "grads".py'


@pytest.mark.parametrize("later", [False, True], ids=["landed", "landed-then-changed"])
def test_file_names_git_quotes_are_read_as_themselves(
    later: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fix that changes `megatron/core/naïve.py` and creates a file whose name git quotes
    (`"megatron/core/\303\274ber [v2] \"grads\".py"` in a diff header) reads landed with
    its commit: every path comes from git's -z forms, never a quoted header (which once keyed
    the created file as `/dev/null` and broke `check --json`)."""
    world = LandingWorld.create(tmp_path, path=QUOTED, creates=CREATED)
    sha = world.squash("Clear detached grads in backward (#101)")
    if later:
        world.commit("dev", {CREATED: {"t.grad = None": "t.grad = t.keep"}}, "Keep (#300)")
    code, out = _check(world, capsys, "--json")
    (entry,) = json.loads(out)["entries"]
    landing = entry["landing"]
    assert landing["verdict"] == ("landed, changed since" if later else "landed"), landing
    assert landing["commit"]["sha"] == sha and code == 0
    assert [d["path"] for d in entry["drift"]] == sorted([QUOTED, CREATED])


def test_diff_files_names_each_section_by_git_s_own_record(tmp_path: Path) -> None:
    """`git.diff_files` pairs each section with the path of git's -z record: a deleted, a
    created and a modified file whose names git quotes, never `/dev/null`."""
    work = tmp_path / "w"
    git.init(work)
    names = [QUOTED, CREATED, "megatron/plain.py"]
    for name in names:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("VALUE = 1\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-qm", "one", cwd=work, env_extra=PINNED_ENV)
    (work / QUOTED).unlink()
    (work / CREATED).write_text("VALUE = 2\n")
    (work / "megatron/new \u00e9.py").write_text("NEW = 1\n")
    git.git("add", "-A", cwd=work)
    git.git("commit", "-qm", "two", cwd=work, env_extra=PINNED_ENV)
    files = git.diff_files("HEAD~1", "HEAD", [], cwd=work)
    assert sorted(p for p, _ in files) == sorted([QUOTED, CREATED, "megatron/new \u00e9.py"])
    parsed = landing.parse_files(files)
    assert [t for _, t in parsed[QUOTED].removed] == ["VALUE = 1"]
    assert parsed["megatron/new \u00e9.py"].added == [(1, "NEW = 1")]
    assert git.changed_paths("HEAD~1", "HEAD", cwd=work) == sorted(p for p, _ in files)
    walked = git.walk(["HEAD"], [], first_parent=True, cwd=work)  # the root commit too
    assert [(len(parents), subject) for _, parents, _, subject, _ in walked] == [
        (1, "two"),
        (0, "one"),
    ]
    assert sorted(walked[0][4]) == sorted(p for p, _ in files)  # names from -z, unquoted


def test_the_fix_s_lines_added_in_another_function_are_not_its_landing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A commit that adds the fix's lines elsewhere in the same file (another function, as
    pallets/click's f316d5cb did beside PR #3621) and rewrites the line the fix removes does
    not carry it: each of the fix's hunks is matched only where its neighbouring lines agree."""
    world = LandingWorld.create(tmp_path)
    world.commit(
        "dev",
        {
            world.path: {
                "    grads = run_backward(outputs, inputs)\n": (
                    "    grads = run_backward(outputs, list(inputs))\n"
                ),
                "    print(widget.size)\n": (
                    "    print(widget.size)\n"
                    "    grads = run_backward(outputs, tuple(inputs))\n"
                    "    for detached in inputs:\n"
                    "        detached.grad = None\n"
                ),
            }
        },
        "Report the widget's grads (#400)",
    )
    code, out = _check(world, capsys, "--json")
    landing = json.loads(out)["entries"][0]["landing"]
    assert landing["verdict"] == "not landed", landing
    assert landing["commit"] is None


def test_rewritten_branch_history_is_partial_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dev rewritten so that the pinned base is no longer on it: the verdict says the history
    is partial, and a fix that is not in the tip is not called landed."""
    world = LandingWorld.create(tmp_path)
    work = world.work
    git.git("checkout", "-q", "--orphan", "rewritten", cwd=work)
    git.git("commit", "-q", "-m", "dev, rewritten (#2)", cwd=work, env_extra=PINNED_ENV)
    git.git("push", "-q", "-f", "origin", "HEAD:refs/heads/dev", cwd=work)
    code, out = _check(world, capsys, "--json")
    landing = json.loads(out)["entries"][0]["landing"]
    assert landing["verdict"] == "not landed"
    assert any("is not on dev's history" in p for p in landing["partial"]), landing


def _packs(cache: Path) -> set[str]:
    return {p.name for p in (cache / "objects" / "pack").glob("*.pack")}


def test_no_git_housekeeping_runs_in_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cache whose git would tidy it at once (gc.auto=1, a pack limit of 2, maintenance on,
    in the foreground so a test sees it) keeps every pack through a check that fetches: the
    tool's git runs no gc, repack or maintenance there (issue 40: they ran detached and broke
    the next read with "shallow file has changed since we read it")."""
    world = LandingWorld.create(tmp_path)
    world.squash("Clear detached grads in backward (#101)")
    assert _check(world, capsys)[0] == 0
    cache = world.root / "wd"
    for key, value in {
        "gc.auto": "1",
        "gc.autoPackLimit": "2",
        "gc.autoDetach": "false",
        "maintenance.auto": "true",
        "fetch.writeCommitGraph": "true",
    }.items():
        git.git("config", key, value, cwd=cache)
    before = _packs(cache)
    assert len(before) > 2  # gc --auto would repack these into one
    world.commit("dev", {OTHER: {"VALUE = ": "VALUE = 7 + "}}, "Tune value (#930)")
    assert _check(world, capsys)[0] == 0
    assert before <= _packs(cache)
    assert not (cache / "gc.log").exists()
    assert not (cache / "objects" / "info" / "commit-graph").exists()
    assert not (cache / "objects" / "info" / "commit-graphs").exists()


def test_whether_a_fix_landed_is_its_verdict_member_not_the_words_printed() -> None:
    """`Landing.landed` (what adopt, scan and check act on) tests the verdict's member: the
    words each verdict prints may change without changing a decision."""
    from patchcarry.check.report import Landing, Verdict

    landed = {v for v in Verdict if Landing(v).landed}
    assert landed == {Verdict.LANDED, Verdict.CHANGED}
    assert landing.NOT_LANDED is Verdict.NOT_LANDED and landing.SUPERSEDED is Verdict.SUPERSEDED


def test_a_boundary_that_cannot_be_deepened_is_undetermined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync merge's other parent is older than the history read: git's shallow file cuts
    the merge and every first-parent commit under it. Deepened, it is read (a shape above);
    not deepened (no deepening allowed), the verdict is "undetermined", never a confident
    "not landed" or a landing without its commit."""
    from patchcarry.check import history

    monkeypatch.setattr(history, "MAX_DEEPENS", 0)
    world = LandingWorld.create(tmp_path)
    world.squash("Clear detached grads in backward (#101)", branch="main",
                 date="2021-01-01T00:00:00+0000")  # fmt: skip
    world.merge("main", "dev", "chore: nightly sync main into dev (#950)")
    code, out = _check(world, capsys, "--json")
    landing = json.loads(out)["entries"][0]["landing"]
    assert landing["verdict"] == "undetermined" and landing["commit"] is None, landing
    assert code == 1 and landing["partial"]


def test_an_undone_landing_reads_landed_in_x_undone_in_y() -> None:
    """Every sentence about an undone landing (the plan, a PR body) names what undid it."""
    from patchcarry.check import render
    from patchcarry.check.report import Landing, UpstreamCommit, Verdict

    landed = UpstreamCommit("a" * 40, "Clear detached grads (#101)", 101)
    revert = UpstreamCommit("b" * 40, 'Revert "Clear detached grads (#101)"', 101)
    said = render.landing_sentence(Landing(Verdict.UNDONE, landed, changed_since=[revert]))
    assert said == (
        f"landed, then undone upstream: {'a' * 12} 'Clear detached grads (#101)' (PR #101), "
        f"undone by {'b' * 12} 'Revert \"Clear detached grads (#101)\"'"
    )
    assert "undone by:" in "\n".join(
        render.landing_lines(Landing(Verdict.UNDONE, landed, changed_since=[revert]))
    )
