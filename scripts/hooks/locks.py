#!/usr/bin/env python3
"""The hash locks in requirements/: write them (scripts/lock) or check them (--check).

Usage:
  locks.py --check                    pre-commit hook `locks-current`: offline, no uv; exit 1
                                      naming each lock that is stale or was edited by hand
  locks.py --uv UV [--torch-cpu-from DIR|URL]
                                      regenerate every lock (scripts/lock runs this with a
                                      hash-locked uv)

Each lock is `uv pip compile --generate-hashes` output for CPython 3.11 (or the Python its
recipe names) on Linux x86-64 (manylinux_2_28: CI, the GPU runner, this project's machines),
wheels only (`--no-build`: nothing is built, so no package's build code runs at install).
A lock lists the hash of every wheel of each pinned release, so one lock serves 3.11, 3.12
and 3.13 wherever the pins are the same; where they cannot be, the lock is per Python.
scripts/bootstrap installs them with `pip install --require-hashes --no-deps --only-binary
:all:`: each lock is a whole closure, so pip resolves nothing and fetches only the files whose
sha256 is listed.

A lock starts with two lines of ours: `inputs` is the sha256 of pyproject.toml's dependency
lists and this script's recipe for the lock (what `--check` compares, offline: a changed pin
with an old lock fails CI); `body` is the sha256 of the text below them (a hand edit fails).

torch: the test sets need torch 2.13.0 in two builds with different files and hashes, so
there are two locks: test-cpu (the `+cpu` build: PyTorch's CPU index, or --torch-cpu-from a
directory holding that wheel) and test-cuda (PyPI's build with its nvidia-* and triton
dependencies, for the GPU runner). The CUDA build pins triton itself (3.7.1 for torch
2.13.0), so the `upstream` group's triton is locked for CPU only (upstream-cpu).

Python 3.12 and 3.13: every pin above has wheels for them (megatron-core 0.16.1 ships cp311,
cp312 and cp313; triton 3.9.0 cp311 and abi3) except torch's +cpu build, which is not on
PyPI (PyPI's torch is the CUDA build, about 500 MB plus its nvidia-* wheels) and which this
project's machines hold for cp311 only. So on 3.12 and 3.13 a CPU test set is test-notorch
(the test tools without torch, resolved for 3.12: the proof tests skip, saying why), and a
CUDA one is test-cuda, whose torch 2.13.0 lists cp312 and cp313 wheels too.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = "requirements"
TORCH_CPU_FROM = "https://download.pytorch.org/whl/cpu/torch/"
# Every lock is resolved for this platform, and for Python 3.11 unless its recipe says.
COMPILE = (
    "--generate-hashes",
    "--no-build",
    "--python-platform",
    "x86_64-manylinux_2_28",
    "--custom-compile-command",
    "scripts/lock",
)
_HEADER = re.compile(
    r"\A# patchcarry lock (?P<name>[\w-]+): .*\n"
    r"# inputs sha256:(?P<inputs>[0-9a-f]{64}) body sha256:(?P<body>[0-9a-f]{64})\n"
)


@dataclasses.dataclass(frozen=True)
class Lock:
    """One lock file: what goes in, from pyproject.toml, and how it is resolved."""

    name: str
    purpose: str
    project: bool = False  # [project].dependencies
    extras: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()  # earlier locks whose pins this one keeps
    no_deps: bool = False
    torch: str = ""  # "cpu": torch's +cpu build; "cuda": PyPI's build
    python: str = "3.11"  # the Python it is resolved for

    @property
    def path(self) -> str:
        return f"{REQUIREMENTS}/{self.name}.txt"


LOCKS = (
    Lock("main", "resubmit, scan, check, tree (no torch, no triton)", project=True),
    Lock(
        "megatron-core",
        "megatron-core's source tree for the offline check, installed WITHOUT its dependencies",
        groups=("megatron-sources",),
        no_deps=True,
    ),
    Lock(
        "test-cpu",
        "scripts/test, measure, the proof tests on CPU (torch's +cpu build)",
        project=True,
        extras=("proof",),
        groups=("dev",),
        constraints=("main", "megatron-core"),
        torch="cpu",
    ),
    Lock(
        "test-cuda",
        "the same on the GPU runner (PyPI's CUDA torch, its nvidia-* wheels and triton)",
        project=True,
        extras=("proof",),
        groups=("dev",),
        constraints=("main", "megatron-core"),
        torch="cuda",
    ),
    Lock(
        "test-notorch",
        "scripts/test on Python 3.12 and 3.13 on CPU: the test tools without torch "
        "(no +cpu build for them here; the proof tests skip)",
        project=True,
        groups=("dev",),
        constraints=("main", "megatron-core"),
        python="3.12",
    ),
    Lock(
        "upstream-cpu",
        "triton, which an upstream Megatron-LM tree imports, on CPU only",
        groups=("upstream",),
        constraints=("test-cpu",),
    ),
    Lock("lock-tools", "uv, which writes these locks (scripts/lock)", groups=("lock",)),
)


def dependency_lists(pyproject: Path) -> dict[str, Any]:
    """The parts of pyproject.toml that decide what the locks hold."""
    data = tomllib.loads(pyproject.read_text())
    project = data.get("project", {})
    return {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
        "dependency-groups": data.get("dependency-groups", {}),
    }


def inputs_digest(lock: Lock, pyproject: Path) -> str:
    recipe = {"lock": dataclasses.asdict(lock), "compile": COMPILE}
    blob = json.dumps([dependency_lists(pyproject), recipe], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _body_digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def header(lock: Lock, inputs: str, body: str) -> str:
    return (
        f"# patchcarry lock {lock.name}: {lock.purpose}\n"
        f"# inputs sha256:{inputs} body sha256:{_body_digest(body)}\n"
    )


def problems(root: Path = ROOT) -> list[str]:
    """Why each lock under `root` is not what scripts/lock would write now (offline)."""
    found = []
    pyproject = root / "pyproject.toml"
    for lock in LOCKS:
        path = root / lock.path
        if not path.is_file():
            found.append(f"{lock.path} is missing")
            continue
        text = path.read_text()
        match = _HEADER.match(text)
        if not match or match["name"] != lock.name:
            found.append(f"{lock.path} has no patchcarry lock header for {lock.name}")
        elif match["inputs"] != inputs_digest(lock, pyproject):
            found.append(
                f"{lock.path} is stale: pyproject.toml's dependencies or its recipe changed"
            )
        elif match["body"] != _body_digest(text[match.end() :]):
            found.append(f"{lock.path} was edited by hand (its body no longer matches its header)")
    return found


def _compile_args(lock: Lock, staging: Path, override: Path, torch_cpu_from: str) -> list[str]:
    args = ["pip", "compile", "--quiet", "--no-config", *COMPILE, "--python-version", lock.python]
    if lock.project:
        args.append("pyproject.toml")
    for extra in lock.extras:
        args += ["--extra", extra]
    for group in lock.groups:
        args += ["--group", f"pyproject.toml:{group}"]
    for constraint in lock.constraints:
        args += ["--constraints", str(staging / f"{constraint}.txt")]  # as just written
    if lock.no_deps:
        args.append("--no-deps")
    if lock.torch == "cpu":
        args += ["--overrides", str(override), "--find-links", torch_cpu_from]
    return args


def _torch_cpu_override(pyproject: Path) -> str:
    """`torch==X+cpu` from the `proof` extra's `torch==X`."""
    for requirement in dependency_lists(pyproject)["optional-dependencies"].get("proof", []):
        match = re.fullmatch(r"torch==([\w.]+)", requirement.strip())
        if match:
            return f"torch=={match[1]}+cpu\n"
    raise SystemExit("locks.py: the proof extra pins no torch==X")


