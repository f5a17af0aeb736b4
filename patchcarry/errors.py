"""Errors the user can act on and their exit codes: `CODES`, the one table of codes."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of every command; their meanings are `CODES`."""

    OK = 0
    FAILED = 1  # a check failed (patch does not apply) or an action was refused
    USAGE = 2  # bad command line (argparse's own code)
    UNEXPECTED = 3  # a bug: traceback logged
    NETWORK = 4  # a network read of upstream or GitHub failed (git or the API), or a ref is gone
    BAD_INPUT = 5  # bad input file, unsafe input, or a missing install extra / tree
    GITHUB = 6  # the GitHub API answered with a refusal or an error
    INTERRUPTED = 130


# code -> what it means; docs/exit-codes.md's table and `patchcarry help exit-codes` are
# generated from it (tests/test_exit_codes.py holds them to it).
CODES: dict[int, str] = {
    ExitCode.OK: "success (all patches apply; PR created / refreshed / unchanged; plan printed)",
    ExitCode.FAILED: "a check failed (a patch does not apply) or an action was refused "
    "(maintainer-closed PR, detached fork or a closer that cannot be told, lease rejected, a "
    "push GitHub refused (its reason quoted), a token whose kind or scopes cannot finish the "
    "run or that is not the fork owner's, a branch another entry published, a commit that could "
    "not carry its author's sign-off, a PR on the fork's branch that someone other than the "
    "token's user opened, a PR whose change has landed upstream since (`adopt`), a fix `check` "
    "does not find landed (`retire`; a superseded one without --moot)); refusals come before "
    "the first write. A fix that landed upstream is not a failure: `check` exits 0 for it",
    ExitCode.USAGE: "bad command line (the command's usage is printed): an unknown option, a "
    "missing argument, options that do not go together, a PR or repository that is not "
    "OWNER/REPO#N or OWNER/REPO, `scan` with neither a token nor --author, `retire --comment` "
    "without a token",
    ExitCode.UNEXPECTED: "unexpected failure (a bug; traceback printed)",
    ExitCode.NETWORK: "a network read failed: upstream or GitHub unreachable or the connection "
    "dropped (by git or the API, a lazy blob fetch included), an answer past its deadline or "
    "size cap, decoded size included (a stalled, dripping, endless or compressed-bomb server; "
    "the host is named), a git call whose process tree passed its cap of processes or memory (a "
    "chain of lazy fetches, a transport holding an endless ref list), an answer that is not the "
    "JSON it says (cut short, nested past what a reader recurses into), or a ref or commit "
    "missing upstream; nothing was judged from it; re-run (`--offline` where the command has it)",
    ExitCode.BAD_INPUT: "bad or unsafe input: a malformed patch or manifest, an ENTRY the "
    "manifest does not hold or has retired (`landed = {...}`); a patch path outside the entry's "
    "`paths` (default `megatron/**`, `tests/**`), a workflow file or another file upstream's "
    "CI, forge or git obeys (`.github/**` in any case, CODEOWNERS, `.gitattributes`, "
    "`.gitmodules`, GitLab's CI); a file other tools upstream runs obey (a dev container, "
    "`.lfsconfig`, `.vscode/`, pre-commit's config, other CIs) that the entry's `paths` does "
    "not name itself; a symlink, submodule, mode change (a delete and a create of one path "
    "included), rename or binary patch (as `git apply` reads it, and as the tree's own modes "
    "say), a NUL or non-UTF-8 bytes added to a UTF-8 file in a text hunk; a patch over 8 MiB; a "
    "diff section git would apply outside the patch's own `diff --git` sections, a section "
    "whose `---`/`+++` names disagree with its header, or a message line git reads as the start "
    "of a diff; no `From:` or author `Signed-off-by:`; a patch converted to CRLF or a non-UTF-8 "
    "header or message; an input file that cannot be read as what it must be (missing, a "
    "directory, not UTF-8, not JSON); a manifest's repository that is not OWNER/REPO; two "
    "entries on one fork branch; a URL or `GH_HOST` that is not a valid URL (a malformed IPv6 "
    "host); `GH_HOST=http://` to a non-loopback host; credentials in `GH_HOST`; a proxy setting "
    "(`https_proxy`, ...) the API client cannot use (SOCKS, ftp, not a URL); a `clone_url` (or "
    "a created fork) in an API answer that is not the host's own URL for that OWNER/NAME; "
    "credentials in an `--upstream` URL (with `--offline` too); a `--work-dir` this tool did "
    "not make; a recorded `pr` that does not exist (the manifest line is named); a token "
    "variable whose value no token has (a space, a newline, non-ASCII: the variable is named); "
    "an `adopt` name clash, a PR already carried or a PR title GitHub gives with a lone "
    "surrogate; a write to the manifest embedded in an installed package; a missing input file "
    "(`--evidence`); a destination that exists; an install that lacks what the command needs "
    "(the `proof` extra, a Megatron tree, a CUDA GPU for `measure --harness pretrain`: the "
    "message says how to get it)",
    ExitCode.GITHUB: "the GitHub API refused or failed a request (bad credentials, permissions, "
    "rate limit or secondary rate limit beyond `--max-rate-wait`, 4xx/5xx, a list longer than "
    "the paging cap, an answer not of the documented shape: the request and field named)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C), or the reader of its output went away (a pipe "
    "`head` closed: it ends quietly)",
}


