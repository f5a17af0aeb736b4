"""By hand, against a local mirror of NVIDIA/Megatron-LM (not in CI): carry the net change of
recently merged PRs as patches on their own bases and ask `check` at dev's tip whether each
has landed, with which commit and through which merge; PRs that never landed are controls.

    python -m testing.landing_mirror /work/.mirror/NVIDIA+Megatron-LM/repo --count 10 \
        --merged 10 --controls 5 --out x.json

Cases: a squash commit on dev's first-parent history whose subject ends "(#N)"; a squash on
main's that reached dev through a merge ("nightly sync main into dev"; expected: that squash,
and the first merge of dev's first-parent history that holds it; skipped when that merge
changed none of the PR's files, dev keeping its own version); a PR whose number no subject
on dev or main ends with (a control). The PR's change is `git diff` of its head against its
merge-base with the squash's parent (PRs whose own commits hold a merge, or that touch files
no manifest may carry, are skipped). All cases go through one `check` (one history read).
Prints one line per case and the run's cost, and saves the JSON. Only reads the mirror.

A case read "landed, then undone" is right when it names the PR's squash (and sync merge) and
git no longer reverse-applies the PR's change at dev's tip. Where `check` names another
commit than the PR's squash, it is right only when git says so:
that commit is on dev's first-parent history before the expected landing, and the PR's change
reverse-applies at it and not at its parent (a dev-side port that carried the same lines to
dev before the sync merge did; `carried_earlier`).

Bench (`--sizes 10 50 100 200 --runs 10`): each size is one cold `check` (its own cache, the
manifest loaded anew) of the first N cases, the largest `--runs` times in a row; each run's
time, bytes and history reads, and whether every verdict was right, go to the JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from patchcarry import git, manifest
from patchcarry.check.report import Verdict
from patchcarry.check.run import run_checks
from patchcarry.errors import BadInputError, FatalError

_PR_END = re.compile(r"\(#(\d+)\)$")
AUTHOR = "Hand Test <hand@example.invalid>"


def _g(*args: str, repo: Path) -> str:
    return git.git(*args, cwd=repo)[1]


def _pull_heads(repo: Path) -> dict[int, str]:
    out = _g("for-each-ref", "--format=%(refname) %(objectname)", "refs/pull/", repo=repo)
    heads = {}
    for line in out.splitlines():
        ref, sha = line.split()
        if ref.endswith("/head"):
            heads[int(ref.split("/")[2])] = sha
    return heads


def _case(repo: Path, number: int, head: str, parent: str) -> dict[str, Any] | None:
    """The PR's own base and net change, or None when it is not a clean case."""
    base = git.merge_base(head, parent, cwd=repo)
    if base is None or base == head:
        return None
    merges = _g("rev-list", "--merges", f"{base}..{head}", repo=repo).split()
    files = _g("diff", "--name-only", "--no-renames", base, head, repo=repo).split()
    if merges or not files or any(f.startswith(".github/") for f in files):
        return None
    diff = git.git_bytes("diff", "--binary", "--no-renames", base, head, cwd=repo)[1]
    if b"GIT binary patch" in diff or not diff.strip():
        return None
    return {"number": number, "base": base, "head": head, "files": files, "diff": diff}


def _patch_text(title: str, diff: bytes) -> bytes:
    name, email = AUTHOR[:-1].split(" <")
    head = (
        f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        f"From: {name} <{email}>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
        f"Subject: [PATCH] {title}\n\nCarried by hand for the landing check.\n\n"
        f"Signed-off-by: {AUTHOR}\n---\n"
    )
    return head.encode() + diff + b"-- \n2.39.5\n\n"


def write_cases(
    dest: Path, cases: list[dict[str, Any]], upstream: str = "NVIDIA/Megatron-LM",
    branch: str = "dev",
) -> Path:  # fmt: skip
    """Each case's net change as a patch in `dest`, and the manifest carrying them all."""
    lines = [
        f'[defaults]\nupstream = "{upstream}"\nbase_branch = "{branch}"\n'
        f'fork = "hand/{upstream.split("/")[1]}"\n'
    ]
    for case in cases:
        patch = f"{case['number']:05d}-pr.patch"
        (dest / patch).write_bytes(_patch_text(f"PR {case['number']}", case["diff"]))
        tops = sorted({f.split("/")[0] + ("/**" if "/" in f else "") for f in case["files"]})
        lines.append(
            f'[[entry]]\nname = "pr-{case["number"]}"\ntitle = "PR {case["number"]}"\n'
            f'base_commit = "{case["base"]}"\nhead_branch = "hand/pr-{case["number"]}"\n'
            f'fix = "{patch}"\nsupersedes = [{case["number"]}]\n'
            f"paths = {json.dumps(tops)}\n"
        )
    path = dest / "series.toml"
    path.write_text("\n".join(lines))
    return path


