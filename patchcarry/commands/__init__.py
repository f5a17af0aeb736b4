"""One module per command. Each has `add_arguments(parser)` and `run(args) -> int`.

Command modules import nothing heavy (torch, megatron) at module level: `--help` stays fast.
"""
