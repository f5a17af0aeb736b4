"""The one prepared GPU check; every step runs even if one fails."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from patchcarry import manifest, proc, upstream
from patchcarry.errors import ExitCode
from patchcarry.install import CHECKOUT, require
from patchcarry.measure import gpu_summary
from patchcarry.measure.pretrain import gpus
from patchcarry.runtime import tree as megatron_tree

GPU_TESTS = CHECKOUT / "tests" / "test_gpu.py"  # a checkout's; a pip install has none
BIG_GPU_GIB = 120  # room for 9 layers at seq 16384 (about 85 GB reserved on an H200)
BUDGET_S = 600


@dataclasses.dataclass(frozen=True)
class Step:
    key: str  # what --steps names
    name: str
    argv: tuple[str, ...]
    skip_reason: str | None = None

    @property
    def log(self) -> str:
        return f"{self.key}.log"


STEP_KEYS = ("gpu-tests", "unit-tests", "audit", "seed-harness", "seed-loop", "big-loop")


def only(steps: Sequence[Step], keys: Sequence[str] | None) -> list[Step]:
    """`steps` with those not in `keys` skipped (None: all run)."""
    if keys is None:
        return list(steps)
    return [s if s.key in keys else dataclasses.replace(s, skip_reason="not selected (--steps)")
            for s in steps]  # fmt: skip


def _gpu_gib() -> int:
    _, out, _ = proc.cmd_output("nvidia-smi", "--query-gpu=memory.total",
                                "--format=csv,noheader,nounits", "-i", "0")  # fmt: skip
    return int(float(out.split()[0]) / 1024)


def plan(out: Path, *, dry_run: bool, gpu_count: int, gpu_gib: int,
         has_gpu_tests: bool) -> tuple[list[Step], list[Step]]:  # fmt: skip
    """(the steps run side by side, the measurements run alone, in order)."""
    py = proc.PYTHON
    pc = (*py, "-m", "patchcarry")
    gpu_tests = (*py, "-m", "pytest", "-m", "gpu", "-q", "-rs", f"--junitxml={out}/gpu-tests.xml")
    no_tests = None if has_gpu_tests else f"no {GPU_TESTS} here (run from a checkout)"
    tests: tuple[str, ...] = (*py, "-m", "patchcarry.measure.upstream_tests", "--out", str(out))
    tests += ("--no-torchrun",) if dry_run else ("--nproc", str(gpu_count))
    device = "cpu" if dry_run else "cuda"
    audit: tuple[str, ...] = (*pc, "audit", "--variants", "unpatched,both", "--fail-on-new",
                              "--device", device)  # fmt: skip
    # CPU: one configuration checks the step; GPU: all, MoE and selective mlp included
    audit += ("--config", "hc-full-uniform-1") if dry_run else ("--sweep",)
    audit += ("--json", f"{out}/audit-hc-gpt-{device}.json")
    audit += ("--markdown", f"{out}/audit-hc-gpt-{device}.md")
    side_by_side = [
        Step("gpu-tests", "GPU tests (pytest -m gpu)", (*gpu_tests, str(GPU_TESTS)), no_tests),
        Step("unit-tests", "upstream unit tests, unpatched vs patched", tests),
        Step("audit", "retention audit, one process per variant", audit),
    ]
    measure = (*pc, "measure", "--model", "hc-gpt", "--out", str(out))
    if dry_run:
        tiny = ("--device", "cpu", "--dtype", "bf16", "--seq", "32", "--name", "hc-gpt-cpu-dry")
        no_loop = "the training loop needs CUDA (dry run on CPU)"
        dry = (*measure, *tiny, "--iterations", "2", "--require-predicted", "0.05")
        return [*side_by_side,
                Step("seed-harness", "seed configuration, this harness (CPU dry run)", dry)], [
            Step("seed-loop", "seed configuration, upstream's training loop", (), no_loop),
            Step("big-loop", "9 layers, seq 16384, upstream's training loop", (), no_loop),
        ]  # fmt: skip
    # This harness draws no speed figure (the floor is per process), so it runs beside the
    # tests; the training loop's step-time ratio needs the GPU to itself.
    seed = (*measure, "--device", "cuda", "--seed-config", "--iterations", "4", "--snapshot")
    pretrain = (*measure, "--harness", "pretrain", "--repeats", "2", "--require-predicted", "0.05")
    small = f"the GPU has {gpu_gib} GiB (< {BIG_GPU_GIB})" if gpu_gib < BIG_GPU_GIB else None
    big = ("--layers", "9", "--seq", "16384", "--iterations", "4")
    return [
        *side_by_side,
        Step("seed-harness", "seed configuration, this harness",
             (*seed, "--require-predicted", "0.05")),
    ], [
        Step("seed-loop", "seed configuration, upstream's training loop",
             (*pretrain, "--iterations", "5")),
        Step("big-loop", "9 layers, seq 16384, upstream's training loop",
             (*pretrain, *big, "--variants", "unpatched,fix,both"), small),
    ]  # fmt: skip


def _source_tree(upstream_url: str, say: Callable[[str], None]) -> str:
    base = manifest.load().entries[0].base_commit
    tree = megatron_tree.upstream_tree_from_env()
    if tree is None:
        say(f"fetching {base} from {upstream_url}")
        fetched = upstream.fetch(upstream_url, base_commits=[base], branches=[], pulls=[])
        tree = Path(tempfile.mkdtemp(prefix="gpu-check-megatron-"))  # once there is a tree
        upstream.checkout_tree(fetched, base, tree)
        os.environ[megatron_tree.MEGATRON_SRC_ENV] = str(tree)
    have = megatron_tree.tree_commit(tree) or "not a git checkout"
    if have != base:
        say(f"warning: MEGATRON_SRC is at {have}, the manifest pins {base}")
    return f"Upstream tree: {have} (pinned base {base})"


def _run_step(step: Step, logs: Path, say: Callable[[str], None]) -> gpu_summary.Outcome:
    if step.skip_reason:
        say(f"{step.name}: skipped ({step.skip_reason})")
        return gpu_summary.Outcome(step.name, None, 0.0, None, step.skip_reason, step.key)
    say(f"{step.name}: started")
    start = time.monotonic()
    code, out, err = proc.cmd_output(*step.argv, check=False)
    seconds = time.monotonic() - start
    (logs / step.log).write_text(f"$ {' '.join(step.argv)}\n{out}\n{err}")
    say(f"{step.name}: exit {code} in {seconds:.0f} s (log: logs/{step.log})")
    return gpu_summary.Outcome(step.name, code == 0, seconds, f"logs/{step.log}", None, step.key)


def run_steps(side_by_side: Sequence[Step], alone: Sequence[Step], logs: Path,
              say: Callable[[str], None]) -> list[gpu_summary.Outcome]:  # fmt: skip
    """The first group concurrently, then the second one step at a time; outcomes in order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(side_by_side))) as pool:
        first = list(pool.map(lambda s: _run_step(s, logs, say), side_by_side))
    return first + [_run_step(s, logs, say) for s in alone]