def _numbers(repo: Path, *revs: str) -> set[int]:
    """The PR numbers the subjects of `revs`' history end with (all parents)."""
    subjects = _g("log", "--format=%s", *revs, repo=repo).splitlines()
    return {int(m.group(1)) for s in subjects if (m := _PR_END.search(s))}


def pick(
    repo: Path, count: int, controls: int, skip: int, merged_count: int = 0
) -> list[dict[str, Any]]:
    """`count` recent squash-merged PRs on dev (skipping the newest `skip`), `merged_count`
    PRs squashed on main and brought to dev by a merge ("nightly sync main into dev"), and
    `controls` PRs whose number no subject on dev's or main's history ends with."""
    heads = _pull_heads(repo)
    log = _g("log", "--first-parent", "--format=%H %P%x00%s", "dev", "-800", repo=repo)
    cases: list[dict[str, Any]] = []
    for line in log.splitlines():
        shas, _, subject = line.partition("\0")
        sha, parent = shas.split()[:2]
        match = _PR_END.search(subject)
        if match and len(cases) < count + skip and int(match.group(1)) in heads:
            case = _case(repo, int(match.group(1)), heads[int(match.group(1))], parent)
            if case is not None:
                cases.append({**case, "expected": sha, "subject": subject, "merge": None})
    cases = cases[skip:]
    dev_first = _g("rev-list", "--first-parent", "dev", repo=repo).split()
    on_dev = set(dev_first)
    main_log = _g("log", "--first-parent", "--format=%H %P%x00%s", "main", "-1500", repo=repo)
    merged = 0
    for line in main_log.splitlines():
        if merged >= merged_count:
            break
        shas, _, subject = line.partition("\0")
        sha, parent = shas.split()[:2]
        match = _PR_END.search(subject)
        if not match or int(match.group(1)) not in heads or sha in on_dev:
            continue
        if not git.is_ancestor(sha, "dev", cwd=repo):
            continue  # not synced into dev yet
        below = set(_g("rev-list", "--ancestry-path", f"{sha}..dev", repo=repo).split())
        path = [c for c in dev_first if c in below]
        case = _case(repo, int(match.group(1)), heads[int(match.group(1))], parent)
        brought = case and _g("diff", "--name-only", f"{path[-1]}^1", path[-1], "--",
                              *case["files"], repo=repo).strip()  # fmt: skip
        if case is not None and brought:  # else dev kept its own version of every file
            cases.append({**case, "expected": sha, "subject": subject, "merge": path[-1]})
            merged += 1
    landed = _numbers(repo, "dev", "main")
    newest = sorted((n for n in heads if n not in landed), reverse=True)
    tip = _g("rev-parse", "dev", repo=repo).strip()
    for number in newest:
        if len([c for c in cases if c.get("expected") is None]) >= controls:
            break
        case = _case(repo, number, heads[number], tip)
        if case is not None:
            cases.append({**case, "expected": None, "subject": None, "merge": None})
    return cases


