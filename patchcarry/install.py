"""What this install lacks, and the one line that says how to get it *in this install*: a
checkout has scripts/bootstrap, a `pip install` has only pip and its extras."""

from __future__ import annotations

import importlib.util
from importlib import metadata
from pathlib import Path

from patchcarry.errors import MissingInstallError

CHECKOUT = Path(__file__).resolve().parent.parent


def in_checkout() -> bool:
    """True when patchcarry runs from a clone (its scripts/ beside the package)."""
    return (CHECKOUT / "scripts" / "bootstrap").is_file()


def command(name: str) -> str:
    """How a user of this install runs `name`: `scripts/NAME` in a clone, else the console
    script's `patchcarry NAME` (the scripts are a clone's)."""
    return f"scripts/{name}" if in_checkout() else f"patchcarry {name}"


def _pinned(distribution: str) -> str:
    """`name==version` as this install's metadata pins it for the `proof` extra."""
    try:
        requirements = metadata.requires("patchcarry") or []
    except metadata.PackageNotFoundError:  # a clone on sys.path, not an installed dist
        requirements = []
    for requirement in requirements:
        if requirement.lower().startswith(f"{distribution}=="):
            return requirement.split(";")[0].strip()
    return distribution


def how_to_get(bootstrap_set: str) -> str:
    """`scripts/bootstrap SET` in a checkout, else the pip command for this install."""
    if in_checkout():
        return f"run scripts/bootstrap {bootstrap_set}"
    if bootstrap_set == "main":  # the offline check reads megatron-core's files, no more
        return (
            f"pip install 'patchcarry[proof]' (or its source alone: pip install --no-deps "
            f"{_pinned('megatron-core')})"
        )
    # beside a torch of its own (a GPU image's CUDA build), [proof]'s torch pin would replace it
    return (
        "pip install 'patchcarry[proof]' (or, to keep a torch already installed, 'patchcarry[gpu]')"
    )


def has_module(name: str) -> bool:
    """find_spec that answers False (not ModuleNotFoundError) when a parent package is absent."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ModuleNotFoundError, ValueError):
        return False


def require(modules: tuple[str, ...], what: str, bootstrap_set: str) -> None:
    """MissingInstallError (exit 5), one line, unless every module in `modules` imports."""
    missing = [m for m in modules if not has_module(m)]
    if missing:
        raise MissingInstallError(
            f"{what} needs {', '.join(missing)}, not installed here: {how_to_get(bootstrap_set)}"
        )
