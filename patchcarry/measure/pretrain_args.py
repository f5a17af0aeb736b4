"""`pretrain_gpt.py`'s command line for `--harness pretrain`: no Transformer Engine, no apex."""

from __future__ import annotations

from patchcarry.measure.model import Shape, default_heads

SCRIPT = "pretrain_gpt.py"
# The NullTokenizer's vocabulary for the training-loop runs (a GPT-sized embedding and head).
PRETRAIN_VOCAB = 131072
# The flags that do not depend on the shape: what made upstream's loop run without TE or apex.
FIXED_FLAGS: tuple[str, ...] = ("--transformer-impl", "local",
                                "--mock-data",
                                "--tokenizer-type", "NullTokenizer",
                                "--untie-embeddings-and-output-weights",
                                "--no-gradient-accumulation-fusion",
                                "--no-masked-softmax-fusion",
                                "--no-bias-gelu-fusion",
                                "--no-bias-dropout-fusion",
                                "--no-persist-layer-norm",
                                "--enable-hyper-connections",
                                "--recompute-granularity", "full",
                                "--recompute-method", "uniform",
                                "--recompute-num-layers", "1",
                                "--optimizer", "adam",
                                "--lr", "1e-4",
                                "--min-lr", "1e-5",
                                "--lr-decay-style", "constant",
                                "--attention-dropout", "0.0",
                                "--hidden-dropout", "0.0",
                                "--eval-iters", "0",
                                "--log-interval", "1",
                                "--seed", "1234")  # fmt: skip
DTYPE_FLAGS = {"bf16": ("--bf16",), "fp16": ("--fp16",), "fp32": ()}


def argv(shape: Shape, *, iterations: int, vocab: int = PRETRAIN_VOCAB) -> list[str]:
    """`pretrain_gpt.py`'s arguments for `shape`, `iterations` training steps."""
    return ["--num-layers", str(shape.layers),
            "--hidden-size", str(shape.hidden),
            "--num-attention-heads", str(default_heads(shape.hidden)),
            "--seq-length", str(shape.seq),
            "--max-position-embeddings", str(shape.seq),
            "--micro-batch-size", str(shape.mbs),
            "--global-batch-size", str(shape.mbs),
            "--num-residual-streams", str(shape.streams),
            "--vocab-size", str(vocab),
            "--train-iters", str(iterations),
            *DTYPE_FLAGS[shape.dtype],
            *FIXED_FLAGS]  # fmt: skip


def env(port: int) -> dict[str, str]:
    """One rank without a launcher (what torchrun would set for a single process)."""
    return {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port), "CUDA_DEVICE_MAX_CONNECTIONS": "1"}  # fmt: skip