def _applies(repo: Path, rev: str, diff: bytes, *, reverse: bool) -> bool:
    """git's own verdict: does `diff` (reverse-)apply to the tree of `rev`? Read into a
    scratch index, no work tree."""
    with tempfile.TemporaryDirectory(prefix="landing-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git.git("read-tree", rev, cwd=repo, env_extra=env)
        args = ["apply", "--check", "--cached", *(["-R"] if reverse else []), "-"]
        code, _, _ = git.git_bytes(*args, cwd=repo, env_extra=env, stdin=diff, check=False)
        return code == 0


def carried_earlier(repo: Path, case: dict[str, Any], found: str) -> bool:
    """Whether `found`, named where the PR's own squash was expected, carried the PR's lines
    to dev first (a dev-side port of a fix that landed on main, before the sync merge): it is
    on dev's first-parent history before the expected landing, and git reverse-applies the
    PR's change at it but not at its first parent."""
    landing = case["merge"] or case["expected"]
    first_parent = _g("rev-list", "--first-parent", "dev", repo=repo).split()
    return (
        found in first_parent
        and git.is_ancestor(found, landing, cwd=repo)
        and _applies(repo, found, case["diff"], reverse=True)
        and not _applies(repo, f"{found}^1", case["diff"], reverse=True)
    )


def _judged(repo: Path, case: dict[str, Any], landing: Any) -> dict[str, Any]:
    found = landing.commit.sha if landing.commit else None
    merge = landing.merged_by.sha if landing.merged_by else None
    expected = case["expected"]
    exact = found == expected and merge == case["merge"] and landing.landed
    if found == expected and merge == case["merge"] and landing.verdict == Verdict.UNDONE:
        # right when git agrees the PR's change is no longer whole at the tip
        exact = not _applies(repo, "dev", case["diff"], reverse=True)
    earlier = bool(expected and landing.landed and not exact)
    earlier = earlier and found is not None and carried_earlier(repo, case, found)
    return {
        "pr": case["number"],
        "base": case["base"],
        "expected": expected,
        "expected_subject": case["subject"],
        "expected_merge": case["merge"],
        "verdict": landing.verdict,
        "commit": found,
        "subject": landing.commit.subject if landing.commit else None,
        "merged_by": merge,
        "carried_earlier": earlier,
        "evidence": landing.evidence,
        "changed_since": [c.sha for c in landing.changed_since],
        "partial": landing.partial,
        "ok": (exact or earlier)
        if expected
        else not (landing.landed or landing.verdict == Verdict.UNDONE),
    }


def load_cases(dest: Path, cases: list[dict[str, Any]]) -> tuple[list[Any], list[dict[str, Any]]]:
    """The manifest of `cases` written in `dest` and loaded: (entries, the cases kept)."""
    return select_cases(manifest.load(write_cases(dest, cases)), cases)


def select_cases(
    loaded: manifest.Manifest, cases: list[dict[str, Any]]
) -> tuple[list[Any], list[dict[str, Any]]]:
    """The entries of a loaded manifest of `cases` (one entry each, in order) and the cases
    kept: a PR touching what no manifest may carry (CI files) is no case, and is said."""
    entries, kept = [], []
    for case, name in zip(cases, loaded.names, strict=True):
        try:
            entries += loaded.select([name])
            kept.append(case)
        except BadInputError as exc:
            print(f"skipped #{case['number']}: {str(exc).splitlines()[0][-120:]}")
    return entries, kept


def check_cold(
    repo: Path, dest: Path, cases: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One `check` of every case, from the manifest's loading on, with a cache of its own:
    (its cost with the wall time, each case judged)."""
    started = time.monotonic()
    entries, kept = load_cases(dest, cases)
    with tempfile.TemporaryDirectory(prefix="landing-cache-") as cache:
        # every case in one run: the shared history is read once
        report = run_checks(list(entries), upstream=str(repo), work_dir=Path(cache) / "wd")
    wall = time.monotonic() - started
    results = []
    for case, result in zip(kept, report.entries, strict=True):
        assert result.landing is not None
        results.append(_judged(repo, case, result.landing))
    return {**(report.cost or {}), "wall_seconds": round(wall, 2)}, results


def _print(result: dict[str, Any]) -> None:
    found, merge, expected = result["commit"], result["merged_by"], result["expected"]
    what = f"{found[:12]} {result['subject']!r}" if found else "-"
    via = f" via {merge[:12]}" if merge else ""
    mark = "ok " if result["ok"] else "BAD"
    first = " (carried to dev first, git-verified)" if result["carried_earlier"] else ""
    print(
        f"{mark} #{result['pr']}: {result['verdict']}: {what}{via}{first}"
        f" (expected {expected[:12] if expected else 'not landed'})"
    )


def bench(repo: Path, cases: list[dict[str, Any]], sizes: list[int], runs: int) -> dict[str, Any]:
    """Cold runs of `check` on the first N cases for each size, and `runs` cold runs of the
    largest: time, bytes and history reads each, and whether every verdict was right."""
    rows = []
    plan = [(n, 1) for n in sizes[:-1]] + [(sizes[-1], i + 1) for i in range(runs)]
    for size, run in plan:
        with tempfile.TemporaryDirectory(prefix="landing-mirror-") as tmp:
            cost, results = check_cold(repo, Path(tmp), cases[:size])
        bad = [r["pr"] for r in results if not r["ok"]]
        rows.append({"entries": cost["entries"], "run": run, **cost, "ok": not bad, "bad": bad})
        print(json.dumps(rows[-1]), file=sys.stderr)
    # the last run's verdicts, case by case (every run's are checked the same way)
    return {"runs": rows, "ok": all(r["ok"] for r in rows), "cases": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", type=Path)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--merged", type=int, default=10, help="PRs landed on main, synced")
    parser.add_argument("--controls", type=int, default=5)
    parser.add_argument("--skip", type=int, default=0, help="skip the newest N merged PRs")
    parser.add_argument("--sizes", type=int, nargs="*", help="bench: cold runs of N cases each")
    parser.add_argument("--runs", type=int, default=1, help="bench: cold runs of the largest")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    repo = args.mirror.resolve()
    cases = pick(repo, args.count, args.controls, args.skip, args.merged)
    with tempfile.TemporaryDirectory(prefix="landing-mirror-") as tmp:
        cases = load_cases(Path(tmp), cases)[1]
    random.Random(0).shuffle(cases)  # every size holds each kind of case
    summary: dict[str, Any] = {"mirror_dev": _g("rev-parse", "dev", repo=repo).strip()}
    try:
        if args.sizes:
            summary.update(bench(repo, cases, sorted(args.sizes), args.runs))
        else:
            with tempfile.TemporaryDirectory(prefix="landing-mirror-") as tmp:
                cost, results = check_cold(repo, Path(tmp), cases)
            for result in results:
                _print(result)
            print(json.dumps(cost))
            summary.update(cost=cost, cases=results, ok=all(r["ok"] for r in results))
    except FatalError as exc:
        print(f"error: {exc}")
        return 1
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
