"""The short table `check` prints for people (`--json` is for machines)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from patchcarry.check import CheckReport, EntryResult
    from patchcarry.check_steps import FileDrift, Identity, PatchApply, RefApply


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024 or unit == "MiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} MiB"


def _offsets(status: str, offsets: list[int]) -> str:
    return "offset " + "/".join(f"{o:+d}" for o in offsets) if status == "offset" else status


def _ref_status(ref: RefApply) -> str:
    return _offsets(ref.status, ref.offsets)


def _patch_status(patch: PatchApply) -> str:
    return _offsets(patch.status, patch.offsets)


def _drift_line(d: FileDrift) -> str:
    if not d.changed:
        what = "absent at base and tip (our patch creates it)" if d.new_file else "unchanged"
        return f"{d.path}: {what}" + ("" if d.new_file else " from base to tip")
    where = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in d.changed_old_ranges[:6])
    more = " ..." if len(d.changed_old_ranges) > 6 else ""
    if d.overlaps:
        hunks = ", ".join(str(h) for h in d.overlapping_hunks)
        return f"{d.path}: changed, OVERLAPS our hunk(s) at line {hunks} (base lines {where}{more})"
    return (
        f"{d.path}: changed, not under our hunks ({d.nearest} unchanged line(s) to the"
        f" nearest change; base lines {where}{more})"
    )


def _identity_line(i: Identity) -> str:
    head = f"#{i.pr} {i.head[:7]}"
    if i.merge:
        head += f" (merge; change taken against parent {i.compared_to[:7]})"
    if i.result == "identical":
        return f"{head}: identical (same git patch-id)"
    kind = "comments/whitespace only" if i.comments_only else "code differs"
    return f"{head}: different, {kind} ({', '.join(i.files_differ) or 'file set'})"


def _entry_lines(e: EntryResult) -> list[str]:
    if not e.refs:
        return [f"{e.name:<22}{'-':<20}not checked: {e.reason}"]
    lines = []
    for n, ref in enumerate(e.refs):
        name = e.name if n == 0 else ""
        where = ref.ref if ref.ref == "installed" else f"{ref.ref} {ref.label}"
        lines.append(f"{name:<22}{where:<20}{_ref_status(ref)}")
        if len({_patch_status(p) for p in ref.patches}) > 1:  # say which patch is which
            lines += [f"{'':<24}{p.patch[:40]}: {_patch_status(p)}" for p in ref.patches]
        for p in ref.patches:
            if p.rejected:
                lines.append(f"{'':<4}{p.patch}: rejected hunk:")
                lines += [f"{'':<6}{t}" for t in p.rejected.splitlines()]
    for d in e.drift or []:
        lines.append(f"{'':<2}drift     {_drift_line(d)}")
    for i in e.identity or []:
        lines.append(f"{'':<2}identity  {_identity_line(i)}")
    if e.not_checked:
        lines.append(f"{'':<2}not checked: {', '.join(e.not_checked)}")
    return lines


def render_table(report: CheckReport) -> str:
    if report.mode == "offline":
        out = [f"offline: {report.upstream} (apply check only)"]
    else:
        fetched = human_bytes(report.bytes_fetched or 0)
        cached = human_bytes(report.cache_bytes or 0)
        out = [
            f"upstream: {report.upstream}",
            f"fetched {fetched} this run; cache {report.cache} holds {cached}",
        ]
    out.append(f"{'ENTRY':<22}{'REF':<20}STATUS")
    for e in report.entries:
        out += _entry_lines(e)
    bad = [e.name for e in report.entries if e.status == "does not apply"]
    if bad:
        out.append(f"result: does not apply: {', '.join(bad)} (exit {report.exit_code})")
    else:
        out.append(f"result: all checked patches apply (exit {report.exit_code})")
    return "\n".join(out)
