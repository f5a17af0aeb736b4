"""display.escape: outside text printed with its control characters visible."""

from __future__ import annotations

import pytest

from patchcarry.display import escape, line


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),  # clear screen
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # OSC: set the terminal's title
        ("\x9b31m", "\\x9b31m"),  # C1 CSI
        ("ok\rforged", "ok\\x0dforged"),  # CR overwrites the line
        ("a\u202eb", "a\\u202eb"),  # bidi override
        ("Łukasz Żółtowski 张伟", "Łukasz Żółtowski 张伟"),
        ("two\nlines\tkept", "two\nlines\tkept"),
    ],
)
def test_escape(text, shown):
    assert escape(text) == shown


def test_line_also_shows_newlines():
    assert line("subject\nInjected: line") == "subject\\nInjected: line"


def test_a_byte_git_printed_that_is_not_utf8_is_shown_as_its_byte():
    """git's output is read with surrogateescape: `caf\\xe9` (Latin-1) shows as that byte;
    a lone surrogate from JSON stays `\\uNNNN`."""
    assert escape(b"caf\xe9".decode("utf-8", "surrogateescape")) == "caf\\xe9"
    assert line("a\ud800b") == "a\\ud800b"


def test_fit_wraps_long_lines_at_spaces_and_keeps_every_word():
    from patchcarry.display import fit

    long = "    1. git push " + " ".join(f"word{i}" for i in range(60))
    shown = fit(f"head\n{long}\n  short", 40)
    lines = shown.splitlines()
    assert lines[0] == "head" and lines[-1] == "  short"
    assert all(len(line) <= 40 for line in lines)
    assert lines[2].startswith("        word")  # four past the line's own indent
    assert shown.split() == f"head\n{long}\n  short".split()
    assert fit("x" * 50, 40) == "x" * 50  # a word longer than the width stays whole


def test_the_default_dry_run_plan_fits_120_columns(capsys):
    """The main job (`resubmit --dry-run --offline` on the embedded default): no line of its
    plan is wider than 120 columns (its write lines reached 324)."""
    from patchcarry import cli

    assert cli.main(["resubmit", "--dry-run", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "would write:" in out and "PATCH /repos/NVIDIA/Megatron-LM/pulls/6339" in out
    assert max(len(line) for line in out.splitlines()) <= 120
