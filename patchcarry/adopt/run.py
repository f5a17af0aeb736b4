"""adopt: read, cut into patches, prove, validate, then write and check; every refusal before
the first write, and a failed write removes what it wrote, so a re-run starts clean."""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomlkit

from patchcarry import hosts, inputs, install, manifest, manifest_edit, patchrules
from patchcarry import upstream as upstream_mod
from patchcarry.adopt import commits as commits_mod
from patchcarry.adopt import landed
from patchcarry.adopt import paths as paths_mod
from patchcarry.adopt import pull as pull_mod
from patchcarry.check import judge, render
from patchcarry.check.run import run_checks
from patchcarry.display import line
from patchcarry.errors import BadInputError, FatalError, UpstreamError
from patchcarry.git.sha import short
from patchcarry.github_types import Forge, PullRef
from patchcarry.patchfile import Patch
from patchcarry.patchfile import load as load_patch
from patchcarry.pulls import classify

_NUMBERED_RE = re.compile(r"^(\d{4})-")


@dataclasses.dataclass
class Options:
    name: str | None = None
    fork: str | None = None
    dry_run: bool = False
    manifest_path: Path = dataclasses.field(
        default_factory=lambda: manifest.find_for_adding() or Path.cwd() / manifest.SEARCHED
    )
    paths: list[str] | None = None  # the entry's `paths` (default: derived from the PR)
    upstream_url: str | None = None
    work_dir: Path | None = None  # scratch repo for the history fetch (default: the cache)


def existing(path: Path) -> tuple[dict[str, Any], list[manifest.Entry]]:
    """The manifest's [defaults] and entries; none for a manifest not yet made."""
    if not path.exists():
        if not path.parent.is_dir() and not path.parent.parent.is_dir():
            raise BadInputError(f"{path}: no such directory for the manifest")
        return {}, []
    try:
        raw = tomllib.loads(inputs.read_text(path, "manifest"))
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"{path}: not valid TOML: {exc}") from None
    loaded = manifest.load(path) if raw.get("entry") else None
    entries = [*loaded.entries, *loaded.retired] if loaded else []  # a retired one holds its PR
    return dict(raw.get("defaults", {})), entries


def _next_number(patches_dir: Path) -> int:
    if not patches_dir.is_dir():
        return 1
    numbers = [int(m.group(1)) for p in patches_dir.iterdir() if (m := _NUMBERED_RE.match(p.name))]
    return max(numbers, default=0) + 1


def _fork(opts: Options, defaults: dict[str, Any], upstream: str, author: str) -> str:
    if opts.fork:
        return opts.fork
    if defaults.get("fork") and defaults.get("upstream", upstream) == upstream:
        return str(defaults["fork"])
    return f"{author}/{upstream.split('/', 1)[1]}"


def split_tests(patches: list[Patch]) -> int:
    """How many of `patches` are fixes: all but a trailing run of test-only ones, at least 1."""
    count = len(patches)
    while count > 1 and paths_mod.tests_only(patches[count - 1].files):
        count -= 1
    return count


def _one_a_line(names: list[str]) -> Any:
    """A TOML array with one patch name a line (long names stay readable in a diff)."""
    array = tomlkit.array()
    array.extend(names)
    return array.multiline(len(names) > 1)


