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
