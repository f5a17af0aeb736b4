"""Upstream's unit tests, unpatched vs patched, sorted; pure, so tested on CPU."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from patchcarry.patchfile import Patch

FAILING = ("failed", "error")
# (cause, pattern over the failure/error message); the first that matches names the cause.
CAUSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Transformer Engine missing",
     re.compile(r"transformer.?engine|\bTE\b.*(?:not|required|install)|HAVE_TE", re.I)),
    ("world size",
     re.compile(r"world.?size|nproc|num.?gpus|device_count|GPUs? (?:are )?(?:needed|required)|"
                r"invalid device ordinal|not enough (?:GPUs|devices)", re.I)),
)  # fmt: skip
_DEF_TEST = re.compile(r"^\+\s*def (test_\w+)\(")


def carried_tests(test_patches: Iterable[Patch]) -> set[str]:
    """The test functions the manifest's test patches add: the tests expected to flip."""
    names: set[str] = set()
    for patch in test_patches:
        for hunk in patch.hunks:
            names.update(m.group(1) for line in hunk.lines if (m := _DEF_TEST.match(line)))
    return names


def cause(message: str) -> str:
    """The named cause of a failure seen in both trees, else a plain description."""
    for name, pattern in CAUSES:
        if pattern.search(message):
            return name
    return "fails the same way in both trees"


def _test_name(node: str) -> str:
    return node.rsplit("::", 1)[-1].split("[", 1)[0]


@dataclasses.dataclass(frozen=True)
class Verdict:
    regressions: list[str]
    expected_flips: list[str]
    missed_flips: list[str]
    fixed: list[str]
    same_in_both: dict[str, list[str]]  # cause -> node ids

    @property
    def ok(self) -> bool:
        return not self.regressions and not self.missed_flips


def classify(runs: Sequence[Mapping[str, Any]], carried: set[str]) -> Verdict:
    """Sort recorded runs ({"group", "tree", "exit_code", "outcomes", "messages"}) per test."""
    by = {(r["group"], r["tree"]): r for r in runs}
    regressions, flips, missed, fixed = [], [], [], []
    same: dict[str, list[str]] = {}
    seen_carried = set()
    for group in dict.fromkeys(r["group"] for r in runs):
        before, after = by.get((group, "unpatched")), by.get((group, "patched"))
        if before is None or after is None:
            continue
        nodes = sorted(set(before["outcomes"]) | set(after["outcomes"]))
        for node in nodes:
            old = before["outcomes"].get(node, "missing")
            new = after["outcomes"].get(node, "missing")
            is_carried = _test_name(node) in carried
            if is_carried:
                seen_carried.add(_test_name(node))
            if old == "passed" and new != "passed":
                regressions.append(f"{node}: passed unpatched, {new} patched")
            elif is_carried and old in FAILING and new == "passed":
                flips.append(node)
            elif is_carried:
                missed.append(f"{node}: {old} unpatched, {new} patched (expected a flip)")
            elif old in FAILING and new == "passed":
                fixed.append(node)
            elif old in FAILING and new in FAILING:
                message = after.get("messages", {}).get(node, "")
                same.setdefault(cause(message), []).append(node)
        if before["exit_code"] == 0 and after["exit_code"] != 0:
            regressions.append(f"{group}: exit 0 unpatched, {after['exit_code']} patched")
    missed += [f"{name}: not run in either tree" for name in sorted(carried - seen_carried)]
    return Verdict(regressions, flips, missed, fixed, same)


def render(verdict: Verdict) -> str:
    """The summary's section on upstream's tests."""
    lines = [f"Regressions (pass unpatched, fail patched): {len(verdict.regressions)}"]
    lines += [f"- {r}" for r in verdict.regressions]
    lines.append(f"Carried tests' expected flip (fail unpatched, pass patched): "
                 f"{len(verdict.expected_flips)}")  # fmt: skip
    lines += [f"- `{n}`" for n in verdict.expected_flips]
    if verdict.missed_flips:
        lines.append(f"Carried tests that did not flip: {len(verdict.missed_flips)}")
        lines += [f"- {m}" for m in verdict.missed_flips]
    if verdict.fixed:
        lines.append(f"Other tests that pass only patched: {len(verdict.fixed)}")
        lines += [f"- `{n}`" for n in verdict.fixed]
    total = sum(len(v) for v in verdict.same_in_both.values())
    lines.append(f"Failing identically in both trees (the machine's, not the patches'): {total}")
    for why, nodes in sorted(verdict.same_in_both.items()):
        lines.append(f"- {why}: {len(nodes)}")
        lines += [f"  - `{n}`" for n in nodes]
    return "\n".join(lines) + "\n"
