"""megatron-core's source for an install without it, fetched once by pip against the hash lock."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from patchcarry import install, proc
from patchcarry.errors import MissingInstallError, NetworkError

LOCK = "megatron-core.txt"
_PIN = re.compile(r"^megatron-core==(?P<version>[\w.+-]+)", re.MULTILINE)


def lock_file() -> Path:
    """The megatron-core hash lock: the checkout's requirements/, else the embedded copy."""
    if install.in_checkout():
        return install.CHECKOUT / "requirements" / LOCK
    return Path(__file__).resolve().parent.parent / "_requirements" / LOCK


def pinned_version() -> str:
    """The megatron-core version the lock pins (the one the patches are checked against)."""
    match = _PIN.search(lock_file().read_text())
    if not match:  # pragma: no cover - the lock is ours, written by scripts/lock
        raise MissingInstallError(f"{lock_file()} pins no megatron-core==VERSION")
    return match["version"]


def cache_dir(version: str) -> Path:
    """Where the fetched source of `version` lives."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "patchcarry" / "megatron-core" / version


def is_fetched(tree: Path) -> bool:
    """True when `tree` is a source tree this module fetched."""
    return tree.resolve() == cache_dir(pinned_version()).resolve()


def fetched_tree() -> Path:
    """The pinned megatron-core's source tree from the cache, fetched first if missing."""
    version = pinned_version()
    dest = cache_dir(version)
    if (dest / "megatron" / "core" / "__init__.py").is_file():
        return dest
    if not install.has_module("pip"):
        raise MissingInstallError(
            f"the offline check reads megatron-core {version}'s source, which is not installed "
            f"here, and this Python has no pip to fetch it: {install.how_to_get('main')}"
        )
    print(f"patchcarry: fetching megatron-core {version}'s source (its wheel, hash-checked) "
          f"into {dest}, once: the offline check reads it",
          file=sys.stderr)  # fmt: skip
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=dest.parent) as tmp:
        wheel = _download(Path(tmp) / "wheel", version)
        tree = Path(tmp) / "tree"
        _unpack_megatron(wheel, tree)
        try:
            tree.rename(dest)
        except OSError:  # another run put it there first
            if not (dest / "megatron" / "core" / "__init__.py").is_file():
                raise
    return dest


def _download(into: Path, version: str) -> Path:
    code, out, err = proc.cmd_output(
        *proc.PYTHON,
        *("-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes"),
        *("--disable-pip-version-check", "--no-input", "--progress-bar", "off"),
        *("-r", str(lock_file()), "-d", str(into)), check=False,
    )  # fmt: skip
    wheels = sorted(into.glob("*.whl")) if code == 0 else []
    if len(wheels) != 1:
        said = (err.strip() or out.strip()).splitlines()[-1:] or ["no wheel"]
        raise NetworkError(
            f"could not fetch megatron-core {version}'s source with pip: {said[0]}; re-run "
            f"when the package index is reachable, or {install.how_to_get('main')}"
        )
    return wheels[0]


def _unpack_megatron(wheel: Path, tree: Path) -> None:
    """Only `megatron/...` members, each checked to stay inside `tree`."""
    tree.mkdir()
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            name = member.filename
            if not name.startswith("megatron/") or member.is_dir():
                continue
            target = (tree / name).resolve()
            if not target.is_relative_to(tree.resolve()):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as src, target.open("wb") as out:
                shutil.copyfileobj(src, out)
