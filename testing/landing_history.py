"""Real upstream histories, built with real git, in which a carried fix lands (or does not)
the ways Megatron-LM's do: for `check`'s landing verdict.

    world = LandingWorld.create(tmp_path)     # bare upstream (dev, main) + work clone; a
                                              # pinned base; PR #101 = base + the fix; a
                                              # manifest carrying it (world.manifest)
    world.squash("Fix widget grads (#101)")   # the fix as one commit on dev
    world.commit("dev", {PATH: (old, new)}, "Unrelated (#7)")  # any other change
    world.cherry_pick(sha, "dev")             # `git cherry-pick -x` onto a branch

Every shape of `SHAPES` builds one history on a fresh world and says what `check` must find:
the verdict and which commit (by its subject). Commits pin identity and dates, so hashes are
stable. Nothing here touches the network.
"""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from patchcarry import git
from testing.once import copy_tree

PATH = "megatron/core/widget.py"
OTHER = "megatron/core/other.py"
PR = 101
ENV = {
    "GIT_AUTHOR_NAME": "Fixture Upstream",
    "GIT_AUTHOR_EMAIL": "upstream@example.invalid",
    "GIT_AUTHOR_DATE": "2026-03-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "Fixture Upstream",
    "GIT_COMMITTER_EMAIL": "upstream@example.invalid",
    "GIT_COMMITTER_DATE": "2026-03-01T00:00:00+0000",
}
SIGNOFF = "Casey Contributor <casey@example.invalid>"
CONTRIBUTOR = {
    **ENV,
    "GIT_AUTHOR_NAME": "Casey Contributor",
    "GIT_AUTHOR_EMAIL": "casey@example.invalid",
}

BASE_TEXT = '''"""Widget helpers."""

import os


def setup(config):
    path = config.path
    value = compute(path)
    return value


def release(state):
    state.buffer = None
    state.handle.close()
    return state


def backward(ctx, outputs):
    inputs = ctx.saved_inputs
    grads = run_backward(outputs, inputs)
    ctx.saved_inputs = None
    return grads


def teardown(state):
    state.closed = True
    return None


def report(widget):
    print(widget.name)
    print(widget.size)
    return widget
'''
# The fix: hand a tuple to the backward pass and clear each detached input's grad.
FIX = {
    "    grads = run_backward(outputs, inputs)\n": (
        "    grads = run_backward(outputs, tuple(inputs))\n"
        "    for detached in inputs:\n"
        "        detached.grad = None\n"
    )
}


