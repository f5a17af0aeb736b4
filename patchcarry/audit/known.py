"""Sites this repository carries a fix for, by entry, and the state kept by design. Order
matters: `checkpoint-grad` frees what `mlp_norm_manager` also reaches, so it is tried first."""

from __future__ import annotations

import re
from typing import Any

KNOWN: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
    ("checkpoint-grad", re.compile(r"AccumulateGrad\.variable\.grad$"),
     "CheckpointFunction detached input .grad"),
    ("hc-mlp-norm-manager", re.compile(r"^decoder\.layers\.\*\.mlp_norm_manager\b"), None),
)  # fmt: skip


def entry_for(site: dict[str, Any]) -> str | None:
    """The manifest entry whose fix removes `site` (a grouped site), or None when new."""
    for name, pattern, origin in KNOWN:
        if pattern.search(site["site"]) and (origin is None or origin in site["origins"]):
            return name
    return None


# State Megatron and the harness keep by design between iterations: not a leak, and not new.
# Each is named by its holder; anything else no manifest entry fixes is new, whatever holds it.
EXPECTED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the harness's fixed batch", re.compile(r"^harness\.")),
    ("Megatron's reused scratch buffer",
     re.compile(r"^megatron\.core\.parallel_state:_GLOBAL_MEMORY_BUFFER\.buffer\[")),
    ("the RNG tracker's generator states",
     re.compile(r"^megatron\.core\.tensor_parallel\.random:_CUDA_RNG_STATE_TRACKER\.states_\[")),
    ("an aux-loss scaler's one scalar (a class attribute)",
     re.compile(r"^megatron\.core\.[\w.]+:\w+LossAutoScaler\.main_loss_backward_scale$")),
)  # fmt: skip


def expected(site_name: str) -> str | None:
    """Why a site is state kept by design (see EXPECTED), or None."""
    return next((why for why, pattern in EXPECTED if pattern.search(site_name)), None)
