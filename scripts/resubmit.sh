#!/usr/bin/env bash
# scripts/resubmit.sh [ARGS...]: `python -m patchcarry resubmit ARGS` after setting up .venv;
# `scripts/resubmit.sh scan ...` runs `patchcarry scan`. See `--help` of each.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap" >&2
command=resubmit
[[ "${1:-}" == scan ]] && { command=scan; shift; }
exec "$root/.venv/bin/python" -m patchcarry "$command" "$@"
