"""A child importing one Megatron tree (PYTHONPATH, a free port): trees never share a module."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from patchcarry import proc
from patchcarry.errors import FatalError

# The directory that holds the `patchcarry` package (a checkout or site-packages): the child
# imports this same patchcarry, however it was installed.
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def probe_env(tree: Path, cpu_only: bool = False) -> dict[str, str]:
    """The child's env: `tree` then this repo on PYTHONPATH, one thread; `cpu_only` hides GPUs."""
    env = dict(os.environ)
    if cpu_only:
        env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(PACKAGE_PARENT)])
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONWARNINGS"] = "ignore"
    return env


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (a child's process-group rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_result(tree: Path, code: int, out: str, err: str, marker: str,
                 error: type[FatalError]) -> dict[str, Any]:  # fmt: skip
    """The JSON a child printed after `marker`, checked to be `tree`'s megatron; else `error`."""
    lines = [line for line in out.splitlines() if line.startswith(marker)]
    if code != 0 or not lines:
        raise error(
            f"child for {tree} exited {code} without a result; last stderr:\n{err.strip()[-4000:]}"
        )
    result: dict[str, Any] = json.loads(lines[-1][len(marker) :])
    imported = Path(result["megatron_file"]).resolve()
    if tree not in imported.parents:
        raise error(f"child for {tree} imported megatron from {imported}, not the tree")
    return result


def run_module(
    tree: Path, module: str, env: dict[str, str], request: dict[str, Any], marker: str,
    error: type[FatalError], *, timeout: float | None = None,
) -> dict[str, Any]:  # fmt: skip
    """`python -m module` in `tree` with `request` as JSON on stdin; its result (`child_result`)."""
    stdin = json.dumps(request)
    code, out, err = proc.cmd_output(*proc.PYTHON, "-m", module, cwd=tree, env=env, check=False,
                                     stdin=stdin, timeout=timeout)  # fmt: skip
    return child_result(tree, code, out, err, marker, error)
