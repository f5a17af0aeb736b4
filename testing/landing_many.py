"""Many carried fixes on one real-git upstream, landed the three ways that matter: for `check`
on a manifest of hundreds of entries (a test counts its history reads; scripts/check-bench
times it from 10 to 200 entries).

    world = ManyWorld.create(tmp_path, 200)   # bare upstream (dev, main) + work clone; fix i
                                              # changes megatron/core/mNNN.py; world.manifest
    world.expected["fix-000"]                 # ("landed", "Fix m000 (#1000)", None)

Fix i lands by a squash on dev (i % 3 == 0), on main then brought to dev by one "nightly sync"
merge (i % 3 == 1), or not at all (i % 3 == 2). The entries are pinned to four bases a week
apart on dev, the first entry to the newest (so reading the history for the first entry's base
alone is not enough for the others). Identity and dates are pinned: stable hashes. Nothing
here touches the network.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from testing.landing_history import (
    BASE_TEXT,
    CONTRIBUTOR,
    ENV,
    FIX,
    SIGNOFF,
    SYNC,
    _dated,
    _g,
    edit,
)

BASES = 4  # pinned bases on dev, a week apart


def module(i: int) -> str:
    return f"megatron/core/m{i:03d}.py"


def text(i: int) -> str:
    """Module i's text at the base: its own content (its own blobs), the fix's lines alike."""
    return f"{BASE_TEXT}\n\nMODULE = {i}\n"


@dataclasses.dataclass
class ManyWorld:
    root: Path
    bare: Path
    work: Path
    base: str
    manifest: Path
    # entry name -> (verdict, subject of the commit named, subject of the merge named)
    expected: dict[str, tuple[str, str | None, str | None]]

    @property
    def url(self) -> str:
        return self.bare.resolve().as_uri()

    @classmethod
    def create(cls, root: Path, count: int) -> ManyWorld:
        work, bare = root / "work", root / "upstream.git"
        work.mkdir(parents=True)
        _g("init", "-q", "-b", "dev", cwd=work)
        for i in range(count):
            (work / module(i)).parent.mkdir(parents=True, exist_ok=True)
            (work / module(i)).write_text(text(i))
        bases = []
        for week in range(BASES):
            (work / "README.md").write_text(f"up {week}\n")
            _g("add", "-A", cwd=work)
            message = f"base: pinned upstream commit (#{week + 1})"
            _g(
                "commit",
                "-q",
                "-m",
                message,
                cwd=work,
                env=_dated(f"2026-02-{1 + 7 * week:02d}T00:00:00+0000"),
            )
            bases.append(_g("rev-parse", "HEAD", cwd=work))
        base = bases[0]
        _g("init", "-q", "--bare", str(bare), cwd=root)
        _g("remote", "add", "origin", str(bare), cwd=work)
        # the carried fixes: one commit each on a branch of the base, files disjoint, so each
        # patch applies alone at the base; written by one format-patch
        _g("checkout", "-q", "-b", "carried", base, cwd=work)
        for i in range(count):
            (work / module(i)).write_text(edit(text(i), FIX))
            message = f"Clear detached grads in m{i:03d}\n\nSigned-off-by: {SIGNOFF}"
            _g("commit", "-q", "-am", message, cwd=work, env=CONTRIBUTOR)
        patches = root / "patches"
        _g("format-patch", "-q", "-o", str(patches), f"{base}..carried", cwd=work)
        names = sorted(p.name for p in patches.glob("*.patch"))
        expected: dict[str, tuple[str, str | None, str | None]] = {}
        for branch, kind in (("dev", 0), ("main", 1)):
            _g("checkout", "-q", "-B", branch, bases[-1], cwd=work)
            for i in range(kind, count, 3):
                (work / module(i)).write_text(edit(text(i), FIX))
                subject = f"Fix m{i:03d} (#{1000 + i})"
                _g("commit", "-q", "-am", subject, cwd=work)
                expected[f"fix-{i:03d}"] = ("landed", subject, SYNC if kind else None)
        _g("checkout", "-q", "dev", cwd=work)
        _g("merge", "-q", "--no-ff", "-m", SYNC, "main", cwd=work, env=ENV)
        _g("push", "-q", "origin", "dev", "main", cwd=work)
        for i in range(2, count, 3):
            expected[f"fix-{i:03d}"] = ("not landed", None, None)
        lines = [
            '[defaults]\nupstream = "acme/widgets"\nbase_branch = "dev"\nfork = "casey/widgets"\n'
        ]
        for i, name in enumerate(names):
            lines.append(
                f'[[entry]]\nname = "fix-{i:03d}"\ntitle = "Clear detached grads {i}"\n'
                f'head_branch = "fix/m{i:03d}"\nfix = "{name}"\n'
                f'base_commit = "{bases[BASES - 1 - i % BASES]}"\n'
            )
        manifest = patches / "series.toml"
        manifest.write_text("\n".join(lines))
        return cls(root, bare, work, base, manifest, expected)


def judged(report: dict[str, Any]) -> dict[str, tuple[str, str | None, str | None]]:
    """What `check --json` said of each entry, in the shape of `ManyWorld.expected`."""
    return {
        e["name"]: (
            e["landing"]["verdict"],
            (e["landing"]["commit"] or {}).get("subject"),
            (e["landing"]["merged_by"] or {}).get("subject"),
        )
        for e in report["entries"]
    }