class FatalError(RuntimeError):
    """A failure the user can fix; the message says what to do next."""

    exit_code: ExitCode = ExitCode.FAILED


class UsageError(FatalError):
    """The command line asks for something the command cannot do as given."""

    exit_code = ExitCode.USAGE


class UpstreamError(FatalError):
    """Upstream could not be reached, or a ref or commit is missing there."""

    exit_code = ExitCode.NETWORK


class NetworkError(UpstreamError):
    """A network read of upstream or GitHub (by git or the API) failed: re-run."""


class BadInputError(FatalError):
    """The manifest or a patch file is malformed, or an input is unsafe or missing."""

    exit_code = ExitCode.BAD_INPUT


class MissingInstallError(BadInputError):
    """This install lacks what the command needs (an extra, a Megatron tree)."""


class GitHubError(FatalError):
    """The GitHub API refused or failed a request."""

    exit_code = ExitCode.GITHUB


class GitReadError(FatalError):
    """A git read failed (e.g. a lazy blob fetch): the result is unknown, not "absent"."""

    exit_code = ExitCode.NETWORK


# code -> a few words: the line every --help ends with (the whole table is a help topic).
SHORT: dict[int, str] = dict(zip(ExitCode, (
    "ok", "failed/refused", "usage", "bug", "network", "bad input", "GitHub API", "interrupted",
), strict=True))  # fmt: skip


def help_epilog() -> str:
    """The two lines every --help ends with: each code in a word, and where the table is."""
    *first, last = (f"{code} {SHORT[code]}" for code in CODES)
    return f"exit codes: {', '.join(first)},\n{last}; what each means: patchcarry help exit-codes"


def help_table() -> str:
    """`patchcarry help exit-codes`: every code and what it means, wrapped for a terminal."""
    import textwrap

    from patchcarry.display import columns

    lines = ["Exit codes of every patchcarry command:", ""]
    for code, meaning in CODES.items():
        text = meaning.replace("`", "")
        lines += textwrap.wrap(text, width=columns(96), initial_indent=f"  {code:<4}",
                               subsequent_indent="      ")  # fmt: skip
    return "\n".join(lines)


def docs_table() -> str:
    """docs/exit-codes.md's table."""
    rows = ["| code | meaning |", "| --- | --- |"]
    rows += [f"| {code} | {meaning} |" for code, meaning in CODES.items()]
    return "\n".join(rows)
