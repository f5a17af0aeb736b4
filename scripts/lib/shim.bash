# shellcheck shell=bash
# Sourced by the shims in scripts/: `shim SET COMMAND ARGS...` runs `python -m patchcarry
# COMMAND ARGS...` from .venv after `scripts/bootstrap SET`, under the shim's own name
# (PATCHCARRY_PROG: its usage and --help say `scripts/NAME`). --help (or -h) installs,
# fetches and writes nothing: no bootstrap; .venv's Python when there is one, else PYTHON or
# python3 with the checkout on its path.
shim_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=/dev/null  # scripts/lib/python.bash, checked on its own
source "$shim_root/scripts/lib/python.bash"

wants_help() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      -h | --help) return 0 ;;
      --) return 1 ;;
    esac
  done
  return 1
}

# shim_python SET ARGS...: sets shim_py to the interpreter to run, after installing SET
# unless ARGS ask for help.
shim_python() {
  local set=$1
  shift
  export PATCHCARRY_PROG=${shim_prog:-scripts/$(basename "$0")}
  if [ -n "${shim_description:-}" ]; then export PATCHCARRY_DESCRIPTION=$shim_description; fi
  shim_py=$shim_root/.venv/bin/python
  if wants_help "$@"; then
    if [ ! -x "$shim_py" ]; then
      export PYTHONPATH="$shim_root${PYTHONPATH:+:$PYTHONPATH}"
      shim_py=$(which_python "${PYTHON:-python3}")
    fi
    return 0
  fi
  # no token reaches the install (bootstrap drops credentials too); its lines go to stderr
  env -u GITHUB_TOKEN -u GH_TOKEN -u RESUBMIT_TOKEN "$shim_root/scripts/bootstrap" "$set" >&2
}

# shim SET COMMAND ARGS...: exec `python -m patchcarry COMMAND ARGS...` (see above).
shim() {
  local set=$1 command=$2
  shift 2
  shim_python "$set" "$@"
  exec "$shim_py" -P -m patchcarry "$command" "$@"
}

# shim_module SET MODULE ARGS...: the same for a repository tool, `python -m MODULE` in the
# checkout (testing.demo_6117, testing.docs_outputs, ...).
shim_module() {
  local set=$1 module=$2
  shift 2
  shim_python "$set" "$@"
  cd "$shim_root" || exit 1
  exec "$shim_py" -P -m "$module" "$@"
}

