"""`check`: does each entry's patch apply upstream (at the pinned base and the branch tip),
did upstream drift under it, and is it the change of the PRs it supersedes.

Reused by resubmit's preflight and the pre-commit hook:

    report = run_checks(manifest.select([]), upstream=url_or_path, offline=False)
    report.ok, report.exit_code, report.to_json(), report.render_table()
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from patchcarry import check_steps
from patchcarry import upstream as upstream_mod
from patchcarry.check_steps import FileDrift, Identity, RefApply
from patchcarry.errors import ExitCode
from patchcarry.manifest import Entry
from patchcarry.patchfile import parse

OFFLINE_SKIPS = ["tip", "drift", "identity"]


@dataclasses.dataclass
class EntryResult:
    name: str
    refs: list[RefApply]
    drift: list[FileDrift] | None = None
    identity: list[Identity] | None = None
    not_checked: list[str] = dataclasses.field(default_factory=list)
    reason: str | None = None  # why the entry was not checked at all

    @property
    def status(self) -> str:
        if not self.refs:
            return "not checked"
        return "does not apply" if any(r.status == "conflict" for r in self.refs) else "applies"


@dataclasses.dataclass
class CheckReport:
    upstream: str
    mode: str  # upstream | offline
    entries: list[EntryResult]
    bytes_fetched: int | None = None  # added to the scratch repo by this run
    cache: str | None = None
    cache_bytes: int | None = None  # all the scratch repo holds (earlier runs included)

    @property
    def ok(self) -> bool:
        return all(e.status != "does not apply" for e in self.entries)

    @property
    def exit_code(self) -> int:
        return int(ExitCode.OK if self.ok else ExitCode.FAILED)

    def to_json(self) -> dict[str, Any]:
        entries = []
        for e in self.entries:
            refs = [
                {**dataclasses.asdict(r), "status": r.status, "offsets": r.offsets} for r in e.refs
            ]
            entries.append(
                {
                    "name": e.name,
                    "status": e.status,
                    "reason": e.reason,
                    "refs": refs,
                    "drift": None if e.drift is None else [dataclasses.asdict(d) for d in e.drift],
                    "identity": None
                    if e.identity is None
                    else [dataclasses.asdict(i) for i in e.identity],
                    "not_checked": e.not_checked,
                }
            )
        return {
            "upstream": self.upstream,
            "mode": self.mode,
            "ok": self.ok,
            "exit_code": self.exit_code,
            "bytes_fetched": self.bytes_fetched,
            "cache": self.cache,
            "cache_bytes": self.cache_bytes,
            "entries": entries,
        }

    def render_table(self) -> str:
        from patchcarry.check_report import render_table

        return render_table(self)


def _validate(entries: list[Entry]) -> None:
    """Every patch must parse before anything is fetched (BadInputError, exit 5)."""
    for entry in entries:
        for patch in entry.patches(with_tests=True):
            parse(patch.read_text(), name=patch.name)


def _offline(entries: list[Entry], tree: Path, label: str) -> list[EntryResult]:
    results = []
    for entry in entries:
        if entry.offline:
            results.append(
                EntryResult(
                    entry.name, [], not_checked=["apply", *OFFLINE_SKIPS], reason=entry.offline
                )
            )
            continue

        def read(path: str) -> str | None:
            file = tree / path
            return file.read_text() if file.is_file() else None

        # The installed wheel ships megatron/ only: test patches cannot be judged against it.
        applied = check_steps.apply_at(entry.patches(with_tests=False), read)
        skipped = [*OFFLINE_SKIPS, *(["tests"] if entry.tests else [])]
        results.append(
            EntryResult(
                entry.name, [RefApply("installed", label, None, applied)], not_checked=skipped
            )
        )
    return results


def run_offline(entries: list[Entry], tree: Path | None = None) -> CheckReport:
    """Apply check against a plain source tree (default: the installed megatron-core)."""
    from patchcarry import megatron_tree

    _validate(entries)
    tree = tree or megatron_tree.installed_tree()
    label = megatron_tree.tree_label(tree)
    return CheckReport(label, "offline", _offline(entries, tree, label))


def _upstream_entry(fetched: upstream_mod.FetchedUpstream, entry: Entry) -> EntryResult:
    repo, base = fetched.repo, entry.base_commit
    tip = fetched.branch_tips[entry.base_branch]
    patches = entry.patches(with_tests=True)  # test patches are checked even if not sent
    refs = []
    for ref, commit, label in (
        ("base", base, base[:7]),
        ("tip", tip, f"{entry.base_branch} {tip[:7]}"),
    ):
        applied = check_steps.apply_at(patches, functools.partial(fetched.show, commit))
        refs.append(RefApply(ref, label, commit, applied))
    drift = check_steps.drift(repo, base, tip, patches)
    identity = [
        check_steps.identity(repo, entry.fix, n, fetched.pull_heads[n]) for n in entry.supersedes
    ]
    return EntryResult(entry.name, refs, drift, identity)


def run_checks(
    entries: list[Entry],
    *,
    upstream: str = upstream_mod.DEFAULT_UPSTREAM,
    offline: bool = False,
    work_dir: Path | None = None,
) -> CheckReport:
    """Check `entries` against `upstream` (URL or local path), or offline against the
    installed megatron-core. Raises BadInputError (5) / UpstreamError (4); a patch that does
    not apply is a result (`report.exit_code == 1`), not an exception."""
    if offline:
        return run_offline(entries)
    _validate(entries)
    fetched = upstream_mod.fetch(
        upstream,
        base_commits=sorted({e.base_commit for e in entries}),
        branches=sorted({e.base_branch for e in entries}),
        pulls=sorted({n for e in entries for n in e.supersedes}),
        work_dir=work_dir,
    )
    results = [_upstream_entry(fetched, e) for e in entries]
    return CheckReport(
        upstream, "upstream", results, fetched.bytes_fetched, str(fetched.repo), fetched.cache_bytes
    )