def regenerate(uv: str, torch_cpu_from: str, root: Path = ROOT) -> None:
    """Write every lock, in order (later locks are constrained by earlier ones)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_") or k == "UV_CACHE_DIR"}
    (root / REQUIREMENTS).mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        override = Path(tmp) / "torch-cpu.txt"
        override.write_text(_torch_cpu_override(root / "pyproject.toml"))
        written = []
        for lock in LOCKS:
            print(f"scripts/lock: {lock.path}", file=sys.stderr)
            out = Path(tmp) / f"{lock.name}.txt"
            args = _compile_args(lock, Path(tmp), override, torch_cpu_from)
            if subprocess.run([uv, *args, "-o", str(out)], cwd=root, env=env).returncode:
                raise SystemExit(f"scripts/lock: uv could not resolve {lock.path}; nothing written")
            body = out.read_text().replace(str(override), "torch's CPU build (scripts/lock)")
            written.append((lock, body.replace(f"{tmp}/", f"{REQUIREMENTS}/")))
        for lock, body in written:  # only once every lock resolved
            inputs = inputs_digest(lock, root / "pyproject.toml")
            (root / lock.path).write_text(header(lock, inputs, body) + body)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/lock", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, offline; write nothing")
    parser.add_argument("--uv", help="the uv to compile with (scripts/lock passes one)")
    parser.add_argument(
        "--torch-cpu-from",
        default=TORCH_CPU_FROM,
        help="where torch's +cpu wheel is listed: a directory or a links page "
        f"(default {TORCH_CPU_FROM})",
    )
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        for problem in found:
            print(f"{problem}: run scripts/lock")
        return 1 if found else 0
    if not args.uv:
        parser.error("--uv UV is required to regenerate (or use scripts/lock)")
    regenerate(args.uv, args.torch_cpu_from)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