def _dated(date: str | None) -> Mapping[str, str]:
    return ENV if date is None else {**ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


CREATED_TEXT = (
    '"""Grad helpers."""\n\n\ndef clear_grads(tensors):\n    for t in tensors:\n'
    "        t.grad = None\n"
)


def _g(*args: str, cwd: Path, env: Mapping[str, str] = ENV, stdin: str | None = None) -> str:
    _, out, _ = git.git(*args, cwd=cwd, env_extra=env, stdin=stdin)
    return out.strip()


def edit(text: str, changes: Mapping[str, str]) -> str:
    for old, new in changes.items():
        assert old in text, f"fixture: {old!r} not in the file"
        text = text.replace(old, new, 1)
    return text


# LandingWorld.create's worlds built in this process, by its arguments (copied, never changed)
_TEMPLATES: dict[tuple[int, str, str | None, bool], LandingWorld] = {}


@dataclasses.dataclass
class LandingWorld:
    root: Path
    bare: Path
    work: Path
    base: str
    manifest: Path
    path: str = PATH  # the file the fix changes
    creates: str | None = None  # a file the fix creates too

    @property
    def url(self) -> str:
        return self.bare.resolve().as_uri()

    @classmethod
    def create(
        cls,
        root: Path,
        *,
        pr: int = PR,
        path: str = PATH,
        creates: str | None = None,
        base_on_main: bool = False,
    ) -> LandingWorld:
        """A world whose fix changes `path` (and creates `creates`): names git quotes
        (`megatron/core/naïve.py`) are as good as any. `base_on_main`: the PR and the pinned
        base are on main, not yet on dev, and the commit both branches start from is years
        older (as on Megatron-LM, dev's history before main reached it is no part of the
        question, and is never fetched). Built once per process for each set of arguments
        and copied into `root` (a separate copy, safe to change; its commits are pinned, so
        it is the world a build would make), not rebuilt with 15 gits each time."""
        key = (pr, path, creates, base_on_main)
        template = _TEMPLATES.get(key)
        if template is None:
            folder = Path(tempfile.mkdtemp(prefix="landing-world-"))
            atexit.register(shutil.rmtree, folder, True)
            template = cls._build(folder, pr=pr, path=path, creates=creates,
                                  base_on_main=base_on_main)  # fmt: skip
            _TEMPLATES[key] = template
        return template._copy(root)

    def _copy(self, root: Path) -> LandingWorld:
        for name in ("work", "upstream.git", "patches"):
            copy_tree(self.root / name, root / name)
        _g("remote", "set-url", "origin", str(root / "upstream.git"), cwd=root / "work")
        manifest = root / self.manifest.relative_to(self.root)
        return dataclasses.replace(self, root=root, bare=root / "upstream.git",
                                   work=root / "work", manifest=manifest)  # fmt: skip

    @classmethod
    def _build(
        cls, root: Path, *, pr: int, path: str, creates: str | None, base_on_main: bool
    ) -> LandingWorld:
        work, bare = root / "work", root / "upstream.git"
        git.init(work)
        _g("checkout", "-q", "-b", "dev", cwd=work)
        for name, text in {path: BASE_TEXT, OTHER: "VALUE = 1\n", "README.md": "up\n"}.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        _g("add", "-A", cwd=work)
        old = _dated("2020-01-01T00:00:00+0000") if base_on_main else ENV
        _g("commit", "-q", "-m", "base: pinned upstream commit (#1)", cwd=work, env=old)
        base = _g("rev-parse", "HEAD", cwd=work)
        _g("init", "-q", "--bare", str(bare), cwd=root)
        _g("remote", "add", "origin", str(bare), cwd=work)
        _g("push", "-q", "origin", "dev", "dev:refs/heads/main", "dev:refs/heads/release", cwd=work)
        if base_on_main:
            for branch, name, subject in (
                ("main", "README.md", "base: main's pinned commit (#2)"),
                ("dev", OTHER, "Dev work (#3)"),
            ):
                _g("checkout", "-q", "-B", branch, base, cwd=work)
                (work / name).write_text(f"VALUE = 1  # {branch}\n")
                _g("commit", "-q", "-am", subject, cwd=work)
                _g("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=work)
            base = _g("rev-parse", "main", cwd=work)
            _g("checkout", "-q", "dev", cwd=work)
        # the contributor's PR: base + the fix, signed off, as format-patch makes it
        _g("checkout", "-q", "-b", f"pr-{pr}", base, cwd=work)
        (work / path).write_text(edit(BASE_TEXT, FIX))
        if creates:
            (work / creates).write_text(CREATED_TEXT)
        _g("add", "-A", cwd=work)
        message = f"Clear detached grads in backward\n\nSigned-off-by: {SIGNOFF}"
        _g("commit", "-q", "-am", message, cwd=work, env=CONTRIBUTOR)
        head = _g("rev-parse", "HEAD", cwd=work)
        _g("push", "-q", "origin", f"HEAD:refs/pull/{pr}/head", cwd=work)
        patches = root / "patches"
        patches.mkdir()
        _g("format-patch", "-q", "-1", "-o", str(patches), head, cwd=work)
        (patch,) = sorted(p.name for p in patches.glob("*.patch"))
        manifest = patches / "series.toml"
        manifest.write_text(
            "[defaults]\n"
            'upstream = "acme/widgets"\nbase_branch = "dev"\n'
            f'base_commit = "{base}"\nfork = "casey/widgets"\n\n'
            '[[entry]]\nname = "widget-grads"\ntitle = "Clear detached grads"\n'
            f'head_branch = "fix/widget-grads"\nfix = "{patch}"\nsupersedes = [{pr}]\n'
        )
        _g("checkout", "-q", "dev", cwd=work)
        return cls(root, bare, work, base, manifest, path, creates)

    def tip(self, branch: str = "dev") -> str:
        return _g("rev-parse", f"refs/heads/{branch}", cwd=self.bare)

    def commit(
        self,
        branch: str,
        changes: Mapping[str, Mapping[str, str] | None],
        message: str,
        *,
        date: str | None = None,
    ) -> str:
        """One commit on `branch` (pushed): per path, {old: new} replacements, or None to
        delete the file. `date` (ISO 8601) is its author and committer date."""
        _g("checkout", "-q", "-B", branch, self.tip(branch), cwd=self.work)
        self._edit(changes)
        _g("add", "-A", cwd=self.work)
        _g("commit", "-q", "-m", message, cwd=self.work, env=_dated(date))
        _g("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)
        return self.tip(branch)

    def _edit(self, changes: Mapping[str, Mapping[str, str] | None]) -> None:
        for path, change in changes.items():
            file = self.work / path
            if change is None:
                file.unlink()
            else:
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_text(edit(file.read_text() if file.exists() else "", change))

    def merge(
        self,
        source: str,
        into: str,
        message: str,
        *,
        resolve: Mapping[str, Mapping[str, str] | None] | None = None,
    ) -> str:
        """A two-parent merge of `source`'s tip into `into` (pushed), as upstream's "nightly
        sync main into dev" makes them; `resolve` edits the merged files before it is committed
        (a resolution that leaves part of what `source` brought)."""
        _g("checkout", "-q", "-B", into, self.tip(into), cwd=self.work)
        _g("merge", "-q", "--no-ff", "--no-commit", self.tip(source), cwd=self.work)
        self._edit(resolve or {})
        _g("add", "-A", cwd=self.work)
        _g("commit", "-q", "-m", message, cwd=self.work)
        _g("push", "-q", "origin", f"HEAD:refs/heads/{into}", cwd=self.work)
        return self.tip(into)

    def squash(
        self,
        message: str,
        *,
        branch: str = "dev",
        also: Mapping[str, Mapping[str, str]] | None = None,
        after: Mapping[str, str] | None = None,
        date: str | None = None,
    ) -> str:
        """The fix as one commit on `branch`; `after` edits the fixed file further in the same
        commit (a maintainer's edits), `also` changes other files in it."""
        fixed = {**FIX}
        if after:
            fixed = {old: edit(new, after) for old, new in FIX.items()}
        created = {self.creates: {"": CREATED_TEXT}} if self.creates else {}
        return self.commit(
            branch, {self.path: fixed, **created, **(also or {})}, message, date=date
        )

    def cherry_pick(self, sha: str, branch: str) -> str:
        _g("checkout", "-q", "-B", branch, self.tip(branch), cwd=self.work)
        _g("cherry-pick", "-x", sha, cwd=self.work)
        _g("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)
        return self.tip(branch)

    def revert(self, sha: str, branch: str = "dev") -> str:
        _g("checkout", "-q", "-B", branch, self.tip(branch), cwd=self.work)
        _g("revert", "--no-edit", sha, cwd=self.work)
        _g("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)
        return self.tip(branch)


GRAD_LINE = "        detached.grad = None\n"


# Unrelated upstream work, before and after a landing.
def _noise(world: LandingWorld, n: int) -> None:
    world.commit("dev", {OTHER: {"VALUE = ": f"VALUE = {n} + "}}, f"Tune value {n} (#{900 + n})")
    world.commit(
        "dev", {PATH: {"    print(widget.name)\n": f"    print(widget.name)\n    print({n})\n"}},
        f"Report widget size {n} (#{910 + n})",
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Shape:
    """A history and what check must say of it: the verdict, the subject of the commit it
    names (None: no commit), and the subjects of the commits it names as changing it since."""

    name: str
    build: Callable[[LandingWorld], None]
    verdict: str
    subject: str | None = None
    pr: int | None = None
    changed_by: tuple[str, ...] = ()
    merge: str | None = None  # the subject of the merge that brought it to dev
    world: Callable[[Path], LandingWorld] = LandingWorld.create  # builds the world first


def _squash(w: LandingWorld) -> None:
    _noise(w, 1)
    w.squash("Clear detached grads in backward (#101)")
    _noise(w, 2)


def _maintainer_edits(w: LandingWorld) -> None:
    _noise(w, 1)
    w.squash(
        "Clear detached grads in backward (#101)",
        after={GRAD_LINE: "        detached.grad = None  # frees the graph\n",
               "tuple(inputs)": "tuple(inputs) if inputs else ()"},
    )  # fmt: skip


def _changed_since(w: LandingWorld) -> None:
    w.squash("Clear detached grads in backward (#101)")
    _noise(w, 1)
    w.commit(
        "dev", {PATH: {GRAD_LINE: "        detached.grad = ctx.keep_grad\n"}},
        "Keep grads on request (#300)",
    )  # fmt: skip
    _noise(w, 2)


def _cherry_pick(w: LandingWorld) -> None:
    landed = w.squash("Clear detached grads in backward (#101)", branch="main")
    _noise(w, 1)
    w.cherry_pick(landed, "dev")


def _other_branch_only(w: LandingWorld) -> None:
    w.squash("Clear detached grads in backward (#101)", branch="main")
    _noise(w, 1)


def _through_another_pr(w: LandingWorld) -> None:
    _noise(w, 1)
    w.squash(
        "Widget cleanup: grads and values (#205)",
        also={OTHER: {"VALUE = ": "VALUE = 2 * "}},
    )


def _internal_with_more(w: LandingWorld) -> None:
    """Landed through an internal sync: the fix's lines and more, no PR named."""
    w.squash(
        "Internal sync: widget memory",
        after={GRAD_LINE: GRAD_LINE + "        detached.data = None\n"},
        also={OTHER: {"VALUE = ": "VALUE = 3 * "}},
    )


def _superseded(w: LandingWorld) -> None:
    _noise(w, 1)
    w.commit(
        "dev",
        {PATH: {
            "    inputs = ctx.saved_inputs\n    grads = run_backward(outputs, inputs)\n"
            "    ctx.saved_inputs = None\n    return grads\n":
            "    return engine.backward(ctx, outputs, release=True)\n",
        }},
        "Move backward onto the engine (#400)",
    )  # fmt: skip


def _deleted(w: LandingWorld) -> None:
    _noise(w, 1)
    w.commit("dev", {PATH: None}, "Remove the widget module (#401)")


def _names_pr_without_lines(w: LandingWorld) -> None:
    w.commit(
        "dev", {PATH: {"    state.closed = True\n": "    state.closed = bool(state)\n"}},
        "Follow-up to #101: teardown (#101)",
    )  # fmt: skip


def _some_lines_no_pr(w: LandingWorld) -> None:
    w.squash(
        "Widget internals (#500)",
        after={"        detached.grad = None\n": "        detached.grad = detached.grad\n",
               "tuple(inputs)": "list(inputs)"},
    )  # fmt: skip


def _reverted(w: LandingWorld) -> None:
    landed = w.squash("Clear detached grads in backward (#101)")
    _noise(w, 1)
    w.revert(landed)


def _conflict_not_gone(w: LandingWorld) -> None:
    w.commit(
        "dev",
        {PATH: {"    grads = run_backward(outputs, inputs)\n":
                "    grads = run_backward(outputs, inputs, retain=False)\n"}},
        "Do not retain the graph (#600)",
    )  # fmt: skip


# Landed on main, brought to dev by a merge (Megatron-LM's "nightly sync main into dev").
SYNC = "chore: nightly sync main into dev (#950)"
LANDING = "Clear detached grads in backward (#101)"


def _merged(w: LandingWorld) -> None:
    _noise(w, 1)
    w.squash(LANDING, branch="main")
    w.merge("main", "dev", SYNC)
    _noise(w, 2)


def _merged_with_more(w: LandingWorld) -> None:
    """The sync brings other work on the fix's file too: the merge's own diff is not the fix."""
    w.squash(LANDING, branch="main")
    w.commit(
        "main", {PATH: {"    state.closed = True\n": "    state.closed = bool(state)\n"}},
        "Teardown flag (#120)",
    )  # fmt: skip
    _noise(w, 1)
    w.merge("main", "dev", SYNC)


def _merged_then_edited(w: LandingWorld) -> None:
    w.squash(LANDING, branch="main")
    w.merge("main", "dev", SYNC)
    w.commit(
        "dev", {PATH: {GRAD_LINE: "        detached.grad = ctx.keep_grad\n"}},
        "Keep grads on request (#300)",
    )  # fmt: skip


def _edited_on_main_first(w: LandingWorld) -> None:
    """Changed on main after it landed there, before the sync brought both."""
    w.squash(LANDING, branch="main")
    w.commit(
        "main", {PATH: {GRAD_LINE: "        detached.grad = ctx.keep_grad\n"}},
        "Keep grads on request (#301)",
    )  # fmt: skip
    _noise(w, 1)
    w.merge("main", "dev", SYNC)


def _release_merged_back(w: LandingWorld) -> None:
    """Landed on a release branch, merged into main, and main synced into dev."""
    w.squash(LANDING, branch="release")
    w.merge("release", "main", "Merge release into main (#960)")
    _noise(w, 1)
    w.merge("main", "dev", SYNC)


def _merge_drops_part(w: LandingWorld) -> None:
    """The sync's resolution keeps part of the fix's lines only."""
    w.squash(LANDING, branch="main")
    w.merge("main", "dev", SYNC, resolve={PATH: {GRAD_LINE: ""}})


def _synced_before_landing(w: LandingWorld) -> None:
    """main was synced into dev, then the fix landed on main and was never merged."""
    w.commit("main", {OTHER: {"VALUE = ": "VALUE = 5 * "}}, "Main work (#130)")
    w.merge("main", "dev", SYNC)
    w.squash(LANDING, branch="main")
    _noise(w, 1)


def _merged_then_reverted(w: LandingWorld) -> None:
    landed = w.squash(LANDING, branch="main")
    w.merge("main", "dev", SYNC)
    _noise(w, 1)
    w.revert(landed)


def _based_on_main(root: Path) -> LandingWorld:
    return LandingWorld.create(root, base_on_main=True)


def _main_based_synced(w: LandingWorld) -> None:
    w.squash(LANDING, branch="main")
    w.merge("main", "dev", SYNC)
    _noise(w, 1)


def _main_based_not_landed(w: LandingWorld) -> None:
    """main (with the pinned base) synced into dev; the fix never landed, and main changed the
    line it changes (it no longer applies): dev's history before the sync is older than
    anything read, and no part of the question, so this is "not landed", not undetermined."""
    w.commit(
        "main",
        {PATH: {"    grads = run_backward(outputs, inputs)\n":
                "    grads = run_backward(outputs, inputs, retain=False)\n"}},
        "Do not retain the graph (#600)",
    )  # fmt: skip
    w.merge("main", "dev", SYNC)


def _history_too_old(w: LandingWorld) -> None:
    """dev's own history since the pinned base is dated years before it (a clock that lied):
    the commit after it is the boundary of every history read, so nothing since the base can
    be told."""
    w.squash(LANDING, date="2021-01-01T00:00:00+0000")
    _noise(w, 1)


def _merged_history_older_than_read(w: LandingWorld) -> None:
    """The sync merge's other parent is years older than the history read: git's shallow file
    cuts the merge (all its parents), the check deepens it by one commit and reads it."""
    w.squash(LANDING, branch="main", date="2021-01-01T00:00:00+0000")
    w.merge("main", "dev", SYNC)


SHAPES = (
    Shape("squash merge naming the PR", _squash, "landed",
          "Clear detached grads in backward (#101)", 101),
    Shape("landing with a maintainer's edits", _maintainer_edits, "landed",
          "Clear detached grads in backward (#101)", 101),
    Shape("landing then edited by later commits", _changed_since, "landed, changed since",
          "Clear detached grads in backward (#101)", 101, ("Keep grads on request (#300)",)),
    Shape("cherry-pick onto the base branch", _cherry_pick, "landed",
          "Clear detached grads in backward (#101)", 101),
    Shape("PR closed unmerged, landed through another PR", _through_another_pr, "landed",
          "Widget cleanup: grads and values (#205)", 205),
    Shape("landed internally with more lines, no PR named", _internal_with_more, "landed",
          "Internal sync: widget memory"),
    Shape("fix made moot by a rewrite", _superseded, "superseded",
          "Move backward onto the engine (#400)", 400),
    Shape("file removed", _deleted, "superseded", "Remove the widget module (#401)", 401),
    Shape("landed on main, synced into dev by a merge", _merged, "landed", LANDING, 101,
          merge=SYNC),
    Shape("synced with other work on its file", _merged_with_more, "landed", LANDING, 101,
          merge=SYNC),
    Shape("synced, then edited on dev", _merged_then_edited, "landed, changed since", LANDING,
          101, ("Keep grads on request (#300)",), SYNC),
    Shape("edited on main before the sync", _edited_on_main_first, "landed, changed since",
          LANDING, 101, ("Keep grads on request (#301)",), SYNC),
    Shape("release branch merged back, then synced", _release_merged_back, "landed", LANDING,
          101, merge=SYNC),
    Shape("PR on main's base, synced into dev (old dev history unread)", _main_based_synced,
          "landed", LANDING, 101, merge=SYNC, world=_based_on_main),
    # controls: never "landed"
    Shape("control: landed on another branch only", _other_branch_only, "not landed"),
    Shape("control: a commit names the PR but not its lines", _names_pr_without_lines,
          "not landed"),
    Shape("control: some of its lines, no PR named", _some_lines_no_pr, "not landed"),
    Shape("landed, then reverted", _reverted, "landed, then undone", LANDING, 101,
          (f'Revert "{LANDING}"',)),
    Shape("control: upstream edited the fixed line", _conflict_not_gone, "not landed"),
    Shape("control: nothing happened upstream", lambda w: _noise(w, 1), "not landed"),
    Shape("control: a sync that brings part of its lines", _merge_drops_part, "not landed"),
    Shape("control: landed on main after the last sync", _synced_before_landing,
          "not landed"),
    Shape("synced, then reverted", _merged_then_reverted, "landed, then undone", LANDING, 101,
          (f'Revert "{LANDING}"',), SYNC),
    Shape("synced from history older than the read", _merged_history_older_than_read,
          "landed", LANDING, 101, merge=SYNC),
    Shape("control: history too old to read", _history_too_old, "undetermined"),
    Shape("control: PR on main's base, synced, never landed", _main_based_not_landed,
          "not landed", world=_based_on_main),
)  # fmt: skip
