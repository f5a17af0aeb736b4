"""Errors the user can act on, and the exit code each one maps to."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of every command; documented in the README."""

    OK = 0
    FAILED = 1  # a check failed (patch does not apply) or an action was refused
    USAGE = 2  # bad command line (argparse's own code)
    UNEXPECTED = 3  # a bug: traceback logged
    UPSTREAM = 4  # upstream unreachable, or a ref/commit missing there
    BAD_INPUT = 5  # malformed patch or manifest
    GITHUB = 6  # GitHub API refused or failed (auth, rate limit, 4xx/5xx, dropped connection)
    GIT = 7  # a git read failed mid-run (e.g. a lazy blob fetch): nothing was judged from it
    INTERRUPTED = 130


class FatalError(RuntimeError):
    """A failure the user can fix; the message says what to do next."""

    exit_code: ExitCode = ExitCode.FAILED


class UpstreamError(FatalError):
    """Upstream could not be reached, or a ref or commit is missing there."""

    exit_code = ExitCode.UPSTREAM


class BadInputError(FatalError):
    """The manifest or a patch file is malformed."""

    exit_code = ExitCode.BAD_INPUT


class GitHubError(FatalError):
    """The GitHub API refused or failed a request."""

    exit_code = ExitCode.GITHUB


class GitReadError(FatalError):
    """A git read failed (e.g. a lazy blob fetch): the result is unknown, not "absent"."""

    exit_code = ExitCode.GIT
