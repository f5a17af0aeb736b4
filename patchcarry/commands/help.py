"""Reference that does not fit a command's --help: `patchcarry help TOPIC` prints it.

Topics: exit-codes (what every exit code means), environment (the variables the commands
read: tokens, GH_HOST, caches), log (the record of the last run's git commands and requests).
"""

from __future__ import annotations

import argparse


def _environment() -> str:
    from patchcarry import tokens, trace

    return "\n".join(
        ["Variables patchcarry reads:", "",
         *(f"  {name:<24}{what}" for name, what in tokens.DOCUMENTED),
         "  GH_HOST                 the API host: a full URL (ghapi's convention) or a",
         "                          hostname (github.com, <tenant>.ghe.com, Enterprise Server)",
         "  XDG_CACHE_HOME          caches (default ~/.cache): patchcarry/upstream, the run log",
         f"                          ({trace.log_path()})",
         "  XDG_CONFIG_HOME         a manifest of your own: patchcarry/series.toml there",
         "  MEGATRON_SRC            an upstream Megatron-LM tree (measure, audit, gpu-check)",
         "",
         "No token reaches a child process other than git's own push and fork reads, and none",
         "is printed, logged or written."]
    )  # fmt: skip


def _log() -> str:
    from patchcarry import trace

    return ("Every command records each git command it ran and each GitHub request it sent\n"
            "(method, path, status; never the token), rewritten at each run, in\n"
            f"  {trace.log_path()}\n"
            "An error message names it: attach it to a bug report.")  # fmt: skip


# topic -> what it tells, the list `patchcarry help` prints without a topic
ABOUT = {"exit-codes": "what every exit code means",
         "environment": "the variables the commands read: tokens, GH_HOST, caches",
         "log": "the record of the last run's git commands and GitHub requests"}  # fmt: skip
TOPICS = tuple(ABOUT)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", nargs="?", choices=TOPICS, metavar="TOPIC",
                        help=f"{', '.join(TOPICS)} (without one: the list of topics)")  # fmt: skip


def _topics() -> str:
    return "\n".join(
        ["Help topics (patchcarry help TOPIC):",
         *(f"  {name:<14}{what}" for name, what in ABOUT.items()),
         "Each command's own: patchcarry COMMAND --help"]
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from patchcarry import errors

    if args.topic is None:
        print(_topics())
    elif args.topic == "exit-codes":
        print(errors.help_table())
    elif args.topic == "environment":
        print(_environment())
    else:
        print(_log())
    return 0
