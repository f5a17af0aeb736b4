#!/usr/bin/env bash
# scripts/resubmit.sh [ARGS...]: `python -m patchcarry resubmit ARGS` after setting up .venv;
# `scripts/resubmit.sh scan ...` runs `patchcarry scan`. See `--help` of each.
#
# Two phases: .venv's main set is installed (only when missing or stale) with the tokens
# removed from the environment (bootstrap drops anything named like a credential as well),
# then the installed venv runs with them. CI does the same in two steps (resubmit.yml).
set -euo pipefail
# shellcheck source=/dev/null  # scripts/lib/shim.bash, checked on its own
source "$(dirname "${BASH_SOURCE[0]}")/lib/shim.bash"
command=resubmit
shim_prog=scripts/resubmit.sh
if [[ "${1:-}" == scan ]]; then
  command=scan
  shim_prog+=" scan"
  shift
fi
shim main "$command" "$@"
