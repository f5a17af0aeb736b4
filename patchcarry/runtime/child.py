"""What every child process that imports one Megatron tree shares: its environment (the tree
first on PYTHONPATH, then this package) and a free loopback port for a process group.

Proof and measure each run a tree in its own process, so an unpatched and a patched tree
never share a module; this is the one place that says how such a child is started.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

# The directory that holds the `patchcarry` package (a checkout or site-packages): the child
# imports this same patchcarry, however it was installed.
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def probe_env(tree: Path, cpu_only: bool = False) -> dict[str, str]:
    """The child's environment: `tree` then this repo on PYTHONPATH, one CPU thread.

    `cpu_only` hides any GPU (CUDA_VISIBLE_DEVICES=""), so the CPU stand-ins are used and
    results match a CPU runner; `run_probe` sets it by default, a GPU measurement must not.
    """
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
