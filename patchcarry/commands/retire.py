"""Retire an entry whose fix has landed upstream: `check` must find it landed (the commit,
its PR, the evidence); the manifest then records where and when (`landed = {...}` in the
entry) and no command carries it any more, while the entry and its patches stay as the
record. --comment posts one comment on the entry's open PR pointing at the landing commit.
Exit 0 when retired (or, with --dry-run, when it would be), 1 when it has not landed.
"""

from __future__ import annotations

import argparse

from patchcarry.commands import argtypes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry", metavar="ENTRY", help="the entry to retire")
    argtypes.add_manifest(parser)
    argtypes.add_upstream(parser)
    argtypes.add_work_dir(parser)
    switches = (
        ("--dry-run", "check and say; write nothing"),
        ("--comment", "post one comment on the entry's open PR pointing at the landing commit "
         "(needs a token)"),
        ("--moot", "retire a superseded fix (its code was rewritten upstream) you judged no "
         "longer needed"),
    )  # fmt: skip
    for flag, what in switches:
        parser.add_argument(flag, action="store_true", help=what)


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest, tokens
    from patchcarry.display import escape
    from patchcarry.github import GitHub
    from patchcarry.retire import Options, retire
    from patchcarry.upstream import url_for_entries

    path = manifest.find(args.manifest)
    manifest.check_writable(path)
    (entry,) = manifest.load(path).select([args.entry])
    opts = Options(path, args.upstream or url_for_entries([entry]), args.work_dir, args.dry_run,
                   args.comment, args.moot)  # fmt: skip

    def make_github() -> GitHub | None:
        token = tokens.token()
        return GitHub(token=token) if token else None

    return retire(entry, opts, make_github, lambda text: print(escape(text)))
