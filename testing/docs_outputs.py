"""Keeps every command output shown in README.md and docs/ the real output of a command that
re-runs, never pasted text that goes stale.

A block in a Markdown file

    <!-- output: scripts/demo-adopt -->
    ```text
    ...
    ```
    <!-- /output -->

holds what the named command printed (stdout and stderr), with temp paths, loopback ports and
cache hashes written as `$TMP`, `PORT` and `<hash>`. `python -m testing.docs_outputs
[--mirror PATH]` re-runs every block's command and rewrites it; blocks whose command needs a
mirror of upstream (`$MIRROR`) are re-run only when `--mirror` names one. A test re-runs the
loopback-only ones and fails while a file differs from what its commands print.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

from patchcarry import proc

ROOT = Path(__file__).resolve().parent.parent
FILES = ("README.md", "docs/adopt.md", "docs/check.md", "docs/resubmit-demo.md",
         "docs/live-refresh-demo.md", "docs/pr-bodies.md")  # fmt: skip
PY = sys.executable
# The command a block names -> the argv that produces it ($MIRROR: the upstream mirror).
COMMANDS: dict[str, list[str]] = {
    "scripts/resubmit.sh --dry-run --offline": [
        PY, "-m", "patchcarry", "resubmit", "--dry-run", "--offline"],
    "scripts/demo-adopt": [PY, "-m", "testing.demo_adopt"],
    "python -m testing.demo_adopt_widgets": [PY, "-m", "testing.demo_adopt_widgets"],
    "scripts/demo-adopt --upstream-git $MIRROR": [
        PY, "-m", "testing.demo_adopt", "--upstream-git", "$MIRROR"],
    "scripts/demo-dry-run --upstream-git $MIRROR": [
        PY, "-m", "testing.demo_6117", "--upstream-git", "$MIRROR"],
    "scripts/check --upstream $MIRROR": [PY, "-m", "patchcarry", "check", "--upstream", "$MIRROR"],
    "python -m testing.demo_live_refresh --mirror $MIRROR": [
        PY, "-m", "testing.demo_live_refresh", "--mirror", "$MIRROR"],
    "python -m testing.demo_bodies --mirror $MIRROR": [
        PY, "-m", "testing.demo_bodies", "--mirror", "$MIRROR"],
}  # fmt: skip
# A longer fence (````text) holds output that has ``` lines of its own.
BLOCK_RE = re.compile(
    r"(<!-- output: (.+?) -->\n(?P<fence>`{3,})text\n)(.*?)((?P=fence)\n<!-- /output -->)", re.S
)
# a folder a command made in the temp dir: /tmp, or TMPDIR's (scripts/test's RAM folder)
_TEMP_ROOTS = sorted({"/tmp", tempfile.gettempdir()}, key=len, reverse=True)
_NOISE = (
    (re.compile(f"(?:{'|'.join(map(re.escape, _TEMP_ROOTS))})/[A-Za-z0-9_.-]+"), "$TMP"),
    (re.compile(r"(127\.0\.0\.\d+|localhost):\d+"), r"\1:PORT"),
    (re.compile(r"(patchcarry/(?:upstream|trees)/)[0-9a-f]{16}"), r"\1<hash>"),
)


def normalise(text: str, mirror: Path | None = None) -> str:
    """`text` without what differs between runs: temp paths, ports, cache hashes."""
    if mirror is not None:
        text = text.replace(str(mirror), "$MIRROR")
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def needs_mirror(command: str) -> bool:
    return "$MIRROR" in command


def run(command: str, mirror: Path | None = None) -> str:
    """What `command` (a key of COMMANDS) prints, run from the repository root, normalised."""
    argv = [str(mirror) if a == "$MIRROR" else a for a in COMMANDS[command]]
    with tempfile.TemporaryDirectory(prefix="docs-outputs-") as cache:
        # no COLUMNS: the lines a pipe gets, whatever terminal the renderer runs in
        env = {
            k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_HOST", "COLUMNS")
        }
        env.update(XDG_CACHE_HOME=cache, PYTHONPATH=str(ROOT))
        _, out, err = proc.cmd_output(*argv, cwd=ROOT, env=env, check=False, timeout=900)
    return normalise(out + err, mirror)


def blocks(text: str) -> list[str]:
    """The commands the blocks of `text` name."""
    return [m.group(2) for m in BLOCK_RE.finditer(text)]


def render(text: str, mirror: Path | None = None) -> str:
    """`text` with each block whose command can run here re-rendered."""

    def block(match: re.Match[str]) -> str:
        command = match.group(2)
        if needs_mirror(command) and mirror is None:
            return match.group(0)
        return f"{match.group(1)}{run(command, mirror)}{match.group(5)}"

    return BLOCK_RE.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=os.environ.pop("PATCHCARRY_PROG", None), description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--mirror", type=Path, help="a local mirror of upstream, for $MIRROR")
    args = parser.parse_args(argv)
    mirror = args.mirror.resolve() if args.mirror else None
    skipped = 0
    for name in FILES:
        path = ROOT / name
        if not path.is_file():
            continue
        text = path.read_text()
        new = render(text, mirror)
        skipped += sum(needs_mirror(c) for c in blocks(text)) if mirror is None else 0
        said = "updated" if new != text else "current"
        if new != text:
            path.write_text(new)
        print(f"{said}: {path.relative_to(ROOT)}", file=sys.stderr)
    if skipped:  # say what was not re-run, rather than nothing
        print(f"not re-run: {skipped} block(s) that need --mirror PATH", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
