""" "Differs only in comments" holds only when the code changes sit in the same places: the
same added line in another function, or before instead of after a line, is other code."""

from __future__ import annotations

import pytest

from patchcarry.check import judge


def _diff(*lines: str, context: str = "") -> str:
    head = f"@@ -1,4 +1,5 @@{context}"
    return "\n".join(["diff --git a/m.py b/m.py", "--- a/m.py", "+++ b/m.py", head, *lines])


A = ("def a(x):", "    x.y = 1")
B = ("def b(x):", "    x.z = 2")


@pytest.mark.parametrize(
    ("ours", "theirs", "same"),
    [
        # the same line added in another function
        (_diff(*(f" {t}" for t in A), "+    x.grad = None", *(f" {t}" for t in B)),
         _diff(*(f" {t}" for t in A), *(f" {t}" for t in B), "+    x.grad = None"), False),
        # before instead of after a line
        (_diff(" def a(x):", "+    x.grad = None", "     x.y = 1"),
         _diff(" def a(x):", "     x.y = 1", "+    x.grad = None"), False),
        # the same place, another comment (and a comment line between): the same code
        (_diff(" def a(x):", "     x.y = 1", "+    x.grad = None  # frees it"),
         _diff(" def a(x):", "     x.y = 1", "+    # the graph stays alive", "+    x.grad = None"),
         True),
        # a hunk that starts with the change: its place is the function git names
        (_diff("+    x.grad = None", "     x.y = 1", context=" def a(x):"),
         _diff("+    x.grad = None", "     x.y = 1", context=" def b(x):"), False),
    ],
)  # fmt: skip
def test_same_code_needs_the_same_places(ours, theirs, same):
    assert judge.same_code("m.py", ours, theirs) is same
