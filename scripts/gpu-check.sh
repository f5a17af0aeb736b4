#!/usr/bin/env bash
# scripts/gpu-check.sh [--dry-run] [OUT_DIR]: the one command the self-hosted GPU runner
# runs; a shim over `python -m patchcarry gpu-check` (see its --help), which gets every
# argument. OUT_DIR (default ./gpu-evidence) is made once there is output.
# GPU_CHECK_DRY_RUN=1 adds --dry-run (checks it on CPU); UPSTREAM_URL sets --upstream.
set -euo pipefail
# shellcheck source=/dev/null  # scripts/lib/shim.bash, checked on its own
source "$(dirname "${BASH_SOURCE[0]}")/lib/shim.bash"
dry=()
if [ "${GPU_CHECK_DRY_RUN:-0}" = 1 ]; then dry=(--dry-run); fi
# CUDA torch on a GPU; with --dry-run, CPU torch + triton
shim upstream gpu-check "${dry[@]}" \
  --upstream "${UPSTREAM_URL:-https://github.com/NVIDIA/Megatron-LM.git}" "$@"
