"""Command-line values checked as argparse reads them, by their owners' checks: a malformed
one is a usage mistake (exit 2, the command's usage printed), like any other on the line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from patchcarry.errors import BadInputError


def repo(text: str) -> str:
    """`OWNER/REPO` (`manifest.check_repo`'s rule)."""
    from patchcarry import manifest

    try:
        return manifest.check_repo(text, "the value")
    except BadInputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("the value ")) from None


def pull(text: str) -> str:
    """`OWNER/REPO#N` (`adopt.pull.parse_target`'s rule); the text, parsed again by its user."""
    from patchcarry.adopt import pull as pull_mod

    try:
        pull_mod.parse_target(text)
    except BadInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_manifest(
    parser: argparse.ArgumentParser,
    default: str = "patches/series.toml here or above, else $XDG_CONFIG_HOME's",
) -> None:
    """`--manifest`, one meaning everywhere (`manifest.find` decides the default)."""
    parser.add_argument("--manifest", type=Path, metavar="PATH", help=f"default: {default}")


def add_upstream(
    parser: argparse.ArgumentParser, default: str | None = None,
    when: str = "default: the entries' `upstream` on GH_HOST",
) -> None:  # fmt: skip
    """`--upstream`: where upstream's git is (OWNER/NAME is `--upstream-repo`)."""
    parser.add_argument("--upstream", metavar="URL|PATH", default=default,
                        help=f"upstream's git URL or path ({when})")  # fmt: skip


def add_work_dir(parser: argparse.ArgumentParser) -> None:
    """`--work-dir`: the check's cache repo, one option for every command that fetches."""
    parser.add_argument("--work-dir",
                        type=Path,
                        help="scratch repo for the partial fetch "
                        "(default $XDG_CACHE_HOME/patchcarry/upstream/<hash>)")  # fmt: skip


def refuse_url(value: str | None, flag: str, *, offline: bool = False) -> None:
    """A URL with credentials is refused even unused (it would be printed); `offline` says so."""
    if value is None:
        return
    from patchcarry import hosts

    hosts.refuse_url_credentials(value, flag)
    if offline:
        print(f"note: {flag} {value} is ignored with --offline", file=sys.stderr)


class _OldUpstream(argparse.Action):
    """`--upstream`: a git URL or an existing path, as in every command that fetches (to
    `--upstream-url` where the command has one); else its old meaning here, OWNER/NAME, kept
    for one release (a malformed one is refused as before)."""

    def __init__(self, *args: Any, url: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.url = url

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
        values: str | Sequence[Any] | None, _option_string: str | None = None,
    ) -> None:  # fmt: skip
        value = str(values)
        if self.url and ("://" in value or Path(value).exists()):  # a URL, or a path git can read
            namespace.upstream_url = value
            return
        try:
            named = repo(value)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --upstream: {exc}")
        print("note: --upstream is deprecated here for OWNER/NAME and goes in the next release; "
              "use --upstream-repo", file=sys.stderr)  # fmt: skip
        namespace.upstream_repo = named


def add_upstream_repo(parser: argparse.ArgumentParser, what: str, *, url: bool = False) -> None:
    """`--upstream-repo OWNER/NAME`, and `--upstream`: with `url` (the command has
    `--upstream-url`) a URL or path goes there; OWNER/NAME still works, with a note."""
    parser.add_argument("--upstream-repo", metavar="OWNER/NAME", type=repo, help=what)
    parser.add_argument("--upstream", action=_OldUpstream, url=url, dest="upstream_repo",
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)  # fmt: skip
