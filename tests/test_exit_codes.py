"""One table of exit codes: errors.CODES is docs/exit-codes.md's table and the help topic
`patchcarry help exit-codes`; every --help fits a screen and ends with the codes in a word
each; one failure of each code, run through the real commands, ends with it in one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchcarry import cli, errors
from testing import exit_cases

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_table_and_the_help_topic_are_the_mapping(capsys) -> None:
    text = (ROOT / "docs" / "exit-codes.md").read_text()
    assert errors.docs_table() in text, (
        "docs/exit-codes.md's table differs from patchcarry.errors.CODES: paste "
        "`python -c 'from patchcarry import errors; print(errors.docs_table())'`"
    )
    assert cli.main(["help", "exit-codes"]) == 0
    shown = capsys.readouterr().out
    assert shown.rstrip() == errors.help_table()
    for code in errors.CODES:
        assert f"\n  {code:<4}" in shown


def test_every_error_class_maps_to_a_documented_code() -> None:
    classes = [errors.FatalError, *errors.FatalError.__subclasses__()]
    for cls in classes:
        for sub in [cls, *cls.__subclasses__()]:
            assert sub.exit_code in errors.CODES, sub
    assert errors.NetworkError.exit_code == errors.GitReadError.exit_code == 4
    assert errors.UsageError.exit_code == 2 and errors.MissingInstallError.exit_code == 5


@pytest.mark.parametrize("command", [None, *cli.COMMANDS])
def test_every_help_fits_a_screen_and_names_the_codes_topic(
    command, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # laid out for its own width (a pipe's)
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"] if command else ["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: patchcarry {command or ''}".rstrip())
    assert len(out.splitlines()) <= 40, f"{command} --help is {len(out.splitlines())} lines"
    assert out.rstrip().endswith(errors.help_epilog())
    assert "patchcarry help exit-codes" in out and "| 5 |" not in out
    assert "the only module" not in out and "argparse dispatch" not in out
    assert "this was --" not in out  # no changelog notes


def test_scan_is_the_first_command_listed(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    block = capsys.readouterr().out.split("COMMAND\n", 1)[1].split("\n\n")[0]
    listed = [
        line.split()[0] for line in block.splitlines() if line.startswith("    ") and line[4] != " "
    ]
    assert listed[:3] == ["scan", "adopt", "check"] and listed[-1] == "help"


def test_a_typo_prints_the_commands_usage(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["resubmit", "--dry-rn"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: patchcarry resubmit") and "--dry-rn" in err


def test_one_failure_of_each_code_from_the_checkout(tmp_path, fake_github) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    found = exit_cases.cases(tmp_path, fake_github.url)
    assert {c.code for c in found} == set(errors.CODES) - {0, 3, 130}
    for case in found:
        err = exit_cases.run([sys.executable], case, cwd=tmp_path, env=env)
        if case.env.get("PYTHONPATH"):  # a checkout says how a checkout gets it
            assert "scripts/bootstrap" in err
    # the unreachable upstream left no empty cache behind
    assert not list((tmp_path / "cache").glob("patchcarry/upstream/*"))


def _snapshot(*roots: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under `roots`, Python's bytecode caches aside."""
    seen: dict[str, tuple[int, int]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".git")]
            for name in filenames:
                path = Path(dirpath) / name
                stat = path.lstat()
                seen[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return seen


SHIMS = ["adopt", "audit", "audit-sweep", "audit-walk-bench", "bootstrap", "check", "check-bench",
         "demo-adopt", "demo-dry-run", "device-gpu-check", "gpu-check", "lock", "measure",
         "measure-bootstrap", "patch-parse-bench", "render-docs", "resubmit.sh", "retire", "scan",
         "test", "time-clean-clone", "tree"]  # fmt: skip


def test_every_script_help_is_its_own_and_changes_nothing() -> None:
    """Each shim's --help names the shim and installs or writes nothing; a shim that does more
    than its command says what it does: audit-sweep runs `audit --sweep` with its own outputs,
    its --help describes the sweep, not the audit command it passes its options to."""
    assert sorted(p.name for p in (ROOT / "scripts").iterdir() if p.is_file()) == sorted(SHIMS)
    before = _snapshot(ROOT)
    helps = {}
    for name in SHIMS:
        done = subprocess.run(
            [ROOT / "scripts" / name, "--help"], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (name, done.stderr)
        head = done.stdout.splitlines()[0]
        assert head.startswith((f"usage: scripts/{name}", f"scripts/{name}")), (name, head)
        assert "bootstrap:" not in done.stderr, name  # nothing installed
        helps[name] = done.stdout
    assert _snapshot(ROOT) == before
    assert "The retention audit over every configuration" in helps["audit-sweep"]
    assert "The retention audit over every configuration" not in helps["audit"]


def test_offline_says_which_given_option_it_ignores(tmp_path, capsys) -> None:
    assert cli.main(["check", "--offline", "--upstream", str(tmp_path / "nowhere")]) == 0
    assert f"--upstream {tmp_path / 'nowhere'} is ignored with --offline" in capsys.readouterr().err
    assert cli.main(["resubmit", "--offline", "--dry-run", "--upstream-url", "x.git"]) == 0
    assert "--upstream-url x.git is ignored with --offline" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["scan", "--upstream", "htesd/..", "--author", "someone"],
        ["adopt", "foo"],
        ["adopt", "acme/widgets#x"],
        ["adopt", "acme/widgets#7", "--fork", "htesd"],
        ["resubmit", "--dry-run", "--upstream", "a/b/c"],
    ],
)
def test_a_malformed_pr_or_repository_on_the_command_line_is_a_usage_mistake(capsys, argv) -> None:
    """Exit 2 with the command's usage, as every other command-line mistake; nothing read."""
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith(f"usage: patchcarry {argv[0]}")
    assert "OWNER/REPO" in err.splitlines()[-1]