def run(
    out: Path, *, dry_run: bool, upstream_url: str, say: Callable[[str], None],
    steps: Sequence[str] | None = None,
) -> int:  # fmt: skip
    """Run every step, write `out/summary.md`; 0 when everything holds, else 1."""
    listed = gpus()
    if not dry_run and not listed:
        say("no GPU (nvidia-smi lists none); --dry-run checks this command on CPU")
        return int(ExitCode.FAILED)
    require(("torch", "matplotlib"), "gpu-check", "test")
    tree_line = _source_tree(upstream_url, say)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)  # only once there is a tree to report on
    side_by_side, alone = plan(out, dry_run=dry_run, gpu_count=len(listed),
                               gpu_gib=0 if dry_run else _gpu_gib(),
                               has_gpu_tests=GPU_TESTS.is_file())  # fmt: skip
    start = time.monotonic()
    outcomes = run_steps(only(side_by_side, steps), only(alone, steps), logs, say)
    wall = time.monotonic() - start
    status = 0 if all(o.ok is not False for o in outcomes) else int(ExitCode.FAILED)
    text = gpu_summary.render(out, tree_line, outcomes, wall_s=wall, budget_s=BUDGET_S)
    (out / "summary.md").write_text(text + f"\ngpu-check exit status: {status}\n")
    say(f"summary: {out / 'summary.md'} (exit {status}, {wall:.0f} s)")
    return status
