# shellcheck shell=bash
# Sourced by scripts/bootstrap, scripts/lock and the shims. `which_python NAME` prints the
# interpreter to run for NAME (PYTHON's value): NAME itself, or, for a bare name that pyenv's
# shim will not run (a version installed but not selected, as on this project's machines),
# pyenv's own install of it. Runs NAME once to find out.
which_python() {
  local name=$1 found=$1 candidate
  if [[ "$name" != */* ]] && ! "$name" -c '' >/dev/null 2>&1; then
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/"$name"; do
      if [ -x "$candidate" ]; then found=$candidate; fi
    done
  fi
  printf '%s\n' "$found"
}
