"""adopt, in order: read the PR (refuse a merged one), pick and check the entry name, fetch the
PR's head with just enough history, cut its own commits into format-patch files, prove they
apply on their base, then (unless a dry run) write the patches and the manifest entry and run
`check` on it. Every refusal comes before the first write; a failed write removes what it
wrote, so a re-run starts clean."""

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

from patchcarry import manifest, manifest_edit
from patchcarry import upstream as upstream_mod
from patchcarry.adopt import commits as commits_mod
from patchcarry.adopt import pull as pull_mod
from patchcarry.check import judge, render
from patchcarry.check.run import run_checks
from patchcarry.display import line
from patchcarry.errors import BadInputError, ExitCode, FatalError, UpstreamError
from patchcarry.github import GitHub
from patchcarry.patchfile import load as load_patch
from patchcarry.resubmit import classify

_NUMBERED_RE = re.compile(r"^(\d{4})-")


@dataclasses.dataclass
class Options:
    name: str | None = None
    fork: str | None = None
    dry_run: bool = False
    manifest_path: Path = manifest.DEFAULT_MANIFEST
    upstream_url: str | None = None
    work_dir: Path | None = None  # scratch repo for the history fetch (default: the cache)


def existing(path: Path) -> tuple[dict[str, Any], list[manifest.Entry]]:
    """The manifest's [defaults] and its entries (validated); a missing or entry-less
    manifest has none."""
    if not path.exists():
        if not path.parent.is_dir():
            raise BadInputError(f"{path}: no such directory for the manifest")
        return {}, []
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"{path}: not valid TOML: {exc}") from None
    entries = list(manifest.load(path).entries) if raw.get("entry") else []
    return dict(raw.get("defaults", {})), entries


def _next_number(patches_dir: Path) -> int:
    numbers = [int(m.group(1)) for p in patches_dir.iterdir() if (m := _NUMBERED_RE.match(p.name))]
    return max(numbers, default=0) + 1


def _fork(opts: Options, defaults: dict[str, Any], upstream: str, author: str) -> str:
    if opts.fork:
        return opts.fork
    if defaults.get("fork") and defaults.get("upstream", upstream) == upstream:
        return str(defaults["fork"])
    return f"{author}/{upstream.split('/', 1)[1]}"


def _fields(
    name: str,
    facts: pull_mod.PullFacts,
    target: pull_mod.Target,
    series: commits_mod.Series,
    patch_names: list[str],
    fork: str,
    defaults: dict[str, Any],
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": name,
        "title": facts.title,
        "upstream": target.upstream,
        "base_branch": facts.base_branch,
        "base_commit": series.base,
    }
    if fork != defaults.get("fork"):
        fields["fork"] = fork
    fields["head_branch"] = facts.head_ref
    fields["fix"] = patch_names[0]
    if len(patch_names) > 1:  # later commits ride along after the first, in order
        fields["tests"] = patch_names[1:]
        if defaults.get("include_tests") is not True:
            fields["include_tests"] = True
    fields["supersedes"] = [target.number]
    return fields


def _preflight_names(name: str, number: int, entries: list[manifest.Entry], path: Path) -> None:
    clash = [e for e in entries if e.name == name]
    if clash:
        raise BadInputError(
            f"{path}: an entry named {name!r} already exists; pick another with --name"
        )
    carried = [e for e in entries if number in e.supersedes]
    if carried:
        raise BadInputError(
            f"{path}: entry {carried[0].name!r} already carries #{number} (supersedes)"
        )


def adopt(target: pull_mod.Target, opts: Options, gh: GitHub, say: Callable[[str], None]) -> int:
    """Adopt PR `target` into the manifest at `opts.manifest_path`; the exit code."""
    path = Path(opts.manifest_path)
    defaults, entries = existing(path)
    if opts.name is not None:
        pull_mod.check_name(opts.name)
        _preflight_names(opts.name, target.number, entries, path)
    facts = pull_mod.read(gh, target)
    state = facts.state
    say(f"{target}: {facts.title!r} by {line(facts.author)}: {state.state}")  # repr escapes
    say("\n".join(f"  - {line(text)}" for text in state.evidence))
    if state.state == classify.MERGED:
        raise FatalError(f"{target} is merged: its change is upstream already, nothing to adopt")
    name = opts.name or pull_mod.default_name(facts.head_ref, target.number)
    _preflight_names(name, target.number, entries, path)
    url = opts.upstream_url
    if url is None:
        repo = gh.repo(target.upstream)
        if repo is None or not repo.get("clone_url"):
            raise UpstreamError(
                f"{target.upstream}: no clone_url on {gh.host}; pass --upstream-url"
            )
        url = str(repo["clone_url"])
    history = upstream_mod.fetch_history(
        url, branch=facts.base_branch, pull=target.number, work_dir=opts.work_dir
    )
    series = commits_mod.own_commits(history)
    say(
        f"refs/pull/{target.number}/head {history.head[:12]}: {len(series.commits)} commit(s) "
        f"of its own on {facts.base_branch}, base {series.base[:12]} "
        f"(history fetched to depth {history.depth}, commits only)"
    )
    for merge in series.dropped_merges:
        say(f"  dropped {merge.sha[:12]} {merge.subject!r} ({line(merge.author)}): merges "
            f"{facts.base_branch} into the PR")  # fmt: skip
    patches_dir = path.parent
    with tempfile.TemporaryDirectory(prefix="adopt-") as tmp_name:
        written = commits_mod.write_patches(
            history, series, Path(tmp_name), _next_number(patches_dir)
        )
        patches = [load_patch(p) for p in written]
        applied = judge.apply_at(patches, lambda p: history.show(series.base, p))
        bad = [a for a in applied if a.status in ("conflict", "not checked")]
        if bad:
            raise FatalError(
                f"{target}: {bad[0].patch} does not apply in order on base {series.base[:12]} "
                "(a later commit builds on a merge of the base branch): rebase the PR by hand"
            )
        fork = _fork(opts, defaults, target.upstream, facts.author)
        fields = _fields(name, facts, target, series, [p.name for p in written], fork, defaults)
        for commit, patch in zip(series.commits, written, strict=True):
            say(f"patch {patches_dir / patch.name}\n    {commit.sha[:12]} {line(commit.author)}: "
                f"{line(commit.subject)}")  # fmt: skip
        entry_text = tomlkit.dumps({"entry": [fields]})
        if opts.dry_run:
            say(f"entry for {path} (DRY RUN: nothing written):\n{entry_text.rstrip()}")
            return int(ExitCode.OK)
        _write(path, patches_dir, written, fields)
    say(f"wrote {len(written)} patch(es) and entry {name!r} in {path}:\n{entry_text.rstrip()}")
    entry = manifest.load(path).select([name])[0]
    report = run_checks([entry], upstream=url)
    say(render.table(report))
    return report.exit_code


def _write(path: Path, patches_dir: Path, written: list[Path], fields: dict[str, Any]) -> None:
    """Copy the patches beside the manifest, then add the entry; undo the copies on failure."""
    copied: list[Path] = []
    try:
        for patch in written:
            dest = patches_dir / patch.name
            if dest.exists():
                raise BadInputError(f"{dest} already exists; nothing was written")
            shutil.copyfile(patch, dest)
            copied.append(dest)
        manifest_edit.add_entry(path, fields, validate=manifest.load)
    except BaseException:
        for dest in copied:
            dest.unlink(missing_ok=True)
        raise
