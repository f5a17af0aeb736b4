"""`measure --harness pretrain`: upstream's own training loop, one process per variant tree."""

from __future__ import annotations

import shutil
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from patchcarry import proc
from patchcarry.errors import FatalError, MissingInstallError
from patchcarry.measure import pretrain_args, variants
from patchcarry.measure.model import Shape
from patchcarry.measure.pretrain_child import RESULT_MARKER
from patchcarry.measure.variants import VariantResult
from patchcarry.runtime.child import free_loopback_port, probe_env, run_module

HELPERS = Path("megatron", "core", "datasets")


class PretrainError(FatalError):
    """A training-loop child failed, printed no result, or imported the wrong tree."""


class NoCuda(MissingInstallError):
    """The training loop needs a CUDA GPU (exit 5, like any missing requirement)."""


def gpus() -> list[str]:
    """The GPUs `nvidia-smi -L` lists (none without the tool)."""
    if shutil.which("nvidia-smi") is None:
        return []
    code, out, _ = proc.cmd_output("nvidia-smi", "-L", check=False)
    return [line for line in out.splitlines() if line.strip()] if code == 0 else []


def require_cuda() -> None:
    if not gpus():
        raise NoCuda("--harness pretrain runs upstream's training loop, which needs a CUDA GPU "
                     "(nvidia-smi lists none); on CPU use the default --harness model")  # fmt: skip


def prebuilt_helpers(tree: Path, installed: Path | None) -> Path | None:
    """Copy megatron-core's built dataset helpers into `tree` so upstream's `make` needs no cc."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = tree / HELPERS / f"helpers_cpp{suffix}"
    if target.exists() or installed is None:
        return None
    built = installed / HELPERS / f"helpers_cpp{suffix}"
    if not built.is_file() or not target.parent.is_dir():
        return None
    shutil.copyfile(built, target)  # a fresh mtime: newer than helpers.cpp
    return target


def run_child(tree: Path, argv: list[str], *, timeout_s: float | None,
              parse_only: bool = False) -> dict[str, Any]:  # fmt: skip
    """One training run of `tree`'s `pretrain_gpt.py`; `parse_only`: its argument check alone."""
    env = probe_env(tree, cpu_only=parse_only)
    env.update(pretrain_args.env(free_loopback_port()))
    request = {"argv": argv, "script": pretrain_args.SCRIPT, "parse_only": parse_only}
    module = "patchcarry.measure.pretrain_child"
    return run_module(tree, module, env, request, RESULT_MARKER, PretrainError, timeout=timeout_s)


def run(
    src: Path, plan: Sequence[variants.Variant], shape: Shape, workdir: Path, *, iterations: int,
    repeats: int, installed: Path | None, timeout_s: float | None = None,
    offline_note: str | None = None, progress: Callable[[str], None] = lambda _: None,
) -> tuple[list[str], list[VariantResult]]:  # fmt: skip
    """`pretrain_gpt.py`'s arguments and, per variant, its repeats' results (None: skipped)."""
    argv = pretrain_args.argv(shape, iterations=iterations)
    if not (src / pretrain_args.SCRIPT).is_file():
        raise MissingInstallError(
            f"{src} has no {pretrain_args.SCRIPT}: the training loop needs a full upstream "
            "checkout's top level (scripts/tree gives one)"
        )

    def train(variant: variants.Variant, tree: Path) -> dict[str, Any]:
        prebuilt_helpers(tree, installed)
        runs = []
        for index in range(repeats):
            progress(f"{variant.name}: training run {index + 1} of {repeats}")
            runs.append(run_child(tree, argv, timeout_s=timeout_s))
        return {"runs": runs}

    results = variants.run_each(plan, src, workdir, train, verb="training",
                                offline_note=offline_note, progress=progress)  # fmt: skip
    return argv, results
