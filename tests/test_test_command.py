"""scripts/test itself, on a copy of the script with stand-ins for what it starts (bootstrap,
.venv's python and pre-commit record their environment): where its run's temporary files go."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORD = """#!/bin/sh
echo "$TMPDIR" >>"$RECORDED"
"""


def _run(tmp_path: Path, **env: str) -> list[str]:
    """TMPDIR as pytest and pre-commit each saw it (empty: unset)."""
    root = tmp_path / "checkout"
    (root / "scripts" / "lib").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test", root / "scripts" / "test")
    (root / ".venv" / "bin").mkdir(parents=True)
    for stand_in in ("scripts/bootstrap", ".venv/bin/python", ".venv/bin/pre-commit"):
        (root / stand_in).write_text(RECORD if stand_in != "scripts/bootstrap" else "#!/bin/sh\n")
        (root / stand_in).chmod(0o755)
    recorded = tmp_path / "recorded"
    base = {k: v for k, v in os.environ.items() if k != "TMPDIR"}
    done = subprocess.run([root / "scripts" / "test"], env={**base, "RECORDED": str(recorded),
                          **env}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    # .venv/bin/python runs twice (the checkout's bytecode, then pytest): the last two lines
    return recorded.read_text().splitlines()[-2:]


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no RAM folder (/dev/shm) here")
def test_the_runs_temporary_files_go_to_a_ram_folder_removed_at_the_end(tmp_path: Path) -> None:
    seen = _run(tmp_path)
    assert len(set(seen)) == 1 and seen[0].startswith("/dev/shm/patchcarry-test."), seen
    assert not Path(seen[0]).exists()


def test_a_tmpdir_of_the_callers_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    assert _run(tmp_path, TMPDIR=str(mine)) == [str(mine)] * 2
    assert mine.is_dir()
