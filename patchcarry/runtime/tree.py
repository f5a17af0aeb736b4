"""Megatron source trees: installed megatron-core, a checkout, patched copies (never edited)."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from patchcarry import git, install
from patchcarry.errors import BadInputError, MissingInstallError
from patchcarry.patchfile import Patch
from patchcarry.runtime import megatron_source

MEGATRON_SRC_ENV = "MEGATRON_SRC"
# megatron-core's source is one upstream's: the offline check stands for that repository alone
OFFLINE_SOURCE_REPO = "NVIDIA/Megatron-LM"


def has_offline_source(upstream: str) -> bool:
    """Whether the offline check (megatron-core's source) says anything about `upstream`."""
    return upstream.lower() == OFFLINE_SOURCE_REPO.lower()


def installed_tree() -> Path:
    """The folder holding megatron-core's `megatron/`; without it, the pinned release's source."""
    if not install.in_checkout() and not install.has_module("megatron.core"):
        return megatron_source.fetched_tree()
    install.require(("megatron.core",), "reading the installed megatron-core's source", "main")
    spec = importlib.util.find_spec("megatron.core")
    if spec is None or spec.origin is None:  # pragma: no cover - require() said it imports
        raise MissingInstallError("megatron-core has no source files here")
    return Path(spec.origin).resolve().parent.parent.parent


def upstream_tree_from_env() -> Path | None:
    """The upstream source tree named by MEGATRON_SRC, if set (validated)."""
    value = os.environ.get(MEGATRON_SRC_ENV)
    if not value:
        return None
    tree = Path(value).expanduser().resolve()
    if not (tree / "megatron" / "core" / "__init__.py").is_file():
        raise BadInputError(f"{MEGATRON_SRC_ENV}={value} has no megatron/core/__init__.py")
    return tree


def tree_label(tree: Path) -> str:
    """Human/JSON label: 'megatron-core X (installed)' or 'upstream tree <path> @ <sha>'."""
    if install.has_module("megatron.core") and tree == installed_tree():
        from importlib.metadata import version

        return f"megatron-core {version('megatron-core')} (installed)"
    if megatron_source.is_fetched(tree):
        return f"megatron-core {megatron_source.pinned_version()} (fetched source)"
    # the folder's name, not its path: evidence is committed, and names no machine's paths
    return f"upstream tree {tree.name} @ {tree_commit(tree) or 'unknown commit'}"


def tree_commit(tree: Path) -> str | None:
    """The commit of an upstream git checkout, or None for a plain tree."""
    return git.head_commit(tree, plain_tree=True)


def _top_dirs(patches: list[Patch]) -> set[str]:
    tops = {"megatron"}
    for patch in patches:
        tops.update(path.split("/", 1)[0] for path in patch.files)
    return tops


def prepared_copy(src: Path, patches: list[Patch], dest: Path) -> Path:
    """Copy `src`'s `megatron/`, its top-level `*.py` (upstream's training loop runs from the
    variant's tree) and any top dir the patches touch to `dest`, then `git apply` each patch."""
    dest.mkdir(parents=True, exist_ok=True)
    for script in sorted(src.glob("*.py")):
        if script.is_file() and not script.is_symlink() and not (dest / script.name).exists():
            shutil.copyfile(script, dest / script.name)
    # Bytecode is copied too (saves seconds of compiling per copy); the cached bytecode of
    # each file a patch touches is removed below so it can never be used for the new source.
    for top in sorted(_top_dirs(patches)):
        if (src / top).is_dir() and not (dest / top).exists():
            shutil.copytree(src / top, dest / top, symlinks=True)
    for patch in patches:
        for rel in patch.files:
            source = dest / rel
            for cached in source.parent.glob(f"__pycache__/{source.stem}.*.pyc"):
                cached.unlink()
        code, err = git.apply_in_tree(patch.path, tree=dest, check_only=False, verbose=False)
        if code != 0:
            raise BadInputError(f"{patch.name} does not apply to a copy of {src}:\n{err.strip()}")
    return dest
