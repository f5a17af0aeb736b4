"""Preflight through `patchcarry.check.run_checks` (reused, never re-implemented), summarised
as short sentences per entry for the plan and the PR body. The sentences name no moving sha,
so the body only changes when a result does."""

from __future__ import annotations

import dataclasses

from patchcarry.check import CheckReport, EntryResult, run_checks
from patchcarry.manifest import Entry


@dataclasses.dataclass
class CheckOutcome:
    ok: bool
    exit_code: int
    lines: dict[str, list[str]]
    failed: set[str]

    def ok_for(self, name: str) -> bool:
        return name not in self.failed


def _ref_line(ref_kind: str, label: str, status: str, offsets: list[int], base_branch: str) -> str:
    where = {
        "base": f"the pinned base {label}",
        "tip": f"the current {base_branch} tip",
        "installed": label,
    }.get(ref_kind, label)
    if status == "offset":
        shift = "/".join(f"{o:+d}" for o in offsets)
        return f"applies at {where} (offset {shift} lines, no fuzz)"
    if status == "clean":
        return f"applies cleanly at {where}"
    if status == "fuzz":
        return f"applies at {where} only with fuzz (context changed)"
    return f"does NOT apply at {where} ({status})"


def entry_lines(result: EntryResult, entry: Entry) -> list[str]:
    """What the check established for one entry, as sentences."""
    if not result.refs:
        return [f"not checked: {result.reason}"]
    lines = [_ref_line(r.ref, r.label, r.status, r.offsets, entry.base_branch) for r in result.refs]
    for d in result.drift or []:
        if d.new_file:
            lines.append(f"{d.path} is new: absent at the pinned base and the tip")
        elif not d.changed:
            lines.append(f"{d.path} is unchanged between the pinned base and the tip")
        elif d.overlaps:
            lines.append(f"{d.path} changed upstream under our hunk(s): review the rebase")
        else:
            lines.append(f"{d.path} changed upstream, but not under our hunks")
    for i in result.identity or []:
        if i.result == "identical":
            lines.append(f"identical to #{i.pr} (same git patch-id)")
        elif i.comments_only:
            lines.append(
                f"differs from #{i.pr} only in comments/whitespace ({', '.join(i.files_differ)})"
            )
        else:
            lines.append(f"differs from #{i.pr} in code ({', '.join(i.files_differ)})")
    if result.not_checked:
        lines.append(f"not checked here: {', '.join(result.not_checked)}")
    return lines


def summarise(report: CheckReport, entries: list[Entry]) -> CheckOutcome:
    by_name = {e.name: e for e in entries}
    lines = {r.name: entry_lines(r, by_name[r.name]) for r in report.entries if r.name in by_name}
    failed = {r.name for r in report.entries if r.status == "does not apply"}
    return CheckOutcome(report.ok, report.exit_code, lines, failed)


def run(entries: list[Entry], *, upstream: str | None, offline: bool) -> CheckOutcome:
    """Run the check (offline: the installed megatron-core) and summarise it."""
    if offline:
        report = run_checks(entries, offline=True)
    elif upstream:
        report = run_checks(entries, upstream=upstream)
    else:
        report = run_checks(entries)
    return summarise(report, entries)
