"""One real-git upstream in which carried fixes land every way projects land PRs: a squash, a
rebase-merge (the PR's commits one by one), a true merge (the PR's commits on the merge's side),
a forward merge from a maintenance branch; single- and multi-commit PRs; then reverted,
removed by a later commit or by a merge's resolution, changed, or left whole. One world, one
entry per case (each its own file, so the cases do not touch), built once per test module.

    world = StylesWorld.create(tmp_path)
    world.manifest                    # every case's entry; world.url is the upstream
    world.expected["rebase-changed"]  # Expected(verdict, subject, merge subject, changed by)

Its history also holds what made verdicts depend on the run's other entries: a merge on dev
whose other parent (a maintenance branch's commit) is older than the history one entry alone
reads, while the pinned base stays reachable through a later merge. One entry (`anchor`) is
pinned to a base a month older, so the full run reads deeper than any other entry alone.
Identity and dates are pinned: stable hashes. Nothing here touches the network.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from testing.landing_history import BASE_TEXT, CONTRIBUTOR, ENV, FIX, SIGNOFF, _dated, _g, edit

GRAD_LINE = "        detached.grad = None\n"
# A multi-commit PR's second commit only deletes two lines (its own added lines: none).
FIX2 = {"    state.buffer = None\n    state.handle.close()\n": ""}
LEGACY = (
    "\n\ndef backward_legacy(ctx, outputs):\n    inputs = ctx.saved_inputs\n"
    "    grads = run_backward(outputs, inputs)\n    ctx.saved_inputs = None\n    return grads\n"
)


@dataclasses.dataclass(frozen=True)
class Expected:
    """What check must say of a case: its verdict, the subject of the commit named, of the
    merge that brought it, and of the commits named as changing or undoing it."""

    verdict: str
    subject: str | None = None
    merge: str | None = None
    changed_by: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # the fix's other commits upstream, named with it


def module(name: str) -> str:
    return f"megatron/core/{name.replace('-', '_')}.py"


def text(name: str) -> str:
    return f"{BASE_TEXT}\nMODULE = {name!r}\n"


def fixed(name: str, multi: bool) -> str:
    done = edit(text(name), FIX)
    return edit(done, FIX2) if multi else done


# name -> (PR number, multi-commit, pinned to the older base)
CASES: dict[str, tuple[int, bool, bool]] = {
    "squash": (201, False, False),
    "squash-multi": (202, True, False),
    "rebase-multi": (203, True, False),
    "merge-multi": (204, True, False),
    "rebase-changed": (205, True, False),
    "merge-reverted": (206, True, False),
    "forward-merge": (207, False, False),
    "merge-removed": (208, False, False),
    "lines-removed": (209, False, False),
    "applies-again": (210, False, False),
    "never-landed": (211, True, False),
    "anchor": (212, False, True),
}


@dataclasses.dataclass
class StylesWorld:
    root: Path
    bare: Path
    work: Path
    manifest: Path
    expected: dict[str, Expected]

    @property
    def url(self) -> str:
        return self.bare.resolve().as_uri()

    @classmethod
    def create(cls, root: Path) -> StylesWorld:
        work, bare = root / "work", root / "upstream.git"
        work.mkdir(parents=True)
        w = _Builder(work)
        _g("init", "-q", "-b", "dev", cwd=work)
        for name in CASES:
            w.write(module(name), text(name))
        w.write("megatron/core/maint.py", "MAINT = 0\n")
        base_a = w.commit("base: pinned upstream commit (#1)", "2026-02-01")
        _g("branch", "v1-maint", cwd=work)
        w.write("README.md", "up\n")
        base_b = w.commit("base: newer pinned commit (#2)", "2026-03-01")
        _g("branch", "main", cwd=work)
        _g("branch", "release", cwd=work)
        _g("branch", "feature-x", cwd=work)
        # the contributors' PRs: one or two commits each on its pinned base
        patches, heads, files = root / "patches", {}, {}
        for n, (name, (number, multi, old)) in enumerate(CASES.items()):
            base = base_a if old else base_b
            _g("checkout", "-q", "-B", f"pr-{number}", base, cwd=work)
            shas = [w.edit(module(name), FIX, f"Clear detached grads in {name}", contributor=True)]
            if multi:
                shas.append(w.edit(module(name), FIX2, f"Drop the handle in {name}", True))
            heads[name] = shas
            out = patches / name
            _g("format-patch", "-q", "--start-number", str(1 + 2 * n), "-o", str(out),
               f"{base}..HEAD", cwd=work)  # fmt: skip
            files[name] = [f"{name}/{p.name}" for p in sorted(out.glob("*.patch"))]
        expected: dict[str, Expected] = {}
        _g("checkout", "-q", "dev", cwd=work)
        day = iter(range(2, 10))  # March 2 to 9: landings under the old-parent merge

        def on(date: int) -> str:
            return f"2026-03-{date:02d}T00:00:00+0000"

        # squash: one commit with the whole fix, subject naming the PR
        for name in ("squash", "squash-multi", "lines-removed", "applies-again", "anchor",
                     "merge-removed"):  # fmt: skip
            number, multi, _ = CASES[name]
            subject = f"Fix {name} (#{number})"
            w.write(module(name), fixed(name, multi))
            w.commit(subject, on(next(day)) if name == "squash" else on(9))
            expected[name] = Expected("landed", subject)
        # rebase-merge: the PR's commits replayed one by one (the fix is whole at the last)
        for name in ("rebase-multi", "rebase-changed"):
            for sha in heads[name]:
                _g("cherry-pick", sha, cwd=work, env=_dated(on(next(day))))
            expected[name] = Expected(
                "landed", f"Drop the handle in {name}", also=(f"Clear detached grads in {name}",)
            )
        # true merge: the PR's own commits on the merge's side
        for name in ("merge-multi", "merge-reverted"):
            number = CASES[name][0]
            message = f"Merge pull request #{number} from casey/fix-{name}"
            _g("merge", "-q", "--no-ff", "-m", message, heads[name][-1], cwd=work,
               env=_dated(on(next(day))))  # fmt: skip
            first = (f"Clear detached grads in {name}",)
            expected[name] = Expected("landed", f"Drop the handle in {name}", message, also=first)
        # a maintenance branch's commit older than what one entry alone reads, merged into dev
        _g("checkout", "-q", "v1-maint", cwd=work)
        w.edit("megatron/core/maint.py", {"MAINT = 0": "MAINT = 1"}, "Maint fix (#150)",
               date="2026-02-10")  # fmt: skip
        _g("checkout", "-q", "dev", cwd=work)
        w.merge("v1-maint", "Merge branch 'v1-maint' into dev (#151)", "2026-03-10")
        # a later merge of a branch made on the newer base: the base stays reachable by it
        _g("checkout", "-q", "feature-x", cwd=work)
        w.write("megatron/core/x.py", "X = 1\n")
        w.commit("Feature x (#152)", "2026-03-15")
        _g("checkout", "-q", "dev", cwd=work)
        w.merge("feature-x", "Merge branch 'feature-x' into dev (#153)", "2026-03-20")
        # forward merge: squashed on the release branch, merged forward into dev
        _g("checkout", "-q", "release", cwd=work)
        number = CASES["forward-merge"][0]
        w.write(module("forward-merge"), fixed("forward-merge", False))
        w.commit(f"Fix forward-merge (#{number})", "2026-03-12")
        _g("checkout", "-q", "dev", cwd=work)
        forward = "Merge branch 'release' into dev (#154)"
        w.merge("release", forward, "2026-03-21")
        expected["forward-merge"] = Expected("landed", f"Fix forward-merge (#{number})", forward)
        # what happened after: changed, reverted, removed, applies again
        keep = "Keep grads in rebase-changed (#301)"
        w.edit(module("rebase-changed"), {GRAD_LINE: "        detached.grad = ctx.keep\n"},
               keep, date="2026-03-22")  # fmt: skip
        expected["rebase-changed"] = dataclasses.replace(
            expected["rebase-changed"], verdict="landed, changed since", changed_by=(keep,)
        )
        merge = _g("log", "-1", "--format=%H", "--grep=#206", cwd=work)
        _g(
            "revert",
            "--no-edit",
            "-m",
            "1",
            merge,
            cwd=work,
            env=_dated("2026-03-23T00:00:00+0000"),
        )
        subject = _g("log", "-1", "--format=%s", cwd=work)
        expected["merge-reverted"] = dataclasses.replace(
            expected["merge-reverted"], verdict="landed, then undone", changed_by=(subject,)
        )
        _g("checkout", "-q", "main", cwd=work)
        w.write("megatron/core/main_only.py", "MAIN = 1\n")
        w.commit("Main work (#155)", "2026-03-23")
        _g("checkout", "-q", "dev", cwd=work)
        override = "chore: sync main into dev, main's version wins (#156)"
        w.merge("main", override, "2026-03-24", resolve={module("merge-removed"): text(
            "merge-removed")})  # fmt: skip
        expected["merge-removed"] = Expected(
            "landed, then undone", expected["merge-removed"].subject, None, (override,)
        )
        removal = "Simplify backward in lines-removed (#302)"
        w.edit(module("lines-removed"), {
            "tuple(inputs))\n    for detached in inputs:\n" + GRAD_LINE: "list(inputs))\n"
        }, removal, date="2026-03-25")  # fmt: skip
        expected["lines-removed"] = Expected(
            "landed, then undone", expected["lines-removed"].subject, None, (removal,)
        )
        w.edit(module("applies-again"), {
            "    ctx.saved_inputs = None\n    return grads\n": "    ctx.saved_inputs = ()\n"
            "    return grads\n", "MODULE = ": LEGACY.lstrip("\n") + "\n\nMODULE = ",
        }, "Keep a legacy backward (#303)", date="2026-03-26")  # fmt: skip
        expected["never-landed"] = Expected("not landed")
        _g("init", "-q", "--bare", str(bare), cwd=root)
        _g("remote", "add", "origin", str(bare), cwd=work)
        _g("push", "-q", "origin", "dev", "main", "release", cwd=work)
        for name, shas in heads.items():
            _g("push", "-q", "origin", f"{shas[-1]}:refs/pull/{CASES[name][0]}/head", cwd=work)
        lines = ['[defaults]\nupstream = "acme/widgets"\nbase_branch = "dev"\n'
                 'fork = "casey/widgets"\n']  # fmt: skip
        for name, (number, _, old) in CASES.items():
            fix = ", ".join(f'"{f}"' for f in files[name])
            lines.append(
                f'[[entry]]\nname = "{name}"\ntitle = "Fix {name}"\n'
                f'head_branch = "fix/{name}"\nfix = [{fix}]\nsupersedes = [{number}]\n'
                f'base_commit = "{base_a if old else base_b}"\n'
            )
        manifest = patches / "series.toml"
        manifest.write_text("\n".join(lines))
        return cls(root, bare, work, manifest, expected)


@dataclasses.dataclass
class _Builder:
    work: Path

    def write(self, path: str, content: str) -> None:
        (self.work / path).parent.mkdir(parents=True, exist_ok=True)
        (self.work / path).write_text(content)

    def commit(self, message: str, date: str, *, contributor: bool = False) -> str:
        stamp = f"{date}T00:00:00+0000" if "T" not in date else date
        env = {**(CONTRIBUTOR if contributor else ENV)}
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        if contributor:
            message += f"\n\nSigned-off-by: {SIGNOFF}"
        _g("add", "-A", cwd=self.work)
        _g("commit", "-q", "-m", message, cwd=self.work, env=env)
        return _g("rev-parse", "HEAD", cwd=self.work)

    def edit(
        self,
        path: str,
        changes: dict[str, str],
        message: str,
        contributor: bool = False,
        *,
        date: str = "2026-03-01T12:00:00+0000",
    ) -> str:
        self.write(path, edit((self.work / path).read_text(), changes))
        return self.commit(message, date, contributor=contributor)

    def merge(
        self, branch: str, message: str, date: str, *, resolve: dict[str, str] | None = None
    ) -> None:
        env = _dated(date if "T" in date else f"{date}T00:00:00+0000")
        _g("merge", "-q", "--no-ff", "--no-commit", branch, cwd=self.work, env=env)
        for path, content in (resolve or {}).items():
            self.write(path, content)
        _g("add", "-A", cwd=self.work)
        _g("commit", "-q", "-m", message, cwd=self.work, env=env)
