"""Build an expensive fixture once per test run, also under pytest-xdist's workers.

Each worker is its own process, so a session fixture alone is built once per worker. These
helpers put the result in the run's shared temp root instead (xdist gives every worker
`<run root>/popen-gwN` as its base temp; without xdist the base temp is the root): the first
worker to ask builds it while holding an `fcntl` lock there, the others wait on that lock and
then read what it left. A build that fails leaves no result, so the next one to ask retries
it and fails the same way, each with its own traceback.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temp directory every worker of this run shares."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def once_dir(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """`<run root>/once/<name>`, filled by `build(dir)` by the first caller of this run."""
    root = run_root(tmp_path_factory) / "once"
    root.mkdir(exist_ok=True)
    return once_at(root / name, build)


def once_at(dest: Path, build: Callable[[Path], object]) -> Path:
    """`dest` (its parent exists), filled by `build(dest)` by the first caller of any process:
    what is derived from something once_dir built (the wheel's installed files) sits beside it."""
    done = dest.with_name(f"{dest.name}.done")
    with _locked(dest.with_name(f"{dest.name}.lock")):
        if not done.is_file():
            if dest.exists():  # a failed build's leftovers
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            build(dest)
            done.touch()
    return dest


def once_json(
    tmp_path_factory: pytest.TempPathFactory, name: str, compute: Callable[[], Any]
) -> Any:
    """`compute()`'s JSON-able value, computed by the first caller of this run."""
    root = run_root(tmp_path_factory) / "once"
    root.mkdir(exist_ok=True)
    file = root / f"{name}.json"
    with _locked(root / f"{name}.lock"):
        if not file.is_file():
            value = compute()
            tmp = file.with_suffix(".tmp")
            tmp.write_text(json.dumps(value))
            tmp.replace(file)
    return json.loads(file.read_text())


def copy_tree(src: Path, dest: Path) -> Path:
    """`dest` (absent; its parents are made), a copy of `src` with its links and modes, made by
    `cp -a`: one process in C, where `shutil.copytree` spent a test's worth of CPU in Python on
    a world's files."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--", str(src), str(dest)], check=True)
    return dest
