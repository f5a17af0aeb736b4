"""patchcarry: prove, measure and (re)submit a Megatron-LM fix from an attached fork."""

from __future__ import annotations

__version__ = "0.1.0"
