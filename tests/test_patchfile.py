"""patchfile.parse on our real patches and on malformed input."""

from __future__ import annotations

import pytest

from patchcarry.errors import BadInputError
from patchcarry.patchfile import parse
from testing.upstream_repos import FIX_0001, FIX_0003, LAYER_PY, RANDOM_PY

MINIMAL = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <a@example.invalid>
Subject: [PATCH] Do a thing
 across two lines

Signed-off-by: A U Thor <a@example.invalid>
---
diff --git a/x.py b/x.py
--- a/x.py
+++ b/x.py
@@ -10,3 +10,4 @@ def f():
 a
 b
+c
 d
SIGNATURE
2.39.5
""".replace("SIGNATURE", "-- ")  # format-patch's signature separator has a trailing space


def test_real_patches_parse():
    one = parse(FIX_0001.read_text(), name=FIX_0001.name)
    assert one.subject == "Clear detached-input .grad after CheckpointFunction.backward collects it"
    assert one.author.startswith("yulin li")
    [hunk] = one.hunks
    assert (hunk.path, hunk.old_start, hunk.old_len, hunk.new_len) == (RANDOM_PY, 632, 6, 15)
    assert hunk.old_range == range(632, 638)
    three = parse(FIX_0003.read_text())
    assert three.files == (LAYER_PY,) and three.hunks[0].old_start == 2303


def test_the_author_identity_is_parsed_once_with_the_patch():
    patch = parse(MINIMAL)
    assert (patch.author_name, patch.author_email) == ("A U Thor", "a@example.invalid")


def test_minimal_patch_fields_and_changed_lines():
    patch = parse(MINIMAL)
    assert patch.subject == "Do a thing across two lines"
    [hunk] = patch.hunks
    assert hunk.lines == (" a", " b", "+c", " d")  # the signature trailer is not hunk text
    assert hunk.changed_old_lines() == {11, 12}  # inserted between old lines 11 and 12
    assert parse(MINIMAL).files == ("x.py",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just some text\n", "not `git format-patch` output"),
        (MINIMAL.replace("Subject: [PATCH] Do a thing\n", ""), "not `git format-patch` output"),
        (MINIMAL.split("---\n", 1)[0], "contains no `diff --git` section"),
        (
            MINIMAL.replace("@@ -10,3 +10,4 @@", "@@ -10,3 +10,5 @@"),
            "section at line 8: git cannot read it .*corrupt patch",
        ),
        (MINIMAL.replace("@@ -10,3 +10,4 @@", "@@ -ten +10 @@"), "git cannot read it"),
        (MINIMAL.replace("From: A U Thor <a@example.invalid>", "From: A U Thor"), "From:"),
        (
            MINIMAL.replace("A U Thor", "A" * 61),
            "not `Name <email>` as git reads it .*record the author as a@example.invalid",
        ),
    ],
)
def test_malformed_inputs(text, message):
    with pytest.raises(BadInputError, match=message):
        parse(text, name="bad.patch")
