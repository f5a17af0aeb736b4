"""Command line: the only module that knows argparse dispatch."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import NoReturn

from patchcarry import __version__, display, errors, progress, trace
from patchcarry.error_handler import error_handler

# command name -> its one-line help (its module: patchcarry.commands.NAME, "-" as "_")
COMMANDS: dict[str, str] = {
    "scan": "list your PRs closed by fork detachment, each with its `adopt` command",
    "adopt": "carry an upstream PR (e.g. one auto-closed by fork detachment) as patches",
    "check": "check that each patch applies upstream, drift and identity",
    "resubmit": "open or refresh the upstream PR from an attached fork",
    "retire": "stop carrying an entry whose fix landed upstream, keeping its record",
    "tree": "check out an upstream source tree at the pinned base (for MEGATRON_SRC)",
    "measure": "measure retained memory per variant and write evidence (Megatron)",
    "audit": "find every tensor a model keeps between iterations (Megatron)",
    "gpu-check": "GPU tests, seed-config measurement, upstream tests (GPU machine)",
    "help": "reference: exit-codes, environment (tokens, hosts, caches), log",
}

DESCRIPTION = (
    "Carry pull requests that GitHub closed when their fork left the fork network back "
    "upstream: find them (scan --all), adopt one as patches, then resubmit (--dry-run first) "
    "from a fork GitHub still counts as attached. `patchcarry COMMAND --help` says more."
)
WIDTH = 100  # --help is laid out for this width, or a narrower COLUMNS or terminal


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (laid out for WIDTH), wider lines wrapped at spaces."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=display.columns(WIDTH), max_help_position=30)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return display.fit(super()._fill_text(text, width, indent), width, hang=0)

    def format_help(self) -> str:
        # argparse never breaks a usage group or a long option: those lines are wrapped here
        return display.fit(super().format_help(), self._width)


# A shim in scripts/ names itself here, so that its --help and usage say its own name.
PROG_ENV = "PATCHCARRY_PROG"
# ... and, when it does more than its command (audit-sweep), says what it does here.
DESCRIPTION_ENV = "PATCHCARRY_DESCRIPTION"


def _command_module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"patchcarry.commands.{name.replace('-', '_')}")


class _Parser(argparse.ArgumentParser):
    """argparse's parser; with `--json` asked, a usage error is also a JSON object on stdout."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        if self.json_errors:
            print(json.dumps({"error": message, "exit_code": int(errors.ExitCode.USAGE)}))
        # argparse's own lines, the error wrapped to the width as the usage is
        self.print_usage(sys.stderr)
        said = f"{self.prog}: error: {message}"
        self.exit(errors.ExitCode.USAGE,
                  display.fit(said, display.columns(display.UNBOUNDED)) + "\n")  # fmt: skip


def build_parser(
    prog: str | None = None, *, json_errors: bool = False
) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and each command's; `prog` replaces `patchcarry COMMAND` in usage."""
    parser = _Parser(prog="patchcarry", description=textwrap.fill(DESCRIPTION, 92),
                     epilog=errors.help_epilog(), formatter_class=_Formatter)  # fmt: skip
    parser.add_argument("--version", action="version", version=f"patchcarry {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands: dict[str, argparse.ArgumentParser] = {}
    for name, help_text in COMMANDS.items():
        module = _command_module(name)
        cmd_parser = sub.add_parser(name, help=help_text,
                                    description=os.environ.get(DESCRIPTION_ENV) or module.__doc__,
                                    epilog=errors.help_epilog(), formatter_class=_Formatter,
                                    prog=prog or f"patchcarry {name}")  # fmt: skip
        module.add_arguments(cmd_parser)
        # argparse has no public way to list a parser's options (private: _option_string_actions)
        flag = cmd_parser._option_string_actions.get("--json")
        cmd_parser.json_errors = json_errors and flag is not None and flag.nargs == 0
        commands[name] = cmd_parser
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, commands = build_parser(os.environ.pop(PROG_ENV, None), json_errors="--json" in argv)
    os.environ.pop(DESCRIPTION_ENV, None)  # the shim's, not its children's
    args, extra = parser.parse_known_args(argv)
    command = commands[args.command]
    if extra:  # argparse would print the top-level usage; the command's is the useful one
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    options = frozenset(command._option_string_actions)  # argparse: no public list (above)
    json_out = getattr(args, "json", None) is True
    progress.quiet = json_out
    if args.command != "help":  # reading about the log keeps the log
        trace.start(["patchcarry", *argv])
        from patchcarry import git  # here: `help` alone runs no git and need not import it

        git.forget_run_memos()  # nothing a run remembers about repositories outlives it
    try:
        with error_handler(options, json_out=json_out, usage=command.format_usage()) as result:
            result.code = int(_command_module(args.command).run(args))
            sys.stdout.flush()  # a closed pipe is met here, not at exit (the handler ends quietly)
    finally:
        trace.stop()
    return result.code


if __name__ == "__main__":
    raise SystemExit(main())
