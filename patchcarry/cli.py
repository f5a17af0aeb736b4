"""Command line: the only module that knows argparse dispatch."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from patchcarry import __version__
from patchcarry.error_handler import error_handler

# command name -> (module under patchcarry.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "check that each patch applies upstream, drift and identity"),
    "measure": ("measure", "measure retained memory per variant and write evidence"),
    "audit": ("audit", "find every tensor a model keeps between iterations, and who holds it"),
    "tree": ("tree", "check out an upstream source tree at the pinned base (for MEGATRON_SRC)"),
    "resubmit": ("resubmit", "open or refresh the upstream PR from an attached fork"),
    "adopt": ("adopt", "carry an upstream PR (e.g. one auto-closed by fork detachment) as patches"),
    "scan": ("scan", "list your upstream PRs closed by fork detachment, not yet re-submitted"),
    "gpu-check": ("gpu_check", "GPU tests, seed-config measurement, upstream tests (GPU machine)"),
}


def _command_module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"patchcarry.commands.{COMMANDS[name][0]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="patchcarry", description=__doc__)
    parser.add_argument("--version", action="version", version=f"patchcarry {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        try:
            module = _command_module(name)
        except ModuleNotFoundError:
            continue  # command not built yet
        cmd_parser = sub.add_parser(name, help=help_text, description=module.__doc__)
        module.add_arguments(cmd_parser)
    args = parser.parse_args(argv)
    with error_handler() as result:
        result.code = int(_command_module(args.command).run(args))
    return result.code


if __name__ == "__main__":
    raise SystemExit(main())