def test_check_offline_needs_no_single_upstream_url(tmp_path, capsys) -> None:
    """--offline reads no upstream, so entries on two repositories are no error there."""
    from testing.upstream_repos import write_manifest

    path = write_manifest(
        tmp_path, base_commit="0" * 40,
        overrides={"hc-mlp-norm-manager": {"upstream": "acme/widgets"}},
    )  # fmt: skip
    assert cli.main(["check", "--offline", "--manifest", str(path)]) == 0


@pytest.mark.parametrize("argv", [["help", "exit-codes"], ["--help"], ["check", "--help"]])
def test_a_closed_pipe_ends_quietly(argv) -> None:
    """`patchcarry help exit-codes | head -1`: the reader is gone before the output is
    written. No traceback, nothing on stderr (not even Python's "Exception ignored" at exit);
    the documented code for an output nobody reads any more."""
    read, write = os.pipe()
    os.close(read)  # the reader left: every write to the pipe fails (EPIPE)
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-m", "patchcarry", *argv], stdout=write,
            stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT,
        )  # fmt: skip
    finally:
        os.close(write)
    assert done.stderr == ""
    assert done.returncode in (0, errors.ExitCode.INTERRUPTED)


def test_help_without_a_topic_lists_the_topics(capsys) -> None:
    from patchcarry.commands import help as help_command

    assert cli.main(["help"]) == 0
    out = capsys.readouterr().out
    for topic in help_command.TOPICS:
        assert f"\n  {topic} " in out
    assert "patchcarry help TOPIC" in out


def _too_wide(text: str, width: int) -> list[str]:
    """The lines of `text` wider than `width` that could have been wrapped (more than one
    word: a long URL or option stays whole)."""
    return [row for row in text.splitlines() if len(row) > width and " " in row.strip()]


@pytest.mark.parametrize("width", [60, 80])
def test_help_tables_plans_and_usage_errors_fit_columns(width, capsys, monkeypatch) -> None:
    """COLUMNS (else the terminal's width) is what help, the exit-code table, check's table,
    resubmit's plan and a usage error are laid out for."""
    monkeypatch.setenv("COLUMNS", str(width))
    for argv in [[], *([c] for c in cli.COMMANDS)]:
        with pytest.raises(SystemExit):
            cli.main([*argv, "--help"])
        out = capsys.readouterr().out
        assert _too_wide(out, width) == [], argv
    for argv in (
        ["help", "exit-codes"],
        ["check", "--offline"],
        ["resubmit", "--dry-run", "--offline"],
    ):
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert _too_wide(out, width) == [], argv
    with pytest.raises(SystemExit):
        cli.main(["resubmit", "--dry-rn", "--and-a-few-more-unknown-options", "--to-make-it-long"])
    err = capsys.readouterr().err
    assert "error: unrecognized arguments" in err and _too_wide(err, width) == []
