"""`check`'s results for people: its table, resubmit's plan sentences, the PR body's words."""

from __future__ import annotations

from collections.abc import Mapping

from patchcarry.check.report import (
    CheckReport,
    EntryResult,
    FileDrift,
    Identity,
    Landing,
    PatchApply,
    RefApply,
    Verdict,
)
from patchcarry.git.sha import short
from patchcarry.manifest import Entry
from patchcarry.units import human_bytes


def _status(done: RefApply | PatchApply) -> str:
    offsets = "/".join(f"{o:+d}" for o in done.offsets)
    return f"offset {offsets}" if done.status == "offset" else done.status


def _drift_line(d: FileDrift) -> str:
    if not d.changed:
        what = "absent at base and tip (our patch creates it)" if d.new_file else "unchanged"
        return f"{d.path}: {what}" + ("" if d.new_file else " from base to tip")
    where = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in d.changed_old_ranges[:6])
    more = " ..." if len(d.changed_old_ranges) > 6 else ""
    if d.overlaps:
        hunks = ", ".join(str(h) for h in d.overlapping_hunks)
        return f"{d.path}: changed, OVERLAPS our hunk(s) at line {hunks} (base lines {where}{more})"
    return (f"{d.path}: changed, not under our hunks ({d.nearest} unchanged line(s) to the"
            f" nearest change; base lines {where}{more})")  # fmt: skip


def _identity_line(i: Identity) -> str:
    head = f"#{i.pr} {short(i.head)}"
    if i.merge:
        head += f" (merge; change taken against parent {short(i.compared_to)})"
    if i.result == "identical":
        return f"{head}: identical (same git patch-id)"
    kind = "comments/whitespace only" if i.comments_only else "code differs"
    return f"{head}: different, {kind} ({', '.join(i.files_differ) or 'file set'})"


def commit_words(landing: Landing) -> str:
    """`sha subject` of the landing's commit, with its PR when the subject names one."""
    c = landing.commit
    if c is None:
        return "no single commit found"
    words = f"{short(c.sha)} {c.subject!r}" + (f" (PR #{c.pr})" if c.pr else "")
    m = landing.merged_by
    return words + (f", brought by merge {short(m.sha)} {m.subject!r}" if m is not None else "")


def landing_sentence(landing: Landing) -> str:
    """The verdict and its commit in one sentence; an undone landing names what undid it."""
    said = f"{landing.verdict} upstream: {commit_words(landing)}"
    if landing.verdict == Verdict.UNDONE and landing.changed_since:
        said += ", undone by " + ", ".join(
            f"{short(c.sha)} {c.subject!r}" for c in landing.changed_since
        )
    return said


def landing_lines(landing: Landing) -> list[str]:
    """The landing verdict, the commit, how it was known, what changed since, what is partial."""
    if landing.verdict in (Verdict.NOT_LANDED, Verdict.UNDETERMINED):
        lines = [str(landing.verdict)]
    elif landing.verdict == Verdict.SUPERSEDED:
        lines = [f"superseded: its place was removed by {commit_words(landing)}"]
    else:
        lines = [f"{landing.verdict}: {commit_words(landing)}"]
    lines += [f"  with: {short(c.sha)} {c.subject!r}" for c in landing.carried_by]
    lines += [f"  by: {e}" for e in landing.evidence]
    if landing.changed_since:
        what = {Verdict.SUPERSEDED: "also", Verdict.UNDONE: "undone by"}.get(
            landing.verdict, "changed since by"
        )
        lines += [f"  {what}: {short(c.sha)} {c.subject!r}" for c in landing.changed_since]
    lines += [f"  partial: {p}" for p in landing.partial]
    if landing.next:
        lines.append(f"  next: {landing.next}")
    return lines


def _where(ref: RefApply) -> str:
    return ref.ref if ref.ref == "installed" else f"{ref.ref} {ref.label}"


def _widths(entries: list[EntryResult]) -> tuple[int, int]:
    """The ENTRY and REF columns: the longest name and ref and two spaces, at least 22 and 20."""
    names = max((len(e.name) for e in entries), default=0) + 2
    refs = max((len(_where(r)) for e in entries for r in e.refs), default=0) + 2
    return max(22, names), max(20, refs)


def _entry_lines(e: EntryResult, widths: tuple[int, int] = (22, 20)) -> list[str]:
    first, second = widths
    if not e.refs:
        return [f"{e.name:<{first}}{'-':<{second}}not checked: {e.reason}"]
    lines = []
    for n, ref in enumerate(e.refs):
        name = e.name if n == 0 else ""
        lines.append(f"{name:<{first}}{_where(ref):<{second}}{_status(ref)}")
        if len({_status(p) for p in ref.patches}) > 1:  # say which patch is which
            lines += [f"{'':<24}{p.patch[:40]}: {_status(p)}" for p in ref.patches]
        for p in ref.patches:
            if p.rejected and e.status != "landed":  # a landed fix's "rejected hunk" is itself
                lines.append(f"{'':<4}{p.patch}: rejected hunk:")
                lines += [f"{'':<6}{t}" for t in p.rejected.splitlines()]
    for d in e.drift or []:
        lines.append(f"{'':<2}drift     {_drift_line(d)}")
    for i in e.identity or []:
        lines.append(f"{'':<2}identity  {_identity_line(i)}")
    if e.landing is not None:
        lines += [f"{'':<2}{'landing' if n == 0 else '':<10}{t}"
                  for n, t in enumerate(landing_lines(e.landing))]  # fmt: skip
    if e.not_checked:
        lines.append(f"{'':<2}not checked: {', '.join(e.not_checked)}")
    return lines


