"""What this install lacks, and the line that says how to get it here (bootstrap or pip)."""

from __future__ import annotations

import importlib.util
import json
import sys
import urllib.parse
from importlib import metadata
from pathlib import Path

from patchcarry.errors import MissingInstallError

CHECKOUT = Path(__file__).resolve().parent.parent


def in_checkout() -> bool:
    """True when patchcarry runs from a clone (its scripts/ beside the package)."""
    return (CHECKOUT / "scripts" / "bootstrap").is_file()


def command(name: str) -> str:
    """How a user runs `name`: as they ran this one, else `scripts/NAME`, else `patchcarry NAME`."""
    ran_as_command = Path(sys.argv[0]).name == "patchcarry" if sys.argv else False
    script = SCRIPTS.get(name, name)
    return f"scripts/{script}" if in_checkout() and not ran_as_command else f"patchcarry {name}"


# A clone's script for a command, where its name is not the command's: the design card's
# name for the contributor's command.
SCRIPTS = {"resubmit": "resubmit.sh"}


def _requirements() -> list[str]:
    """This install's requirements, as its metadata pins them."""
    try:
        return metadata.requires("patchcarry") or []
    except metadata.PackageNotFoundError:  # a clone on sys.path, not an installed dist
        return []


def _pinned(distribution: str) -> str:
    """`name==version` as this install's metadata pins it for the `proof` extra."""
    for requirement in _requirements():
        if requirement.lower().startswith(f"{distribution}=="):
            return requirement.split(";")[0].strip()
    return distribution


def _pipx_venv() -> bool:
    """True in a pipx-made venv (`.../pipx/venvs/NAME`): `pipx inject` is the user's tool there."""
    return Path(sys.prefix).parent.name == "venvs" and "pipx" in Path(sys.prefix).parts


def _source() -> str:
    """What this install was made from, for pip with an extra (PEP 610's URL, else the name)."""
    try:
        recorded = metadata.distribution("patchcarry").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        recorded = None
    try:
        url = str(json.loads(recorded or "{}").get("url", ""))
    except ValueError:
        url = ""
    if url.startswith("file://"):
        return urllib.parse.unquote(url.removeprefix("file://"))
    return f"patchcarry[{{extra}}] @ {url}" if url else "patchcarry"


def _pip_install(extra: str) -> str:
    source = _source()
    if "[{extra}]" in source:
        return f"pip install '{source.format(extra=extra)}'"
    return f"pip install '{source}[{extra}]'"


def _extra_pins(extra: str) -> list[str]:
    """The requirements the extra `extra` adds, as this install's metadata pins them."""
    split = (r.partition(";") for r in _requirements())  # (name==version, ;, its marker)
    return [t.strip() for t, _, m in split if f'extra == "{extra}"' in m.replace("'", '"')]


def how_to_get(bootstrap_set: str) -> str:
    """How to add `bootstrap_set` here: `scripts/bootstrap`, `pipx inject`, else pip."""
    if in_checkout():
        return f"run scripts/bootstrap {bootstrap_set}"
    if _pipx_venv():
        pins = _extra_pins("proof") or ["torch", "megatron-core", "matplotlib"]
        if bootstrap_set == "main":
            pins = [p for p in pins if p.startswith("megatron-core")] or ["megatron-core"]
        return f"pipx inject patchcarry {' '.join(pins)}"
    if bootstrap_set == "main":  # the offline check reads megatron-core's files, no more
        return (f"{_pip_install('proof')} (or its source alone: pip install --no-deps "
                f"{_pinned('megatron-core')})")  # fmt: skip
    # beside a torch of its own (a GPU image's CUDA build), [proof]'s torch pin would replace it
    return f"{_pip_install('proof')} (or, to keep a torch already installed, {_pip_install('gpu')})"


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
