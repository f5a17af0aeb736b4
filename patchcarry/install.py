"""What this install lacks, and the one line that says how to get it *in this install*: a
checkout has scripts/bootstrap, a `pip install` has only pip and its extras."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from patchcarry.errors import MissingInstallError

CHECKOUT = Path(__file__).resolve().parent.parent
# install set of a checkout (scripts/bootstrap SET) -> the pip extra that brings the same
_EXTRA = {"main": "", "test": "[proof]", "upstream": "[proof]"}


def in_checkout() -> bool:
    """True when patchcarry runs from a clone (its scripts/ beside the package)."""
    return (CHECKOUT / "scripts" / "bootstrap").is_file()


def how_to_get(bootstrap_set: str) -> str:
    """`scripts/bootstrap SET` in a checkout, else the pip command for the extra."""
    if in_checkout():
        return f"run scripts/bootstrap {bootstrap_set}"
    return f"pip install 'patchcarry{_EXTRA[bootstrap_set]}'"


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
            f"{what} needs {', '.join(missing)}, which this install lacks: "
            f"{how_to_get(bootstrap_set)}"
        )
