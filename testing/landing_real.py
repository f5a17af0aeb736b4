"""By hand, against a local mirror of any GitHub project that keeps `refs/pull/N/head` (not in
CI, not a test): carry the net change of that project's newest PRs as patches on their own
bases and ask `check` at the base branch's tip whether each landed; the truth is set by git
alone, on every landing style the project uses.

    python -m testing.landing_real /work/.mirror/pallets+click/repo --count 150 --skip 30 \
        --out click.json
    python -m testing.landing_real --combine click.json requests.json \
        --out docs/landing-real-histories.json

The PR's change is `git diff` of its head against where it left the branch (its merge-base with
the branch just before it landed, or with the tip); PRs whose own commits hold a merge, whose
change is binary or empty, or that touch what no manifest may carry are skipped. Styles:

- `true merge`: the PR's head is on the branch's history, brought by a first-parent merge whose
  other parent is the head (expected: that merge, naming one of the PR's own commits);
- `forward merge`: the head is on the branch's history, brought by a first-parent merge of
  another branch that holds it (a maintenance branch merged forward; expected: that merge, and
  a commit on its side);
- `squash`: the PR's whole diff has the `git patch-id --stable` of one first-parent commit
  (expected: that commit; a one-commit PR rebased reads the same). Patch-ids are taken of
  `-U0` diffs: the same lines added and removed in each file, whatever the context;
- `rebase-merge`: each of the PR's commits has the patch-id of a first-parent commit
  (expected: one of those);
- `not merged`: the head is not on the branch and no patch-id matches, and no subject on the
  branch names the PR's number (`#N`): a control. A PR that only a subject names is no case.

A landing is right when `check` names the expected commit (a "landed, then undone" one only when
git no longer reverse-applies the PR's change at the tip); a control is right unless `check` calls
it landed, changed or undone (a false landing), or git reverse-applies the PR's whole change at
the commit `check` names and not at its parent (the same lines landed through another commit:
counted apart, `controls_landed_elsewhere`). All cases go through one `check` (one history
read), from a cache of its own. Prints one line per case and saves the figures (right %, false
landings, per style) with each case to `--out`. Only reads the mirror; nothing of it is kept.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from patchcarry import git, manifest
from patchcarry.check.report import Verdict
from patchcarry.check.run import run_checks
from testing.landing_mirror import _applies, _g, _pull_heads, select_cases, write_cases

LANDED_VERDICTS = (Verdict.LANDED, Verdict.CHANGED, Verdict.UNDONE)


def _patch_ids(repo: Path, diff: bytes) -> dict[str, str]:
    """{patch-id: commit} of a `git log -p` stream (`git patch-id --stable`)."""
    out = git.git_bytes("patch-id", "--stable", cwd=repo, stdin=diff)[1].decode()
    found: dict[str, str] = {}
    for line in out.splitlines():
        pid, sha = line.split()
        found.setdefault(pid, sha)
    return found


def _own_change(repo: Path, base: str, head: str) -> tuple[list[str], bytes] | None:
    """(files, binary-safe diff) of `base..head`, None when it is no clean case."""
    if base == head or _g("rev-list", "--merges", f"{base}..{head}", repo=repo).strip():
        return None
    files = _g("diff", "--name-only", "--no-renames", base, head, repo=repo).split()
    if not files or any(f.startswith(".github/") for f in files):
        return None
    diff = git.git_bytes("diff", "--binary", "--no-renames", base, head, cwd=repo)[1]
    if b"GIT binary patch" in diff or not diff.strip():
        return None
    return files, diff


def pick(repo: Path, branch: str, count: int, skip: int = 0) -> list[dict[str, Any]]:
    """The newest `count` PRs (by number, past the newest `skip`) that are clean cases, each
    with its style and what git says is its landing."""
    heads = _pull_heads(repo)
    tip = _g("rev-parse", branch, repo=repo).strip()
    first = _g("rev-list", "--first-parent", tip, repo=repo).split()  # newest first
    on_first = set(first)
    reach = set(_g("rev-list", tip, repo=repo).split())
    cases: list[dict[str, Any]] = []
    for number in sorted(heads, reverse=True)[skip:]:
        if len(cases) >= count * 2:  # before the patch-id pass drops ambiguous ones
            break
        head = heads[number]
        if head in on_first:
            continue  # fast-forwarded: no landing style to tell
        if head in reach:
            below = set(_g("rev-list", "--ancestry-path", f"{head}..{tip}", repo=repo).split())
            landing = next(sha for sha in reversed(first) if sha in below)
            parents = _g("rev-list", "--parents", "-n1", landing, repo=repo).split()[1:]
            base = git.merge_base(head, parents[0], cwd=repo)
            style = "true merge" if head in parents[1:] else "forward merge"
            side = set(_g("rev-list", landing, f"^{parents[0]}", repo=repo).split())
            case = {"style": style, "merges": [landing], "accept": sorted(side)}
        else:
            base = git.merge_base(head, tip, cwd=repo)
            case = {"style": None, "merges": [None], "accept": []}
        change = _own_change(repo, base, head) if base else None
        if change is None:
            continue
        cases.append({"number": number, "base": base, "head": head, "files": change[0],
                      "diff": change[1], **case})  # fmt: skip
    _by_patch_id(repo, tip, cases)
    return [c for c in cases if c["style"] is not None][:count]


def _by_patch_id(repo: Path, tip: str, cases: list[dict[str, Any]]) -> None:
    """Styles of the cases whose head is not on the branch: squash, rebase-merge, or the same
    change in a commit a merge brought (another PR's, a cherry-pick); else not merged (a
    control); ambiguous ones (a subject names the PR, git finds no landing) keep none."""
    open_cases = [c for c in cases if c["style"] is None]
    if not open_cases:
        return
    oldest = min(open_cases, key=lambda c: int(_g("log", "-1", "--format=%ct", c["base"],
                                                    repo=repo)))["base"]  # fmt: skip
    first = _g("rev-list", "--first-parent", f"{oldest}..{tip}", repo=repo).split()  # newest first
    on_first = set(first)
    fmt = ["-p", "-U0", "--no-renames", "--format=commit %H", f"{oldest}..{tip}"]
    log = git.git_bytes("log", "--first-parent", "--diff-merges=first-parent", *fmt, cwd=repo)[1]
    branch_ids = _patch_ids(repo, log)
    side = git.git_bytes("log", "--no-merges", *fmt, cwd=repo)[1]
    for pid, sha in _patch_ids(repo, side).items():
        branch_ids.setdefault(pid, sha)
    subjects = _g("log", "--format=%s", f"{oldest}..{tip}", repo=repo)
    named = {int(n) for n in re.findall(r"#(\d+)", subjects)}

    def brought_by(sha: str) -> str | None:
        """The first-parent merge that brought a side commit (None: it is on first parent)."""
        if sha in on_first:
            return None
        below = set(_g("rev-list", "--ancestry-path", f"{sha}..{tip}", repo=repo).split())
        return next(c for c in reversed(first) if c in below)

    for case in open_cases:
        whole = git.git_bytes("diff", "-U0", "--no-renames", case["base"], case["head"], cwd=repo)
        squash = _patch_ids(repo, b"commit " + case["head"].encode() + b"\n" + whole[1])
        own = git.git_bytes("log", "-p", "-U0", "--no-renames", "--format=commit %H",
                            f"{case['base']}..{case['head']}", cwd=repo)[1]  # fmt: skip
        commits = _patch_ids(repo, own)
        found = [branch_ids[p] for p in squash if p in branch_ids]
        if not found and commits and all(p in branch_ids for p in commits):
            found = [branch_ids[p] for p in commits]
            style = "rebase-merge" if len(commits) > 1 else "squash"
        else:
            style = "squash"
        if found:
            merges = {brought_by(sha) for sha in found}
            if merges != {None}:
                style = "cherry-pick (via merge)"
            case.update(style=style, accept=found, merges=sorted(merges, key=str))
        elif case["number"] not in named:
            case.update(style="not merged")


def _judged(repo: Path, branch: str, case: dict[str, Any], landing: Any) -> dict[str, Any]:
    found = landing.commit.sha if landing.commit else None
    merge = landing.merged_by.sha if landing.merged_by else None
    landed = landing.verdict in LANDED_VERDICTS
    elsewhere = False
    if case["style"] == "not merged":
        # git's verdict on the commit named: the PR's whole change is in it, not before it
        # (the same lines landed through another PR, a maintainer's own commit)
        elsewhere = landed and found is not None and carried_at(repo, found, case["diff"])
        ok = not landed or elsewhere
    else:
        ok = landed and found in case["accept"] and merge in case["merges"]
        if ok and landing.verdict == Verdict.UNDONE:  # git agrees it is no longer whole
            ok = not _applies(repo, branch, case["diff"], reverse=True)
    return {
        "pr": case["number"],
        "style": case["style"],
        "base": case["base"],
        "head": case["head"],
        "expected_merges": case["merges"],
        "verdict": landing.verdict,
        "commit": found,
        "merged_by": merge,
        "ok": ok,
        "landed_elsewhere": elsewhere,
        "false_landing": case["style"] == "not merged" and landed and not elsewhere,
        "identity": None,
        "evidence": landing.evidence,
        "partial": landing.partial,
    }


def carried_at(repo: Path, commit: str, diff: bytes) -> bool:
    """Whether git reverse-applies `diff` at `commit` and not at its first parent."""
    return _applies(repo, commit, diff, reverse=True) and not _applies(
        repo, f"{commit}^1", diff, reverse=True
    )


def run(repo: Path, branch: str, upstream: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """One cold `check` of every case (the manifest loaded anew); the figures and each case."""
    with tempfile.TemporaryDirectory(prefix="landing-real-") as tmp:
        started = time.monotonic()
        loaded = manifest.load(write_cases(Path(tmp), cases, upstream, branch))
        entries, kept = select_cases(loaded, cases)
        report = run_checks(list(entries), upstream=str(repo), work_dir=Path(tmp) / "wd")
        wall = time.monotonic() - started
    results = []
    for case, result in zip(kept, report.entries, strict=True):
        assert result.landing is not None
        judged = _judged(repo, branch, case, result.landing)
        judged["identity"] = [i.result for i in result.identity]
        results.append(judged)
    styles: dict[str, dict[str, Any]] = {}
    for style in sorted({r["style"] for r in results}):
        mine = [r for r in results if r["style"] == style]
        styles[style] = {
            "cases": len(mine),
            "right": sum(r["ok"] for r in mine),
            "verdicts": dict(collections.Counter(r["verdict"] for r in mine)),
        }
    right = sum(r["ok"] for r in results)
    return {
        "mirror": str(repo),
        "branch": branch,
        "tip": _g("rev-parse", branch, repo=repo).strip(),
        "cases": len(results),
        "right": right,
        "right_percent": round(100 * right / len(results), 1) if results else None,
        "false_landings": sum(r["false_landing"] for r in results),
        "controls_landed_elsewhere": sum(r["landed_elsewhere"] for r in results),
        "identity_identical": sum(r["identity"] == ["identical"] for r in results),
        "styles": styles,
        "cost": {**(report.cost or {}), "wall_seconds": round(wall, 2)},
        "results": results,
    }


_KEPT = ("pr", "style", "verdict", "commit", "merged_by", "ok", "false_landing",
         "landed_elsewhere", "identity")  # fmt: skip


def combine(paths: list[Path]) -> dict[str, Any]:
    """One JSON of several runs (each a project's `--out`): per project its figures and each
    case in brief (evidence and notes kept for the cases not right), and the totals."""
    projects: dict[str, Any] = {}
    for path in paths:
        run = json.loads(path.read_text())
        name = Path(run["mirror"]).parent.name.replace("+", "/", 1)
        name += f" (PRs from #{min(r['pr'] for r in run['results'])})"
        cases = [
            {k: r.get(k) for k in _KEPT}
            | ({} if r["ok"] else {"evidence": r["evidence"], "partial": r["partial"]})
            for r in run["results"]
        ]
        projects[name] = {k: v for k, v in run.items() if k not in ("results", "mirror")}
        projects[name]["results"] = cases
    results = [r for p in projects.values() for r in p["results"]]
    styles: dict[str, dict[str, int]] = {}
    for r in results:
        row = styles.setdefault(r["style"], {"cases": 0, "right": 0})
        row["cases"] += 1
        row["right"] += int(r["ok"])
    right = sum(r["ok"] for r in results)
    total = {
        "cases": len(results),
        "right": right,
        "right_percent": round(100 * right / len(results), 1) if results else None,
        "false_landings": sum(r["false_landing"] for r in results),
        "controls_landed_elsewhere": sum(bool(r.get("landed_elsewhere")) for r in results),
        "identity_identical": sum(r["identity"] == ["identical"] for r in results),
        "styles": styles,
    }
    return {"total": total, "projects": projects}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", type=Path, nargs="?")
    parser.add_argument("--combine", type=Path, nargs="+", help="runs' JSON: one JSON of all")
    parser.add_argument("--branch", default=None, help="default: the mirror's HEAD")
    parser.add_argument("--upstream", default=None, help="owner/name (default: from the path)")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--skip", type=int, default=0, help="skip the newest N PR numbers")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.combine:
        text = json.dumps(combine(args.combine), indent=1) + "\n"
        print(text[:2000])
        if args.out:
            args.out.write_text(text)
        return 0
    if args.mirror is None:
        parser.error("a mirror, or --combine")
    repo = args.mirror.resolve()
    branch = args.branch or _g("symbolic-ref", "--short", "HEAD", repo=repo).strip()
    owner = repo.name if repo.name != "repo" else repo.parent.name
    upstream = args.upstream or owner.replace("+", "/", 1)
    summary = run(repo, branch, upstream, pick(repo, branch, args.count, args.skip))
    for r in summary["results"]:
        mark = "ok " if r["ok"] else ("FALSE" if r["false_landing"] else "BAD")
        print(f"{mark} #{r['pr']} [{r['style']}]: {r['verdict']} {(r['commit'] or '-')[:12]}")
    print(json.dumps({k: v for k, v in summary.items() if k != "results"}, indent=2))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
