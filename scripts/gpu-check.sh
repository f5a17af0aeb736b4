#!/usr/bin/env bash
# scripts/gpu-check.sh [OUT_DIR]: the one command the self-hosted GPU runner runs; a shim over
# `python -m patchcarry gpu-check` (see its --help). GPU_CHECK_DRY_RUN=1 checks it on CPU.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/gpu-evidence}")
cd "$root"
scripts/bootstrap upstream # CUDA torch on a GPU; with GPU_CHECK_DRY_RUN=1, CPU torch + triton
dry=()
[ "${GPU_CHECK_DRY_RUN:-0}" = 1 ] && dry=(--dry-run)
exec .venv/bin/python -m patchcarry gpu-check "${dry[@]}" --upstream "${UPSTREAM_URL:-https://github.com/NVIDIA/Megatron-LM.git}" "$out"
