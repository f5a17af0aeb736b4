"""The training-loop child: upstream's `pretrain_gpt.py`, the allocator read every step."""

from __future__ import annotations

import json
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

from patchcarry.measure.pretrain_args import SCRIPT
from patchcarry.runtime.standin_typing import standin_typing_override

RESULT_MARKER = "PATCHCARRY-PRETRAIN-RESULT "


def read_every_step(training: Any, steps: list[dict[str, Any]], cuda: Any,
                    clock: Callable[[], float]) -> None:  # fmt: skip
    """Wrap `training.train_step` so that each call appends its allocator figures to `steps`."""
    original = training.train_step

    def train_step(*args: Any, **kwargs: Any) -> Any:
        cuda.synchronize()
        cuda.reset_peak_memory_stats()
        start = clock()
        result = original(*args, **kwargs)
        cuda.synchronize()
        steps.append(
            {"index": len(steps), "step_time_s": clock() - start,
             "allocated_floor_bytes": int(cuda.memory_allocated()),
             "peak_bytes": int(cuda.max_memory_allocated()),
             "reserved_bytes": int(cuda.memory_reserved())}
        )  # fmt: skip
        return result

    training.train_step = train_step


PARSED_FIELDS = (
    "num_layers", "hidden_size", "seq_length", "micro_batch_size", "bf16", "fp16",
    "transformer_impl", "enable_hyper_connections", "num_residual_streams",
    "recompute_granularity", "recompute_method", "recompute_num_layers", "vocab_size",
    "untie_embeddings_and_output_weights", "mock_data", "tokenizer_type", "train_iters",
)  # fmt: skip


def parse_only(request: dict[str, Any]) -> dict[str, Any]:
    """Upstream's own parsing of `request["argv"]` (its `args_defaults`) and the model's fields."""
    import megatron.core
    from megatron.training.arguments import parse_and_validate_args

    sys.argv = [request.get("script", SCRIPT), *request["argv"]]
    args = parse_and_validate_args(args_defaults={"tokenizer_type": "GPT2BPETokenizer"})
    parsed = {name: getattr(args, name, None) for name in PARSED_FIELDS}
    parsed["params_dtype"] = str(args.params_dtype)
    return {"megatron_file": megatron.core.__file__, "parsed": parsed}


def emit(result: dict[str, Any]) -> None:
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()


def main() -> int:
    request = json.loads(sys.stdin.read())
    standin_typing_override()  # Python 3.11: upstream's training code imports typing.override
    if request.get("parse_only"):
        emit(parse_only(request))
        return 0
    import torch

    if not torch.cuda.is_available():
        print("error: upstream's training loop needs a CUDA device", file=sys.stderr)
        return 1
    import megatron.core
    import megatron.training.training as training

    steps: list[dict[str, Any]] = []
    read_every_step(training, steps, torch.cuda, time.perf_counter)
    script = request.get("script", SCRIPT)
    sys.argv = [script, *request["argv"]]
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:  # upstream's exit paths; a clean one still has its steps
        if exc.code not in (None, 0):
            raise
    result = {"megatron_file": megatron.core.__file__, "torch_version": torch.__version__,
              "cuda_device": torch.cuda.get_device_name(0), "steps": steps}  # fmt: skip
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
