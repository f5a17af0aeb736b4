"""The configurations the audit runs: the known one (hyper connections, full recompute) and the
sweep over Megatron's other recompute paths; `NOT_ON_CPU` names those CPU cannot build."""

from __future__ import annotations

from typing import Any

SHAPE = {"layers": 2, "seq": 8, "mbs": 1, "hidden": 16, "streams": 4, "dtype": "fp32"}
DEFAULT = "hc-full-uniform-1"

_HC = {"enable_hyper_connections": True}
_NO_HC = {"enable_hyper_connections": False}
_MOE = {"num_moe_experts": 2, "moe_router_topk": 2, "moe_ffn_hidden_size": 32}
_FULL = {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}


def _selective(*modules: str) -> dict[str, Any]:
    return {"recompute_granularity": "selective", "recompute_method": None,
            "recompute_num_layers": None, "recompute_modules": list(modules)}  # fmt: skip


def _config(name: str, *parts: dict[str, Any], layers: int = 2, **more: Any) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for part in (*parts, more):
        overrides.update(part)
    return {"name": name, "shape": {**SHAPE, "layers": layers}, "overrides": overrides}


CONFIGS: dict[str, dict[str, Any]] = {
    c["name"]: c
    for c in (
        _config("hc-full-uniform-1", _HC, _FULL),
        _config("hc-full-uniform-2", _HC, {**_FULL, "recompute_num_layers": 2}, layers=4),
        _config("hc-full-block-1", _HC, {**_FULL, "recompute_method": "block"}, layers=4),
        _config("nohc-full-uniform-1", _NO_HC, _FULL),
        _config("nohc-full-uniform-2", _NO_HC, {**_FULL, "recompute_num_layers": 2}, layers=4),
        _config("hc-selective-mhc", _HC, _selective("mhc")),
        _config("hc-selective-mhc-layer-1", _HC, _selective("mhc"), mhc_recompute_layer_num=1),
        _config("hc-selective-core_attn", _HC, _selective("core_attn")),
        _config("hc-selective-layernorm", _HC, _selective("layernorm")),
        _config("hc-selective-mlp", _HC, _selective("mlp")),
        _config("nohc-selective-core_attn", _NO_HC, _selective("core_attn")),
        _config("nohc-selective-layernorm", _NO_HC, _selective("layernorm")),
        _config("nohc-selective-mlp", _NO_HC, _selective("mlp")),
        _config("moe-selective-moe", _NO_HC, _MOE, _selective("moe")),
        _config("moe-selective-shared_experts", _NO_HC, _MOE,
                _selective("shared_experts"), moe_shared_expert_intermediate_size=32),
        _config(
            "moe-selective-moe_act", _NO_HC, _MOE, _selective("moe_act"), moe_grouped_gemm=True
        ),
        _config("moe-hc-full-uniform-1", _HC, _MOE, _FULL),
        _config("moe-hc-selective-mhc", _HC, _MOE, _selective("mhc")),
    )
}  # fmt: skip

# Recompute paths the sweep does not build with upstream's GPTModel + local spec on CPU.
NOT_ON_CPU = {
    "mla_up_proj": "needs multi-latent attention (MLATransformerConfig and its spec), not the "
    "local GPT spec the audit builds",
    "gdn": "needs experimental_attention_variant='gated_delta_net' (a hybrid model, not "
    "GPTModel's local spec)",
}


def resolve(names: list[str]) -> list[dict[str, Any]]:
    """The named configurations, in the order given."""
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise KeyError(
            f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}"
        )
    return [CONFIGS[n] for n in names]
