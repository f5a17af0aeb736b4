"""Patches carry only what the manifest says: safe paths, text edits, author and DCO sign-off,
UTF-8 with LF. Refused at parse time (exit 5 at `check`, so before any resubmit write)."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

import pytest

from patchcarry import cli, patchrules
from patchcarry.check import judge
from patchcarry.errors import BadInputError
from patchcarry.patchfile import load, parse
from testing.patch_corpus import SMUGGLED
from testing.upstream_repos import FIX_0001, write_manifest

REAL = FIX_0001.read_text()
BASE = "c76ff610bfa064d4af3035daa594d8c41ca7fce6"


RENAME = (
    "diff --git a/megatron/a/old.py b/megatron/b/new.py\nsimilarity index 100%\n"
    "rename from megatron/a/old.py\nrename to megatron/b/new.py\n"
)
BINARY = (
    "diff --git a/megatron/m.bin b/megatron/m.bin\nnew file mode 100644\n"
    "index 0000000..1111111\nBinary files /dev/null and b/megatron/m.bin differ\n"
)


def _new_file(path: str, mode: str = "100644", body: str = "+x") -> str:
    """REAL with one more file added after its diff (a new file `path`)."""
    extra = (
        f"diff --git a/{path} b/{path}\nnew file mode {mode}\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n{body}\n"
    )
    return REAL.replace("\n-- \n", f"\n{extra}-- \n", 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_new_file("../../x.py"), "refusing path '../../x.py'"),
        (_new_file("/etc/x"), "refusing path '/etc/x'"),
        (_new_file("a/./b.py"), "refusing path"),
        (_new_file(".git/hooks/post-checkout"), "refusing path '.git/hooks"),
        (_new_file("megatron/link", mode="120000", body="+/etc/passwd"), "is a symlink"),
        (_new_file(".github/workflows/x.yml"), "GitHub Actions workflow"),
        (_new_file(".GitHub/Workflows/x.yml"), "GitHub Actions workflow"),  # case-insensitive FS
        (
            REAL.replace("\n-- \n", f"\n{RENAME}-- \n", 1),
            "rename of megatron/a/old.py to megatron/b/new.py: renames refused",
        ),
        (REAL.replace("index ", "old mode 100644\nnew mode 100755\nindex ", 1), "file mode"),
        (REAL.replace("\n-- \n", f"\n{BINARY}-- \n", 1), "binary data"),
        ("\n".join(ln for ln in REAL.split("\n") if not ln.startswith("From: ")), "no `From:`"),
        (
            "\n".join(ln for ln in REAL.split("\n") if not ln.startswith("Signed-off-by:")),
            "no `Signed-off-by:`.*DCO",
        ),
        (re.sub(r"(?m)^Signed-off-by: .*$", "Signed-off-by: O <o@x.invalid>", REAL), "DCO"),
        # the DCO App wants the author's name too: the same email under another name fails
        (
            re.sub(r"(?m)^Signed-off-by: .*(<[^>]+>)$", r"Signed-off-by: Someone Else \1", REAL),
            "has the email but another name",
        ),
    ],
)
def test_refused_patch_content(text, message):
    with pytest.raises(BadInputError, match=message):
        parse(text, name="bad.patch")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (REAL.replace("Subject: [PATCH]", "Subject: [PATCH] caf\u00e9").encode("latin-1"), "UTF-8"),
        (REAL.encode().replace(b"+        # Release", b"+        # Rel\0ease", 1), "NUL byte"),
        (REAL.encode().replace(b"+        # Release", b"+        # Rel\xffease", 1), "not UTF-8"),
        (
            _new_file("megatron/data.txt", body="+\udcffx").encode("utf-8", "surrogateescape"),
            "not UTF-8 to a UTF-8 file",
        ),
        (REAL.encode().replace(b"\n         ", b"\n         \0", 1), "NUL byte"),  # context
        (REAL.replace("\n", "\r\n").encode(), "CRLF"),
    ],
)
def test_refused_encodings_at_load(tmp_path, data, message):
    (tmp_path / "bad.patch").write_bytes(data)
    with pytest.raises(BadInputError, match=message):
        load(tmp_path / "bad.patch")


def test_new_regular_file_under_megatron_is_fine():
    assert "megatron/new.py" in parse(_new_file("megatron/new.py")).files


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_new_file("setup.py"), r"touches setup\.py, outside"),
        (
            _new_file(".github/workflows/x.yml"),
            r"touches \.github/workflows/x\.yml: a GitHub Actions",
        ),
        (REAL.replace("\n", "\r\n"), "CRLF"),
        (REAL.replace("Subject: [PATCH]", "Subject: [PATCH] caf\u00e9"), "UTF-8"),
        (_new_file("megatron/link", mode="120000", body="+/etc/passwd"), "symlink"),
        (REAL.replace("\n-- \n", f"\n{SMUGGLED}-- \n", 1), r"line 18: git reads 2 files"),
        (
            REAL.replace("\n\nSigned-off-by:", f"\n\n{SMUGGLED}\nSigned-off-by:", 1),
            r"\(`Index: \.github/workflows/pwn\.yml`\) is where git starts reading the diff",
        ),
    ],
)
def test_check_refuses_bad_patches_with_exit_5(tmp_path, capsys, text, message):
    manifest = write_manifest(tmp_path, base_commit=BASE)
    fix = manifest.parent / FIX_0001.name
    fix.write_bytes(text.encode("latin-1" if "UTF-8" in message else "utf-8"))
    assert cli.main(["check", "--offline", "--manifest", str(manifest), "checkpoint-grad"]) == 5
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(message, err), err


def test_apply_at_never_writes_outside_its_temp_tree(tmp_path, monkeypatch):
    """Even a Patch that skipped the parser's checks: validation, then resolve-and-contain."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    victim = tmp_path / "victim.py"
    victim.write_text("keep\r\n")
    good = load(FIX_0001)
    for path in ("../../escaped.py", str(victim)):
        hostile = dataclasses.replace(good, files=(path,))
        with pytest.raises(BadInputError, match="refus"):
            judge.apply_at([hostile], lambda _: b"print('x')\n")
    assert not (tmp_path / "escaped.py").exists()
    assert victim.read_bytes() == b"keep\r\n"
    assert Path(scratch).exists()


