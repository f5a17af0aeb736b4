"""A marker counts only as the whole first line of a comment, as the tool writes each one: the
same marker quoted in someone's reply (`>`), in inline code or mid-line is their text, even in
the token user's own comments (issue 45). Plain values: no git, no HTTP."""

from __future__ import annotations

import pytest

from patchcarry import scan
from patchcarry.github_types import CommentRef
from patchcarry.pulls import ownership

LOGIN = "htesd"
LINK = ownership.link_marker("checkpoint-grad", 6117)


def _mine(body: str) -> list[CommentRef]:
    return [CommentRef(body, LOGIN)]


@pytest.mark.parametrize(
    "body",
    [
        f"> {LINK}\n> This PR was closed automatically\n\nThanks!",  # a quoted reply
        f"The tool left `{LINK}` here\n",  # inline code
        f"see {LINK}",  # mid-line
        f"Thanks!\n{LINK}\n",  # not where the tool writes it
    ],
    ids=["quote", "code", "mid-line", "later-line"],
)
def test_a_marker_inside_someones_text_does_not_count(body: str) -> None:
    assert not ownership.marked(_mine(body), LINK, LOGIN)
    assert not scan._cross_linked(_mine(body), LOGIN)


@pytest.mark.parametrize("end", ["\n", "\r\n"])  # GitHub stores a comment edited on the web CRLF
def test_the_comment_the_tool_wrote_counts(end: str) -> None:
    body = f"{LINK}{end}This change is re-submitted as #6339."
    assert ownership.marked(_mine(body), LINK, LOGIN)
    assert scan._cross_linked(_mine(body), LOGIN)
    assert not ownership.marked(_mine(body), ownership.link_marker("checkpoint-grad", 6017), LOGIN)
    assert not ownership.marked([CommentRef(body, "someone")], LINK, LOGIN)
