"""Has a closed PR's change landed on its base since? (adopt refuses it, `scan --all` says so)"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from patchcarry import manifest, manifest_edit
from patchcarry import upstream as upstream_mod
from patchcarry.adopt import commits as commits_mod
from patchcarry.adopt import paths as paths_mod
from patchcarry.check import render
from patchcarry.check.report import CheckReport, Landing
from patchcarry.check.run import run_checks
from patchcarry.errors import FatalError
from patchcarry.patchfile import read as read_patch

Judge = Callable[[str, int, str], "Landing | None"]  # (upstream, N, base branch) -> verdict


def refuse_landed(target: object, report: CheckReport) -> None:
    """FatalError (exit 1, as for a merged PR) when the PR's change has landed upstream."""
    landing = report.entries[0].landing
    if landing is not None and landing.landed:
        raise FatalError(f"{target}: its change has {landing.verdict} upstream since it closed, as "
                         f"{render.commit_words(landing)}: nothing to adopt")  # fmt: skip


def landing_since(upstream: str, number: int, branch: str, url: str, *,
                  work_dir: Path | None = None) -> Landing | None:  # fmt: skip
    """The landing verdict of PR `number`'s commits on `branch`; None if they cannot be patches."""
    history = upstream_mod.fetch_history(url, branch=branch, pull=number, work_dir=work_dir)
    series = commits_mod.own_commits(history)
    with tempfile.TemporaryDirectory(prefix="adopt-landed-") as tmp:
        written = commits_mod.write_patches(history, series, Path(tmp), 1)
        touched = sorted({f for p in written for f in read_patch(p.read_bytes()).files})
        fields = {
            "name": f"pr-{number}", "title": f"#{number}", "upstream": upstream,
            "base_branch": branch, "base_commit": series.base,
            "fork": f"{upstream.split('/')[0]}/x", "head_branch": f"landed/pr-{number}",
            "fix": [p.name for p in written], "paths": paths_mod.derive(touched),
            "supersedes": [number],
        }  # fmt: skip
        path = Path(tmp) / "series.toml"
        path.write_text(manifest_edit.add_entry_text("", fields))
        try:
            (entry,) = manifest.load(path).entries
        except FatalError:  # a commit no manifest may carry: cannot be judged this way
            return None
        return run_checks([entry], upstream=url, work_dir=work_dir).entries[0].landing
