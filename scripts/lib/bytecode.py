"""Bytecode for what the test set's processes import, written once by scripts/bootstrap.

    .venv/bin/python -P scripts/lib/bytecode.py SITE_PACKAGES [CHECKOUT]

Python writes a module's bytecode at its first import, except under PYTHONDONTWRITEBYTECODE
(set on many CI and sandbox machines): there every process that imports torch and megatron-core
compiled them again, seconds each, dozens of processes a run. Compiling all of site-packages
(`compileall`) cost 55 CPU seconds, two thirds of it for modules no test imports (torch's
test helpers and compilers, sympy's solvers, githubkit's schema versions, mypy's sources that
its compiled build never reads). Instead each group below is imported in a process of its own,
with bytecode writing on, one group per core: what those imports reach gets its bytecode,
the rest none. megatron-core is compiled whole after them: the torch children import copies
of it that carry its bytecode (patchcarry/runtime/tree.py), any module of it.

With CHECKOUT, the checkout's own bytecode (scripts/lib/checkout_bytecode.py, pytest's rewritten
test modules included) is a third process beside the groups: scripts/test would otherwise
write it after them, while a core waits here on the torch group alone.

A module left out only costs its compile in each process that imports it, never a failure:
an import that fails here (the no-torch set of Python 3.12 and 3.13) is skipped.
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
from pathlib import Path

# One process each, at the same time; the first is the longest.
GROUPS = (
    # a torch child (proof, measure, audit): torch, what megatron-core's import reaches, the
    # lazy imports of an optimizer's first step and of a process group, the synthetic and
    # hyper-connection models' megatron modules
    (
        "torch",
        "megatron.core",
        "megatron.core.tensor_parallel.random",
        "megatron.core.models.gpt",
        "megatron.core.transformer.transformer_layer",
        "torch._dynamo",
        "torch.optim",
        "torch.distributed",
        "torch.utils.checkpoint",
        "numpy",
    ),
    # first what torch's import reaches that needs no torch (the other group, the longer,
    # then finds its bytecode written); then a test worker and the commands it starts:
    # pytest, the loopback GitHub and its models, the plot, the plain install's pip and
    # setuptools, isort (the patched files' lint)
    (
        "sympy",
        "networkx",
        "mpmath",
        "pytest",
        "xdist",
        "execnet",
        "_pytest.pytester",
        "githubkit",
        "githubkit_schemas.latest.models",
        "ghapi.all",
        "httpx2",
        "yaml",
        "jsonschema",
        "tomlkit",
        "matplotlib.pyplot",
        "pip._internal.cli.main",
        "pip._internal.commands.install",
        "pip._internal.commands.download",
        "pip._internal.operations.install.wheel",
        "setuptools.build_meta",
        "setuptools.config.pyprojecttoml",
        "anyio._backends._asyncio",
        "isort",
    ),
)
_IMPORT = """import importlib, sys, warnings
warnings.simplefilter("ignore")
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:
        pass
"""


def main(
    site: Path, groups: tuple[tuple[str, ...], ...] = GROUPS, checkout: Path | None = None
) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["MPLBACKEND"] = "Agg"  # no display is looked for
    commands = [[sys.executable, "-P", "-c", _IMPORT, *group] for group in groups]
    if checkout is not None:  # in the first group's shadow: the others end well before it
        commands.append([sys.executable, "-P", str(checkout / "scripts/lib/checkout_bytecode.py")])
    children = [subprocess.Popen(command, env=env) for command in commands]
    for child in children:
        child.wait()
    megatron = site / "megatron"
    if megatron.is_dir():
        compileall.compile_dir(megatron, quiet=2, workers=0)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), checkout=Path(sys.argv[2]) if sys.argv[2:] else None))
