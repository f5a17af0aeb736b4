#!/usr/bin/env bash
# scripts/resubmit.sh [ARGS...]: `patchcarry resubmit ARGS` after setting up .venv; see --help.
#
# Two phases: .venv's main set is installed (only when missing or stale) with the tokens
# removed from the environment (bootstrap drops anything named like a credential as well),
# then the installed venv runs with them. CI does the same in two steps (resubmit.yml).
set -euo pipefail
# shellcheck source=/dev/null  # scripts/lib/shim.bash, checked on its own
source "$(dirname "${BASH_SOURCE[0]}")/lib/shim.bash"
shim main resubmit "$@"