def table(report: CheckReport) -> str:
    if report.mode == "offline":
        out = [f"offline: {report.upstream} (apply check only)"]
    else:
        fetched = human_bytes(report.bytes_fetched or 0)
        cached = human_bytes(report.cache_bytes or 0)
        out = [f"upstream: {report.upstream}",
               f"fetched {fetched} this run; cache {report.cache} holds {cached}"]  # fmt: skip
    widths = _widths(report.entries)
    out.append(f"{'ENTRY':<{widths[0]}}{'REF':<{widths[1]}}STATUS")
    for e in report.entries:
        out += _entry_lines(e, widths)
    bad = [e.name for e in report.entries if not e.status.ok]
    landed = [e.name for e in report.entries if e.status == "landed"]
    said = f"landed upstream, nothing to carry: {', '.join(landed)}" if landed else ""
    if bad:
        first = f"{said}; " if said else ""
        out.append(f"result: {first}does not apply: {', '.join(bad)} (exit {report.exit_code})")
    elif landed:
        rest = "; the others apply" if len(landed) < len(report.entries) else ""
        out.append(f"result: {said}{rest} (exit {report.exit_code})")
    else:
        out.append(f"result: all checked patches apply (exit {report.exit_code})")
    return "\n".join(out)


def _ref_line(ref_kind: str, label: str, status: str, offsets: list[int], base_branch: str) -> str:
    named = {"base": f"the pinned base {label}", "tip": f"the current {base_branch} tip"}
    where = named.get(ref_kind, label)
    if status == "offset":
        shift = "/".join(f"{o:+d}" for o in offsets)
        return f"applies at {where} (offset {shift} lines, no fuzz)"
    if status == "clean":
        return f"applies cleanly at {where}"
    if status == "fuzz":
        return f"applies at {where} only with fuzz (context changed)"
    return f"does NOT apply at {where} ({status})"


def sentences(result: EntryResult, entry: Entry) -> list[str]:
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
    if result.landing is not None and result.landing.verdict == Verdict.UNDETERMINED:
        lines.append(f"landing undetermined: {'; '.join(result.landing.partial)}")
    elif result.landing is not None and result.landing.verdict != Verdict.NOT_LANDED:
        lines.append(landing_sentence(result.landing))
    if result.not_checked:
        lines.append(f"not checked here: {', '.join(result.not_checked)}")
    return lines


def _at(ref: RefApply, entry: Entry, dates: Mapping[str, str]) -> str:
    """`dev at d48bd6b (2026-08-21)`: the branch, the commit and its date."""
    if ref.commit is None:
        return ref.label
    when = f" ({dates[ref.commit]})" if dates.get(ref.commit) else ""
    return f"{entry.base_branch} at {short(ref.commit)}{when}"


def _applies(status: str, offsets: list[int], at: str) -> str:
    if status == "clean":
        return f"applies cleanly to {at}"
    if status == "offset":
        moved = "/".join(f"{o:+d}" for o in offsets)
        return f"applies to {at} without fuzz (its hunks moved {moved} lines)"
    if status == "fuzz":
        return f"applies to {at} only with fuzz: the lines around a hunk changed"
    return f"does not apply to {at} ({status}): it needs a rebase"


def review_sentences(result: EntryResult, entry: Entry, dates: Mapping[str, str]) -> list[str]:
    """What the check established, in a reviewer's words (names the tip: refreshed as it moves)."""
    if not result.refs:
        return [f"not checked: {result.reason}"]
    lines, seen = [], set()
    for ref in result.refs:
        if ref.commit is not None and ref.commit in seen:
            continue  # the tip is the base: said once
        seen.add(ref.commit or "")
        lines.append(_applies(ref.status, ref.offsets, _at(ref, entry, dates)))
    since = f"{entry.base_branch} since {short(entry.base_commit)}"
    for d in result.drift or []:
        if d.new_file:
            lines.append(f"{d.path} is a new file")
        elif not d.changed:
            lines.append(f"{d.path} is unchanged on {since}")
        elif d.overlaps:
            lines.append(f"{d.path}: lines this PR changes were also changed on {since}")
        else:
            lines.append(f"{d.path} changed on {since}, but none of the lines this PR changes "
                         f"(the nearest change is {d.nearest} lines away)")  # fmt: skip
    for i in result.identity or []:
        if i.result == "identical":
            lines.append(f"the change is identical to #{i.pr}'s")
        else:
            what = "only in comments or whitespace" if i.comments_only else "in code"
            lines.append(f"the change differs from #{i.pr}'s {what} ({', '.join(i.files_differ)})")
    if result.landing is not None and result.landing.verdict != Verdict.NOT_LANDED:
        lines.append(landing_sentence(result.landing))
    if result.not_checked:
        lines.append(f"not checked here: {', '.join(result.not_checked)}")
    return lines
