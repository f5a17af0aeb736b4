#!/usr/bin/env bash
# scripts/resubmit.sh [--dry-run] [--json] [--force] [--rebase] [--offline] [--upstream-url URL]
#   [--upstream OWNER/NAME] [--fork OWNER/NAME] [--evidence PATH] [--manifest PATH] [ENTRY...]
# scripts/resubmit.sh scan: your upstream PRs closed by fork detachment, not yet re-submitted.
# Auth: GITHUB_TOKEN (without it: dry run). API host: GH_HOST (full URL). See --help.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/bootstrap" >&2
if [[ "${1:-}" == scan ]]; then
    shift
    exec "$root/.venv/bin/python" -m patchcarry scan "$@"
fi
exec "$root/.venv/bin/python" -m patchcarry resubmit "$@"
