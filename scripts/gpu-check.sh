#!/usr/bin/env bash
# scripts/gpu-check.sh [OUT_DIR]: the one script the self-hosted GPU runner runs.
#
#   1. An upstream Megatron-LM tree at the manifest's pinned base_commit: $MEGATRON_SRC when
#      set, else `patchcarry tree` (the check's blob-less shallow fetcher + a sparse checkout of
#      megatron/, tests/unit_tests/, tests/test_utils/) from $UPSTREAM_URL (default: GitHub).
#   2. The GPU tests: pytest -m gpu (tests/test_gpu.py; real CUDA RNG, no stand-ins).
#   3. The PR's seed configuration (2 layers, 4 streams, bf16, mbs 1, hidden 2048 derived,
#      full recompute), all four variants, at seq 8192 with a memory-history snapshot, and at
#      seq 16384 when the GPU has >= 120 GiB: evidence JSON + PNG in OUT_DIR.
#   4. Upstream's own unit tests for the changed code on the unpatched and the patched tree,
#      side by side, launched as upstream does: torchrun --nproc-per-node=<GPUs> -m pytest.
#
# Exit status: 0 when everything holds; 1 when a GPU test fails, when the fix frees less than
# 95% of the bytes the analytic model predicts (--require-predicted 0.05: the allocator rounds
# each block to 512 B, far below 5% of hundreds of MB), when a measurement fails, or when an
# upstream test passes unpatched but fails patched. Every step runs even if an earlier fails.
# OUT_DIR gets summary.md (for the job summary), the evidence, plots, snapshots and reports.
#
# GPU_CHECK_DRY_RUN=1: a CPU dry mode to check the script itself where there is no GPU: tiny
# hc-gpt shape on CPU, GPU tests collected (they skip), upstream tests without torchrun, with
# the CPU stand-ins (many of those fail on CPU in both trees alike; only a difference counts).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/gpu-evidence}")
dry=${GPU_CHECK_DRY_RUN:-0}
mkdir -p "$out"
cd "$root"
scripts/bootstrap
py="$root/.venv/bin/python"
status=0
note() { printf 'gpu-check: %s\n' "$*" >&2; }

if [ "$dry" != 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  note "no GPU (nvidia-smi lists none); GPU_CHECK_DRY_RUN=1 runs the CPU dry mode"
  exit 1
fi

# 1. the upstream tree at the pinned base
base=$("$py" -c 'from patchcarry import manifest
print(manifest.load().entries[0].base_commit)')
if [ -z "${MEGATRON_SRC:-}" ]; then
  MEGATRON_SRC=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-megatron.XXXXXX")
  note "fetching $base into $MEGATRON_SRC"
  "$py" -m patchcarry tree --upstream "${UPSTREAM_URL:-https://github.com/NVIDIA/Megatron-LM.git}" \
    "$MEGATRON_SRC" >/dev/null
fi
export MEGATRON_SRC
have=$(git -C "$MEGATRON_SRC" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
[ "$have" = "$base" ] || note "warning: MEGATRON_SRC is at $have, the manifest pins $base"

# 2. the GPU tests
note "pytest -m gpu"
"$py" -m pytest -m gpu -q -rs --junitxml="$out/gpu-tests.xml" tests/test_gpu.py \
  >"$out/gpu-tests.log" 2>&1 || status=1
tail -n 5 "$out/gpu-tests.log" >&2

# 3. the seed-config measurement
measure=("$py" -m patchcarry measure --model hc-gpt --iterations 4 --out "$out"
  --require-predicted 0.05)
if [ "$dry" = 1 ]; then
  "${measure[@]}" --device cpu --seq 32 --name hc-gpt-cpu-dry || status=1
else
  "${measure[@]}" --device cuda --seed-config --snapshot || status=1
  gib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | awk '{print int($1/1024)}')
  if [ "$gib" -ge 120 ]; then
    "${measure[@]}" --device cuda --seed-config --seq 16384 || status=1
  else
    note "seq 16384 skipped: the GPU has $gib GiB (< 120)"
  fi
fi

# 4. upstream's unit tests, unpatched vs patched
if [ "$dry" = 1 ]; then
  upstream=(--no-torchrun)
else
  upstream=(--nproc "$(nvidia-smi -L | wc -l)")
fi
"$py" -m patchcarry.measure.upstream_tests --out "$out" "${upstream[@]}" || status=1

{
  echo "Upstream tree: $have (pinned base $base)"
  echo
  for evidence in "$out"/hc-gpt-*.json; do
    [ -f "$evidence" ] || continue
    "$py" -c 'import json, sys
from patchcarry.measure.evidence import render_markdown_table
print(render_markdown_table(json.load(open(sys.argv[1]))))' "$evidence"
  done
  echo "GPU tests: $(tail -n 1 "$out/gpu-tests.log")"
  echo
  te=$("$py" -c 'import transformer_engine' >/dev/null 2>&1 && echo installed || echo "not installed: tests that build TE specs error in both trees")
  echo "Upstream unit tests (unpatched | patched); Transformer Engine $te:"
  echo
  cat "$out/upstream-tests.md" 2>/dev/null || echo "(not run)"
  echo
  echo "gpu-check exit status: $status"
} >"$out/summary.md"
note "summary: $out/summary.md (exit $status)"
exit "$status"
