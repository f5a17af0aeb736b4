"""What `check` established, as typed results (`check.render` renders, `to_json` is --json)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from patchcarry.errors import ExitCode

STATUS_ORDER = ("clean", "offset", "fuzz", "conflict")


@dataclasses.dataclass
class PatchApply:
    patch: str
    status: str  # clean | offset | fuzz | conflict | not checked (after an earlier conflict)
    offsets: list[int]
    rejected: str | None = None


@dataclasses.dataclass
class RefApply:
    ref: str  # base | tip | installed
    label: str  # e.g. "c76ff61", "dev d48bd6b", "megatron-core 0.16.1 (installed)"
    commit: str | None
    patches: list[PatchApply]

    @property
    def status(self) -> str:
        seen = [p.status for p in self.patches if p.status in STATUS_ORDER]
        return max(seen, key=STATUS_ORDER.index) if seen else "not checked"

    @property
    def offsets(self) -> list[int]:
        return sorted({o for p in self.patches for o in p.offsets})


@dataclasses.dataclass
class FileDrift:
    path: str
    changed: bool
    overlaps: bool
    changed_old_ranges: list[tuple[int, int]]  # old-side [first, last] lines upstream changed
    overlapping_hunks: list[int]  # old_start of each of our hunks they touch
    nearest: int | None  # unchanged lines between our hunks and the closest upstream change
    new_file: bool = False  # our patch creates this file


@dataclasses.dataclass
class Identity:
    pr: int
    head: str
    merge: bool
    compared_to: str  # the parent the PR's change is taken against
    result: str  # identical | different
    comments_only: bool | None  # for "different": only comment/whitespace lines differ
    files_differ: list[str]
    files: list[str]  # files the PR's change touches


@dataclasses.dataclass
class UpstreamCommit:
    sha: str
    subject: str
    pr: int | None  # the PR number its subject ends with, "(#N)"
    date: str = ""  # its committer date, YYYY-MM-DD


class Verdict(enum.StrEnum):
    """Where the fix stands on the base branch; its value is the word every output prints."""

    LANDED = "landed"
    CHANGED = "landed, changed since"
    UNDONE = "landed, then undone"  # a commit carried it, a later one reverted or removed it
    SUPERSEDED = "superseded"
    NOT_LANDED = "not landed"
    UNDETERMINED = "undetermined"  # the history the answer needs was not read

    @property
    def landed(self) -> bool:
        """The fix is on the base branch: nothing is left to carry."""
        return self in (Verdict.LANDED, Verdict.CHANGED)

    @property
    def may_retire(self) -> bool:
        """`retire` may record it (`landed = {verdict = ...}` in the manifest)."""
        return self.landed or self is Verdict.SUPERSEDED


class Status(enum.StrEnum):
    """An entry's outcome in one word (`check`'s table and JSON); `ok`: not a failure."""

    NOT_CHECKED = "not checked"
    LANDED = "landed"  # not a failure: nothing is left to carry
    DOES_NOT_APPLY = "does not apply"
    APPLIES = "applies"

    @property
    def ok(self) -> bool:
        return self is not Status.DOES_NOT_APPLY


@dataclasses.dataclass
class Landing:
    """Whether the fix is on the base branch, by which commit, how known, since, and what next."""

    verdict: Verdict  # UNDETERMINED: `partial` says which history was not read
    commit: UpstreamCommit | None = None
    evidence: list[str] = dataclasses.field(default_factory=list)
    changed_since: list[UpstreamCommit] = dataclasses.field(default_factory=list)
    partial: list[str] = dataclasses.field(default_factory=list)
    next: str = ""
    merged_by: UpstreamCommit | None = None  # the base branch's merge that brought `commit`
    # the fix's other commits upstream (a rebase-merge's, a true merge's): those that wrote
    # some of its lines before `commit`, in which it became whole
    carried_by: list[UpstreamCommit] = dataclasses.field(default_factory=list)

    @property
    def landed(self) -> bool:
        return self.verdict.landed


@dataclasses.dataclass
class EntryResult:
    name: str
    refs: list[RefApply]
    drift: list[FileDrift] | None = None
    identity: list[Identity] | None = None
    not_checked: list[str] = dataclasses.field(default_factory=list)
    reason: str | None = None  # why the entry was not checked at all
    landing: Landing | None = None  # None: not judged (offline)

    @property
    def status(self) -> Status:
        if not self.refs:
            return Status.NOT_CHECKED
        if self.landing is not None and self.landing.landed:
            return Status.LANDED
        conflict = any(r.status == "conflict" for r in self.refs)
        return Status.DOES_NOT_APPLY if conflict else Status.APPLIES


@dataclasses.dataclass
class CheckReport:
    upstream: str
    mode: str  # upstream | offline
    entries: list[EntryResult]
    bytes_fetched: int | None = None  # added to the scratch repo by this run
    cache: str | None = None
    cache_bytes: int | None = None  # all the scratch repo holds (earlier runs included)
    # what the run took: seconds, bytes fetched, history fetches per base branch, entries
    cost: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return all(e.status.ok for e in self.entries)

    def entry(self, name: str) -> EntryResult:
        """The result for the entry named `name` (every checked entry has one)."""
        return next(e for e in self.entries if e.name == name)

    @property
    def exit_code(self) -> int:
        return int(ExitCode.OK if self.ok else ExitCode.FAILED)

    def to_json(self) -> dict[str, Any]:
        def each(items: list[Any] | None) -> list[dict[str, Any]] | None:
            return None if items is None else [dataclasses.asdict(i) for i in items]

        entries = [
            {"name": e.name, "status": e.status, "reason": e.reason,
             "refs": [{**dataclasses.asdict(r), "status": r.status, "offsets": r.offsets}
                      for r in e.refs],
             "drift": each(e.drift), "identity": each(e.identity), "not_checked": e.not_checked,
             "landing": None if e.landing is None else dataclasses.asdict(e.landing)}
            for e in self.entries
        ]  # fmt: skip
        return {
            "upstream": self.upstream, "mode": self.mode, "ok": self.ok,
            "exit_code": self.exit_code, "bytes_fetched": self.bytes_fetched, "cache": self.cache,
            "cache_bytes": self.cache_bytes, "cost": self.cost, "entries": entries,
        }  # fmt: skip
