"""The command layer turns the command line into plain typed values: below it no module reads
argparse's namespace, so an option is renamed or re-typed in `commands/` alone (issue 45)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from patchcarry import cli
from testing.package_source import nodes

PACKAGE = Path(__file__).resolve().parent.parent / "patchcarry"
ABOVE = {"cli.py"}  # the dispatcher, above the commands


def _program(tree: ast.Module) -> bool:
    """A module run as its own process (`python -m ...`): its `main` is its own command line."""
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)


def _findings(source: str) -> list[str]:
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and not _program(tree):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if "argparse" in names:
                found.append(f"{node.lineno}: imports argparse")
        if isinstance(node, ast.Name | ast.Attribute | ast.alias) and "Namespace" in (
            getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", "")
        ):
            found.append(f"{node.lineno}: names argparse's Namespace")
    return found


def _below() -> list[Path]:
    return [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.relative_to(PACKAGE).parts[0] != "commands" and p.name not in ABOVE
    ]


def test_nothing_below_the_commands_reads_argparse() -> None:
    found = [
        f"{p.relative_to(PACKAGE)}:{hit}" for p in _below() for hit in _findings(p.read_text())
    ]
    assert found == []


def test_below_the_commands_a_forge_is_the_forge_protocol() -> None:
    """Only the command layer makes the GitHub client: below it code takes `github_types.Forge`,
    so another forge is a new door, not edited callers."""
    found = [
        f"{p.relative_to(PACKAGE)}:{node.lineno}"
        for p in _below()
        for node in nodes(p)
        if (isinstance(node, ast.alias) and node.name == "GitHub")
        or (isinstance(node, ast.Attribute) and node.attr == "GitHub")
    ]
    assert found == []


def test_the_check_sees_a_namespace_handed_down() -> None:
    assert _findings("import argparse\ndef run(args: argparse.Namespace) -> int: ...\n")
    assert _findings("from argparse import Namespace\nOptions = Namespace\n")
    program = "import argparse\nif __name__ == '__main__':\n    argparse.ArgumentParser()\n"
    assert _findings(program) == []


@pytest.mark.parametrize("command", ["resubmit", "scan"])
def test_upstream_as_owner_name_is_upstream_repo_and_the_old_spelling_still_works(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--upstream` is a git URL or path in check, tree, retire, audit, measure and gpu-check;
    OWNER/NAME is `--upstream-repo`. The old spelling keeps working one release, with a note."""
    parser, commands = cli.build_parser()
    new = parser.parse_args([command, "--upstream-repo", "acme/widgets"])
    assert new.upstream_repo == "acme/widgets" and capsys.readouterr().err == ""
    old = parser.parse_args([command, "--upstream", "acme/widgets"])
    assert old.upstream_repo == "acme/widgets" and "upstream" not in vars(old)
    note = capsys.readouterr().err.splitlines()
    assert len(note) == 1 and "--upstream is deprecated" in note[0] and "--upstream-repo" in note[0]
    assert parser.parse_args([command]).upstream_repo is None
    shown = commands[command].format_help()
    assert "--upstream-repo OWNER/NAME" in shown and "--upstream " not in shown


def test_upstream_as_a_url_means_what_it_means_everywhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """resubmit takes `--upstream URL` as its `--upstream-url` (the option's one meaning);
    scan, which fetches nothing by URL, refuses it in one line asking for OWNER/REPO."""
    parser, _ = cli.build_parser()
    url = "https://git.example/acme/widgets.git"
    args = parser.parse_args(["resubmit", "--upstream", url])
    assert args.upstream_url == url and args.upstream_repo is None
    assert capsys.readouterr().err == ""
    here = str(Path(__file__).parent)  # a path that exists, as a mirror's would
    assert parser.parse_args(["resubmit", "--upstream", here]).upstream_url == here
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["scan", "--upstream", url])
    said = capsys.readouterr().err.splitlines()
    assert exit_.value.code == 2 and "OWNER/REPO" in said[-1] and url in said[-1]


def test_copy_pr_bot_s_words_are_spelled_in_ci_gate_alone() -> None:
    """The bot's comment and branch, written in one module: a second spelling drifts."""
    spelled = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if any(
            isinstance(n, ast.Constant | ast.JoinedStr)
            and any(w in ast.unparse(n) for w in ("/ok to test", "pull-request/"))
            for n in nodes(p)
        )
    )
    assert spelled == ["resubmit/ci_gate.py"]


def test_resubmit_s_evidence_rides_as_a_path_and_is_rendered_after_the_check() -> None:
    """The command checks the file; observe renders each entry's impact once the check has
    run, so no rendered Markdown travels in the options."""
    import dataclasses

    from patchcarry.resubmit import model, observe

    fields = {f.name for f in dataclasses.fields(model.Options)}
    assert {"evidence", "example"} <= fields and "impacts" not in fields
    assert "impact" in {f.name for f in dataclasses.fields(observe.Observed)}
    command = (PACKAGE / "commands" / "resubmit.py").read_text()
    assert "measured_impact" not in command and "for_entries" not in command
