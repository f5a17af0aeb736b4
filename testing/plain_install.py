"""A plain (non-editable) install of this checkout, as `pip install .` makes it.

The wheel is built from the checkout's tracked files and installed (`pip install --no-deps
--target`) once per run (testing/once.py); each venv gets a copy of those files. Its
dependencies come from the running environment's site-packages through a path entry (so the
checkout's own path file is not loaded), less the distributions a test hides (to be an
install that lacks megatron-core, say).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from patchcarry import git
from testing.once import once_at, once_dir

ROOT = Path(__file__).resolve().parent.parent


def _build(wheels: Path) -> None:
    source = wheels.parent / "wheel-source"
    _, files, _ = git.git("ls-files", "-z", cwd=ROOT)
    for name in filter(None, files.split("\0")):
        if (ROOT / name).is_file():  # a file deleted in the work tree is not shipped
            dest = source / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes((ROOT / name).read_bytes())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
    )


def checkout_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """patchcarry's wheel, built from the tracked files once per run."""
    (wheel,) = once_dir(tmp_path_factory, "wheel", _build).glob("*.whl")
    return wheel


def plain_venv(wheel: Path, venv: Path, hide: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """A venv holding `wheel`, its dependencies from this environment less the top-level
    names in `hide`. Returns (its python, its site-packages)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    deps = Path(sysconfig.get_paths()["purelib"])
    if hide:  # a folder of links to everything else there
        shown = venv / "deps"
        shown.mkdir()
        for entry in deps.iterdir():
            if not entry.name.lower().startswith(hide) and not entry.name.endswith(".pth"):
                (shown / entry.name).symlink_to(entry)
        deps = shown
    (site / "deps.pth").write_text(f"{deps}\n")
    shutil.copytree(installed(wheel), site, symlinks=True, dirs_exist_ok=True)
    return py, site


def installed(wheel: Path) -> Path:
    """What `pip install --no-deps --target DIR wheel` puts in DIR, installed once per wheel
    (beside it) and copied into each venv: pip's own run is seconds, a copy is not."""

    def install(target: Path) -> None:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
            + [str(wheel)],
            check=True,
            capture_output=True,
        )

    return once_at(wheel.parent.with_name(f"{wheel.parent.name}-installed"), install)