def test_a_signoff_matching_the_author_case_insensitively_is_accepted():
    """The DCO App compares name and email case-insensitively (dcoapp/app lib/dco.js)."""
    text = re.sub(r"(?m)^Signed-off-by: (.*)$", lambda m: f"Signed-off-by: {m[1].upper()}", REAL)
    assert parse(text, name="upper.patch").signoffs


@pytest.mark.parametrize(
    "path",
    [
        ".devcontainer/devcontainer.json", ".devcontainer/gpu/devcontainer.json",
        ".devcontainer.json", ".lfsconfig", ".vscode/tasks.json", ".vscode/launch.json",
        "megatron/.vscode/tasks.json", ".pre-commit-config.yaml", "Jenkinsfile",
        "ci/Jenkinsfile", "bitbucket-pipelines.yml", ".gitpod.yml", ".readthedocs.yaml",
        ".envrc", "megatron/.envrc", ".mailmap", ".drone.yml", ".cirrus.yml", "appveyor.yml",
        ".Pre-Commit-Config.yaml",
    ],
)  # fmt: skip
def test_a_file_upstreams_tools_obey_is_carried_only_when_paths_names_it(path):
    """Refused under any glob that covers it; carried when `paths` names the file itself."""
    assert patchrules.named_only([path, "megatron/core/x.py"], ["**", "megatron/**"]) == [path]
    assert patchrules.named_only([path], ["megatron/**", path.lower()]) == []
    with pytest.raises(BadInputError, match="names it"):
        patchrules.refuse_obeyed("e", [path], ["**"])


@pytest.mark.parametrize("path", ["Makefile", "megatron/core/devcontainer.py", "setup.cfg"])
def test_ordinary_source_is_not_a_file_tools_obey(path):
    assert patchrules.named_only([path], ["**"]) == []
