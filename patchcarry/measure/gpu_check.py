"""The one prepared check for a GPU machine (the self-hosted runner, or a lent device).

1. An upstream Megatron-LM tree at the manifest's pinned base: MEGATRON_SRC when set, else
   one fetched like `tree` does (blob-less shallow fetch + sparse checkout).
2. The GPU tests: pytest -m gpu (tests/test_gpu.py; real CUDA RNG, no stand-ins).
3. The PR's seed configuration, all four variants, at seq 8192 with a memory-history snapshot,
   and at seq 16384 when the GPU has >= 120 GiB: evidence JSON + PNG.
4. Upstream's own unit tests for the changed code, unpatched and patched, side by side.
5. The retention audit over every configuration (the ones CPU cannot build run here): any
   finding (`patchcarry.audit.findings`: a site no manifest entry fixes whatever holds it,
   bytes growing every iteration, unattributed bytes past the floor) fails the check.

Every step runs even if an earlier one fails; the status is 1 when any fails (a GPU test, a
fix that frees less than 95% of the predicted bytes, a measurement, or an upstream test that
passes unpatched but fails patched). `out` gets summary.md and every report.
With `dry_run` it checks itself on CPU: a tiny hc-gpt shape, GPU tests collected (they skip),
upstream tests without torchrun.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from patchcarry import manifest, proc, upstream
from patchcarry.errors import ExitCode
from patchcarry.install import CHECKOUT, require
from patchcarry.runtime import tree as megatron_tree

GPU_TESTS = CHECKOUT / "tests" / "test_gpu.py"  # a checkout's; a pip install has none
BIG_GPU_GIB = 120  # room for the seq-16384 run


def _gpus() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    code, out, _ = proc.cmd_output("nvidia-smi", "-L", check=False)
    return [line for line in out.splitlines() if line.strip()] if code == 0 else []


def _gpu_gib() -> int:
    _, out, _ = proc.cmd_output(
        "nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "-i", "0"
    )
    return int(float(out.split()[0]) / 1024)


def _step(label: str, argv: list[str], log: Path | None, say: Callable[[str], None]) -> bool:
    say(label)
    code, out, err = proc.cmd_output(*argv, check=False)
    text = out + err
    if log is not None:
        log.write_text(text)
        tail = text.strip().splitlines()[-5:]
        say("\n".join(tail))
    else:
        sys.stdout.write(out)
        sys.stderr.write(err)
    return code == 0


def _source_tree(upstream_url: str, say: Callable[[str], None]) -> tuple[Path, str]:
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
    return tree, f"Upstream tree: {have} (pinned base {base})"


def run(out: Path, *, dry_run: bool, upstream_url: str, say: Callable[[str], None]) -> int:
    """Run every step, write `out/summary.md`; 0 when everything holds, else 1."""
    gpus = _gpus()
    if not dry_run and not gpus:
        say("no GPU (nvidia-smi lists none); --dry-run checks this command on CPU")
        return int(ExitCode.FAILED)
    require(("torch", "matplotlib"), "gpu-check", "test")
    _, tree_line = _source_tree(upstream_url, say)
    out.mkdir(parents=True, exist_ok=True)  # only once there is a tree to report on
    py = sys.executable
    ok = True
    if GPU_TESTS.is_file():
        argv = [py, "-m", "pytest", "-m", "gpu", "-q", "-rs", f"--junitxml={out}/gpu-tests.xml"]
        ok &= _step("pytest -m gpu", [*argv, str(GPU_TESTS)], out / "gpu-tests.log", say)
    else:
        (out / "gpu-tests.log").write_text(f"not run: no {GPU_TESTS} here (run from a checkout)\n")
    measure = [py, "-m", "patchcarry", "measure", "--model", "hc-gpt", "--iterations", "4"]
    measure += ["--out", str(out), "--require-predicted", "0.05"]
    if dry_run:
        ok &= _step("measure (CPU dry run)", [*measure, "--device", "cpu", "--seq", "32",
                                             "--name", "hc-gpt-cpu-dry"], None, say)  # fmt: skip
    else:
        seed = [*measure, "--device", "cuda", "--seed-config"]
        ok &= _step("measure seq 8192", [*seed, "--snapshot"], None, say)
        gib = _gpu_gib()
        if gib >= BIG_GPU_GIB:
            ok &= _step("measure seq 16384", [*seed, "--seq", "16384"], None, say)
        else:
            say(f"seq 16384 skipped: the GPU has {gib} GiB (< {BIG_GPU_GIB})")
    tests = [py, "-m", "patchcarry.measure.upstream_tests", "--out", str(out)]
    tests += ["--no-torchrun"] if dry_run else ["--nproc", str(len(gpus))]
    ok &= _step("upstream unit tests, unpatched vs patched", tests, None, say)
    audit = [py, "-m", "patchcarry", "audit", "--variants", "unpatched,both", "--fail-on-new"]
    if dry_run:  # one configuration on CPU checks the step itself
        audit += ["--config", "hc-full-uniform-1", "--device", "cpu"]
    else:  # every configuration, MoE and selective mlp included (they do not build on CPU)
        audit += ["--sweep", "--device", "cuda"]
    device = "cpu" if dry_run else "cuda"
    audit += ["--json", f"{out}/audit-hc-gpt-{device}.json"]
    audit += ["--markdown", f"{out}/audit-hc-gpt-{device}.md"]
    ok &= _step("retention audit", audit, None, say)
    status = 0 if ok else int(ExitCode.FAILED)
    (out / "summary.md").write_text(_summary(out, tree_line, status))
    say(f"summary: {out / 'summary.md'} (exit {status})")
    return status


def _summary(out: Path, tree_line: str, status: int) -> str:
    from patchcarry.measure.evidence import render_markdown_table

    parts = [tree_line, ""]
    for evidence in sorted(out.glob("hc-gpt-*.json")):
        parts.append(render_markdown_table(json.loads(evidence.read_text())))
    log = (out / "gpu-tests.log").read_text().strip().splitlines()
    parts += [f"GPU tests: {log[-1] if log else '(no output)'}", ""]
    try:
        import transformer_engine  # type: ignore[import-not-found]  # noqa: F401

        te = "installed"
    except ImportError:
        te = "not installed: tests that build TE specs error in both trees"
    parts += [f"Upstream unit tests (unpatched | patched); Transformer Engine {te}:", ""]
    report = out / "upstream-tests.md"
    parts += [report.read_text() if report.is_file() else "(not run)", ""]
    for audit in sorted(out.glob("audit-hc-gpt-*.md")):
        parts += ["Retention audit:", "", audit.read_text(), ""]
    parts.append(f"gpu-check exit status: {status}")
    return "\n".join(parts) + "\n"
