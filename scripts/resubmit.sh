#!/usr/bin/env bash
# scripts/resubmit.sh [ARGS...]: `python -m patchcarry resubmit ARGS` after setting up .venv;
# `scripts/resubmit.sh scan ...` runs `patchcarry scan`. See `--help` of each.
#
# Two phases: .venv's main set is installed (only when missing or stale) with the tokens
# removed from the environment (bootstrap drops anything named like a credential as well),
# then the installed venv runs with them. CI does the same in two steps (resubmit.yml).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
env -u GITHUB_TOKEN -u GH_TOKEN -u RESUBMIT_TOKEN "$root/scripts/bootstrap" main >&2
command=resubmit
[[ "${1:-}" == scan ]] && { command=scan; shift; }
exec "$root/.venv/bin/python" -m patchcarry "$command" "$@"