def _fields(
    name: str, pull: PullRef, target: pull_mod.Target, series: commits_mod.Series,
    patch_names: list[str], fixes: int, paths: list[str], fork: str, defaults: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    fields: dict[str, Any] = {"name": name, "title": pull.title, "upstream": target.upstream}
    fields |= {"base_branch": pull.base_ref, "base_commit": series.base}
    if fork != defaults.get("fork"):
        fields["fork"] = fork
    fields["head_branch"] = pull.head_ref
    fields["fix"] = patch_names[0] if fixes == 1 else _one_a_line(patch_names[:fixes])
    if len(patch_names) > fixes:  # trailing commits that touch tests alone, in order
        fields["tests"] = _one_a_line(patch_names[fixes:])
        if defaults.get("include_tests") is not True:
            fields["include_tests"] = True
    fields["paths"] = paths
    fields["supersedes"] = [target.number]
    return fields


def _where(path: Path, entries: list[manifest.Entry], entry: manifest.Entry) -> str:
    """`path:LINE` of `entry`'s [[entry]] header (just `path` when it cannot be told)."""
    lines = manifest.entry_lines(path.read_text()) if path.exists() else []
    index = entries.index(entry)
    return f"{path}:{lines[index]}" if len(lines) == len(entries) else str(path)


def _preflight_carried(upstream: str, number: int, entries: list[manifest.Entry],
                       path: Path) -> None:  # fmt: skip
    """A PR an entry of the same upstream already carries is not adopted twice."""
    for entry in entries:
        if entry.upstream.lower() != upstream.lower():
            continue
        if number in entry.supersedes or entry.pr == number:
            key = "supersedes" if number in entry.supersedes else "pr"
            raise BadInputError(
                f"{_where(path, entries, entry)}: entry {entry.name!r} already carries "
                f"#{number} ({key}): nothing to adopt; `resubmit {entry.name}` re-submits it"
            )


def _preflight_names(name: str, entries: list[manifest.Entry], path: Path) -> None:
    for entry in entries:
        if entry.name == name:
            raise BadInputError(
                f"{_where(path, entries, entry)}: an entry named {name!r} already exists; "
                "pick another with --name"
            )


def _preflight_branch(fork: str, branch: str, entries: list[manifest.Entry], path: Path) -> None:
    owner = manifest.branch_owner(entries, fork, branch)
    if owner is not None:
        raise BadInputError(
            f"{_where(path, entries, owner)}: entry {owner.name!r} already publishes from "
            f"{fork}:{branch}; two entries on one branch would rebuild each other's PR: "
            "give that entry another head_branch (or adopt with --fork)"
        )


def adopt(target: pull_mod.Target, opts: Options, gh: Forge, say: Callable[[str], None]) -> int:
    """Adopt PR `target` into the manifest at `opts.manifest_path`; the exit code."""
    path = Path(opts.manifest_path)
    manifest.check_writable(path)
    defaults, entries = existing(path)
    _preflight_carried(target.upstream, target.number, entries, path)
    if opts.name is not None:
        pull_mod.check_name(opts.name)
        _preflight_names(opts.name, entries, path)
    pull, state = pull_mod.read(gh, target)
    say(f"{target}: {pull.title!r} by {line(pull.author)}: {state.state}")  # repr escapes
    say("\n".join(f"  - {line(text)}" for text in state.evidence))
    if state.state == classify.PullState.MERGED:
        raise FatalError(f"{target} is merged: its change is upstream already, nothing to adopt")
    name = opts.name or pull_mod.default_name(pull.head_ref, target.number)
    _preflight_names(name, entries, path)
    fork = _fork(opts, defaults, target.upstream, pull.author)
    _preflight_branch(fork, pull.head_ref, entries, path)
    url = opts.upstream_url
    if url is None:
        repo = gh.repo(target.upstream)
        if repo is None:
            raise UpstreamError(f"{target.upstream}: not found on {gh.host}; pass --upstream-url")
        url = hosts.answered_git_url(gh.host, target.upstream, repo.clone_url)
    history = upstream_mod.fetch_history(url, branch=pull.base_ref, pull=target.number,
                                         work_dir=opts.work_dir)  # fmt: skip
    series = commits_mod.own_commits(history)
    say(f"refs/pull/{target.number}/head {short(history.head)}: {len(series.commits)} commit(s) "
        f"of its own on {pull.base_ref}, base {short(series.base)} "
        f"(history fetched to depth {history.depth}, commits only)")  # fmt: skip
    for merge in series.dropped_merges:
        say(f"  dropped {short(merge.sha)} {merge.subject!r} ({line(merge.author)}): merges "
            f"{pull.base_ref} into the PR")  # fmt: skip
    patches_dir = path.parent
    with tempfile.TemporaryDirectory(prefix="adopt-") as tmp_name:
        written = commits_mod.write_patches(history, series, Path(tmp_name),
                                            _next_number(patches_dir))  # fmt: skip
        try:
            patches = [load_patch(p) for p in written]
        except BadInputError as exc:  # the PR's own commit carries what is never carried
            raise BadInputError(f"{target}: {exc}") from None
        applied = judge.apply_at(patches, lambda p: history.show(series.base, p))
        bad = [a for a in applied if a.status in ("conflict", "not checked")]
        if bad:
            raise FatalError(
                f"{target}: {bad[0].patch} does not apply in order on base {short(series.base)} "
                "(a later commit builds on a merge of the base branch): rebase the PR by hand"
            )
        fixes = split_tests(patches)
        touched = sorted({f for p in patches for f in p.files})
        paths = opts.paths or paths_mod.derive(touched)
        _preflight_paths(target, opts, patches, paths)
        names = [p.name for p in written]
        fields = _fields(name, pull, target, series, names, fixes, paths, fork, defaults)
        _preflight_text(target, fields)
        for i, (commit, patch) in enumerate(zip(series.commits, patches, strict=True)):
            role = "fix" if i < fixes else "tests (it touches tests only)"
            say(f"patch {patches_dir / patch.name} [{role}]\n    {short(commit.sha)} "
                f"{line(commit.author)}: {line(commit.subject)}")  # fmt: skip
        whence = "--paths" if opts.paths else "the directories its commits touch"
        say(f"paths (from {whence}): {', '.join(paths)}")
        for executable in paths_mod.executables(patches):
            say(f"  adds an executable file: {line(executable)} (mode 100755)")
        for file in written:  # the real write refuses to overwrite: so does a dry run
            if (patches_dir / file.name).exists():
                raise BadInputError(
                    f"{patches_dir / file.name} already exists; nothing was written"
                )
        old_text = path.read_text() if path.exists() else ""
        new_text = manifest_edit.add_entry_text(old_text, fields)
        staged = {p.name: p for p in written}
        (staged_entry,) = manifest.load(path, text=new_text, staged=staged).select([name])
        entry_text = tomlkit.dumps({"entry": [fields]})
        report = run_checks([staged_entry], upstream=url)  # the same patches on the same base
        landed.refuse_landed(target, report)  # landed since it closed: as a merged PR
        if opts.dry_run:
            say(f"entry for {path} (DRY RUN: nothing written):\n{entry_text.rstrip()}")
            say(render.table(report))
            return report.exit_code
        _write(path, patches_dir, written, fields)
    say(f"wrote {len(written)} patch(es) and entry {name!r} in {path}:\n{entry_text.rstrip()}")
    say(render.table(report))
    if report.exit_code == 0:
        found_here = manifest.find().resolve() == path.resolve()  # as resubmit, run here, finds
        again = "" if found_here else f" --manifest {path}"
        say(f"next: {install.command('resubmit')} --dry-run {name}{again}")
    return report.exit_code


def _preflight_text(target: pull_mod.Target, fields: dict[str, Any]) -> None:
    """What GitHub answered must be text a file can hold (JSON can carry a lone surrogate)."""
    for key, value in fields.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and not patchrules.is_utf8(text):
                raise BadInputError(
                    f"{target}: its {key} from GitHub, `{line(text)}`, holds a lone surrogate "
                    "(not Unicode text): it cannot be written to the manifest; edit it on "
                    "GitHub, then adopt again"
                )


def _preflight_paths(target: pull_mod.Target, opts: Options, patches: list[Patch],
                     paths: list[str]) -> None:  # fmt: skip
    """With --paths, every file the PR touches must be inside them."""
    if not opts.paths:
        return
    for patch in patches:
        outside = patchrules.outside(patch.files, paths)
        if outside:
            raise BadInputError(
                f"{target}: {patch.name} touches {', '.join(outside)}, outside --paths "
                f"({', '.join(paths)}): widen --paths, or leave it out to use the PR's own"
            )


def _write(path: Path, patches_dir: Path, written: list[Path], fields: dict[str, Any]) -> None:
    """Copy the patches beside the manifest, then add the entry; undo both on failure."""
    copied: list[Path] = []
    made = not patches_dir.exists()
    patches_dir.mkdir(exist_ok=True)
    try:
        for patch in written:
            dest = patches_dir / patch.name
            if dest.exists():
                raise BadInputError(f"{dest} already exists; nothing was written")
            shutil.copyfile(patch, dest)
            copied.append(dest)
        manifest_edit.add_entry(
            path, fields, validate=lambda tmp: manifest.load(path, text=tmp.read_text())
        )
    except BaseException:
        for dest in copied:
            dest.unlink(missing_ok=True)
        if made:
            shutil.rmtree(patches_dir, ignore_errors=True)
        raise
