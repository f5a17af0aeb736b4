"""A cache's settings (remote, no housekeeping, network bounds) cost one git process: `git init`
from a template holding them when the cache is new, one read of its config when it is not (a
setting written only where it differs). The suite made ten `git config` calls per run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from patchcarry import git, upstream

WANTED = {
    "remote.origin.url": "http://127.0.0.1:9/o/r.git",
    **git.CACHE_CONFIG,
    "http.lowSpeedLimit": "1024",
    "http.lowSpeedTime": "60",
    "fetch.unpackLimit": "1",
}


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of every `git` the tool starts (a wrapper first on PATH)."""
    real, folder, log = shutil.which("git"), tmp_path / "bin", tmp_path / "git-calls.log"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def _verbs(log: Path) -> list[str]:
    taken = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return [line.split()[0] for line in taken]


def _local(repo: Path) -> dict[str, list[str]]:
    _, out, _ = git.git("config", "--local", "--list", "-z", cwd=repo)
    found: dict[str, list[str]] = {}
    for item in out.split("\0")[:-1]:
        key, _, value = item.partition("\n")
        found.setdefault(key, []).append(value)
    return found


def _holds(repo: Path, wanted: dict[str, str | None]) -> bool:
    have = _local(repo)
    return all(have.get(git.repo._canonical(k), []) == ([] if v is None else [v])
               for k, v in wanted.items())  # fmt: skip


def test_a_new_cache_is_one_git_init_and_a_known_one_one_read(tmp_path: Path, calls: Path) -> None:
    work = tmp_path / "wd"
    work.mkdir()
    url = (tmp_path / "up stream.git").as_uri()  # a local upstream: the uploadpack command too
    upstream._scratch_repo(url, work)
    made = [v for v in _verbs(calls) if v in ("init", "config")]
    assert made == ["init"]
    wanted = {**WANTED, "remote.origin.url": url, "remote.origin.uploadpack": git.LOCAL_UPLOAD_PACK}
    assert _holds(work, wanted)
    _verbs(calls)
    upstream._scratch_repo(url, work)
    assert [v for v in _verbs(calls) if v in ("init", "config")] == ["config"]  # the read


def test_a_known_cache_gets_only_what_differs_written(tmp_path: Path, calls: Path) -> None:
    """An older cache whose settings differ (housekeeping on, a local upstream's upload-pack
    left from another URL) is brought in line, each setting its own write, the rest untouched."""
    work = tmp_path / "wd"
    work.mkdir()
    upstream._scratch_repo((tmp_path / "u.git").as_uri(), work)
    git.git("config", "gc.auto", "1", cwd=work)
    _verbs(calls)
    upstream._scratch_repo(WANTED["remote.origin.url"], work)
    assert _verbs(calls).count("config") == 4  # the read, url, gc.auto, --unset-all uploadpack
    assert _holds(work, {**WANTED, "remote.origin.uploadpack": None})


def test_values_git_reads_back_as_written(tmp_path: Path) -> None:
    """Quotes, backslashes, `#`, `;`, spaces at either end and a newline survive the template
    (a value with a control character is written by `git config` itself)."""
    odd = {
        'remote.we "ird\\.url': 'a "b" \\c #d ;e ',
        "section.key": " padded ",
        "other.multi": "line one\nline two",
        "Mixed.CaseName": "x",
        "tab.value": "\tx ] [core]",
    }
    work = tmp_path / "bare"
    work.mkdir()
    git.init_bare(work, odd)
    assert _holds(work, odd)
    assert not (work / "hooks").exists()  # the template brings the config alone


def test_a_config_a_killed_init_left_still_gets_the_settings(tmp_path: Path) -> None:
    """git copies no template file over one already there: a `config` without a HEAD (an init
    killed half-way) is brought in line by `git config` instead."""
    work = tmp_path / "bare"
    work.mkdir()
    (work / "config").write_text("[gc]\n\tauto = 1\n")
    git.init_bare(work, WANTED)
    assert _holds(work, WANTED)


KEYS = [
    'remote.o.url = "ok"\n[core]\n\tsshCommand',  # a name that would open a section of its own
    "a]\n[core.sshCommand",  # a section that would
    "remote.a\nb.url",
    "rem ote.x.url",
    "remote.x.u_rl",
    "remote.x.1url",
    "nodot",
    ".url",
    "remote.",
    "remote..url",  # an empty subsection: git takes it
    'remote.a]b[c "d\\e #f ;g.url',
    "Sec-1.Sub.Sect.Na-me",
]


@pytest.mark.parametrize("key", KEYS)
def test_a_key_is_written_only_where_git_config_takes_it(tmp_path: Path, key: str) -> None:
    """git's own verdict on each key (`git config --file`): a key it refuses makes nothing (no
    repository, no other setting smuggled into the file); one it takes reads back."""
    taken = git.git("config", "--file", str(tmp_path / "asked"), key, "v", cwd=tmp_path,
                    check=False)[0] == 0  # fmt: skip
    work = tmp_path / "bare"
    work.mkdir()
    if not taken:
        with pytest.raises(ValueError, match="not a git config key"):
            git.init_bare(work, {key: "evil"})
        assert list(work.iterdir()) == []
        return
    git.init_bare(work, {key: "v"})
    assert git.git("config", "--get", key, cwd=work)[1] == "v\n"


def test_a_value_of_bytes_not_utf8_is_written_as_git_config_writes_it(tmp_path: Path) -> None:
    """A URL from the command line with a byte that is not UTF-8 (Python holds it as a lone
    surrogate, as it does argv) reaches the template byte for byte, as `git config` gets it."""
    value = "http://127.0.0.1:9/o/r\udcff.git"
    git.git("config", "--file", str(tmp_path / "asked"), "remote.origin.url", value, cwd=tmp_path)
    work = tmp_path / "bare"
    work.mkdir()
    git.init_bare(work, {"remote.origin.url": value})
    said = git.git_bytes("config", "--get", "remote.origin.url", cwd=work)[1]
    asked = git.git_bytes("config", "--file", "asked", "--get", "remote.origin.url", cwd=tmp_path)
    assert said == asked[1] == b"http://127.0.0.1:9/o/r\xff.git\n"


def test_a_setting_given_several_values_is_left_with_the_one_wanted(tmp_path: Path) -> None:
    """`git config KEY VALUE` refuses a key that has several values (`--add`): the cache is
    brought in line all the same, every old value replaced by the one the tool wants."""
    work = tmp_path / "wd"
    work.mkdir()
    upstream._scratch_repo(WANTED["remote.origin.url"], work)
    for key, value in (("remote.origin.url", "http://127.0.0.1:9/other.git"), ("gc.auto", "5")):
        git.git("config", "--add", key, value, cwd=work)
    upstream._scratch_repo(WANTED["remote.origin.url"], work)
    assert _holds(work, WANTED)


def test_a_known_cache_given_a_key_git_refuses_gets_no_setting_at_all(tmp_path: Path) -> None:
    """`configure` checks every key before its first write: a bad key after good ones leaves
    the config as it was (bad input writes nothing anywhere)."""
    work = tmp_path / "bare"
    work.mkdir()
    git.init_bare(work, WANTED)
    before = (work / "config").read_bytes()
    wanted = {"gc.auto": "7", "remote.origin.url": "http://127.0.0.1:9/x.git", "bad key.x": "v"}
    with pytest.raises(ValueError, match="not a git config key"):
        git.configure(work, wanted)
    assert (work / "config").read_bytes() == before
