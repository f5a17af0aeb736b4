"""The one stand-in that is about Python, not CUDA: `typing.override` on 3.11. Its own module
so that code which needs no torch (the training loop's argument builder) can import it."""

from __future__ import annotations

import sys
import typing


def standin_typing_override() -> None:
    """`typing.override` (3.12) -> identity on 3.11, as typing_extensions; megatron uses it."""
    if sys.version_info < (3, 12) and not hasattr(typing, "override"):
        typing.override = lambda method: method  # type: ignore[attr-defined]
