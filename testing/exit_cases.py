"""One failure of each documented exit code (patchcarry.errors.CODES), as a user meets it:
a command line, an environment, the code it must end with. tests/test_exit_codes.py runs
them from the checkout; tests/test_layout.py from a plain `pip install`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from patchcarry import install

ROOT = Path(__file__).resolve().parent.parent
DEAD = "http://127.0.0.1:9"  # the discard port: nothing answers there

# Python with megatron and torch "not installed", nor pip (which an installed patchcarry
# fetches megatron-core's source with: tests/test_megatron_source.py): the import system
# answers as it does when they are absent (find_spec("megatron.core") raises
# ModuleNotFoundError, as a pip install without the `proof` extra does).
_ABSENT = """import sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("megatron", "torch", "pip"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Absent())
"""


@dataclasses.dataclass(frozen=True)
class Case:
    code: int
    argv: tuple[str, ...]
    env: dict[str, str]
    says: str  # a piece of the one error line (or of stdout for a failed check)
    json_stdout: bool = False  # --json: the failure is a JSON object on stdout too
    usage: bool = False  # a usage error prints the command's usage


def _unappliable_manifest(tmp: Path) -> Path:
    """patches/ with every context line of the first fix changed: it applies nowhere."""
    series = tmp / "unappliable"
    shutil.copytree(ROOT / "patches", series)
    fix = next(series.glob("0001-*.patch"))
    lines = fix.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("@@"))
    for i in range(start, len(lines)):
        if lines[i].startswith(" ") and lines[i].strip():
            lines[i] = lines[i].rstrip("\n") + "  # not upstream's\n"
    fix.write_text("".join(lines))
    return series / "series.toml"


def _crlf_from_line_two(tmp: Path) -> Path:
    """patches/ with the first fix converted to CRLF on every line but its first."""
    series = tmp / "crlf"
    shutil.copytree(ROOT / "patches", series)
    fix = next(series.glob("0001-*.patch"))
    first, rest = fix.read_bytes().split(b"\n", 1)
    fix.write_bytes(first + b"\n" + rest.replace(b"\n", b"\r\n"))
    return series / "series.toml"


def cases(tmp: Path, github_url: str) -> list[Case]:
    """The failures, with their inputs written under `tmp`; `github_url`: a loopback GitHub."""
    absent = tmp / "absent"
    absent.mkdir(exist_ok=True)
    (absent / "sitecustomize.py").write_text(_ABSENT)
    no_megatron = {"PYTHONPATH": str(absent)}
    bad = _unappliable_manifest(tmp)
    latin1 = tmp / "latin1.toml"
    latin1.write_bytes(b"# caf\xe9\n[defaults]\n")
    not_json = tmp / "evidence.json"
    not_json.write_text("measured: 0.27 GB\n")
    not_evidence = tmp / "list.json"
    not_evidence.write_text("[1]\n")
    crlf = _crlf_from_line_two(tmp)
    return [
        Case(1, ("check", "--offline", "--manifest", str(bad), "checkpoint-grad"), {}, "exit 1"),
        Case(2, ("check", "--json", "--bogus"), {}, "unrecognized arguments: --bogus", True, True),
        Case(2, ("scan",), {}, "--author", usage=True),
        Case(4, ("check", "--json", "--upstream", f"{DEAD}/x.git"), {}, "unreachable", True),
        Case(4, ("resubmit", "--dry-run"), {"GH_HOST": DEAD}, "--offline works"),
        Case(4, ("tree", str(tmp / "tree"), "--upstream", f"{DEAD}/x.git"), {}, "unreachable"),
        *(
            [
                Case(
                    4,
                    ("gpu-check", "--dry-run", "--upstream", f"{DEAD}/x.git", str(tmp / "gpu")),
                    {},
                    "unreachable",
                )
            ]
            if install.has_module("torch")  # else it stops first, at the missing torch (5)
            else []
        ),
        Case(5, ("check", "--manifest", str(tmp / "none.toml")), {}, "none.toml"),
        # an input file that is not what it must be: not UTF-8, a directory, not JSON
        Case(5, ("check", "--offline", "--manifest", str(latin1)), {}, "is not UTF-8 (byte 5)"),
        Case(5, ("resubmit", "--offline", "--manifest", str(tmp)), {}, "is a directory"),
        Case(5, ("resubmit", "--offline", "--evidence", str(not_json)), {}, "is not JSON"),
        Case(
            5, ("resubmit", "--offline", "--evidence", str(not_evidence)), {}, "not a JSON object"
        ),
        # a URL or host urllib cannot read (a malformed IPv6 literal), in any option or GH_HOST
        Case(5, ("resubmit", "--dry-run"), {"GH_HOST": "http://[::1"}, "not a valid URL"),
        Case(5, ("check", "--upstream", "http://[::1/x.git"), {}, "not a valid URL"),
        # credentials in a URL are refused where it is ignored too (it would be printed)
        Case(
            5,
            ("check", "--offline", "--upstream", "https://u:pw@example.com/x.git"),
            {},
            "credentials in the URL",
        ),  # fmt: skip
        # a patch converted to CRLF from its second line on
        Case(5, ("check", "--offline", "--manifest", str(crlf)), {}, "CRLF"),
        Case(5, ("check", "--offline"), no_megatron, "megatron"),
        Case(5, ("measure", "--model", "synthetic"), no_megatron, "torch"),
        Case(
            6,
            ("scan", "--author", "someone"),
            {"GH_HOST": github_url, "GITHUB_TOKEN": "bad"},
            "Bad credentials",
        ),  # fmt: skip
    ]


def run(python: Sequence[str | Path], case: Case, *, cwd: Path, env: dict[str, str]) -> str:
    """Run `case` with `python -m patchcarry`; assert its code and its one clear line.
    Returns stderr (for the caller's own checks)."""
    argv_paths = [Path(a) for a in case.argv if a.startswith(str(cwd.parent))]
    inputs = {p for p in argv_paths if p.exists()}  # files and folders the case reads
    done = subprocess.run(
        [*map(str, python), "-m", "patchcarry", *case.argv],
        cwd=cwd,
        env={**{k: v for k, v in env.items() if k != "MEGATRON_SRC"}, **case.env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = f"{case.argv}: exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    assert done.returncode == case.code, said
    assert "Traceback" not in done.stderr + done.stdout, said
    assert "command failed" not in done.stderr and " -c " not in done.stderr, said  # no git argv
    progress = ("note:", " ", f"{case.argv[0]}: ")  # notes, continuations, progress lines
    lines = [line for line in done.stderr.splitlines() if not line.startswith(progress)]
    errors = [line for line in lines if "error: " in line]
    if case.code == 1:
        assert case.says in done.stdout, said  # a failed check is a result, on stdout
    else:
        assert len(errors) == 1 and case.says in errors[0], said
        usage = [line for line in lines if line.startswith("usage:")]
        assert (len(usage) == 1) == case.usage, said
        prog = f"patchcarry {case.argv[0]}"
        assert not usage or usage[0].startswith(f"usage: {prog}"), said  # the command's own
        assert len(lines) == 1 + len(usage), said  # nothing else: one line
    if errors and not case.usage:  # a hint names only options the command has
        hint = re.sub(r"pip install[^;)]*", "", errors[0])
        options = _options(case.argv[0])
        for named in re.findall(r"(?<![\w-])--[a-z][\w-]*", hint):
            assert named in options, f"{named}: {case.argv[0]} has no such option\n{said}"
    written = [p for p in argv_paths if p not in inputs and p.suffix != ".toml"]
    assert not any(p.exists() for p in written), said  # no output dir
    assert "pw@" not in done.stdout + done.stderr, said  # a URL's credentials never printed
    if case.json_stdout:
        assert json.loads(done.stdout)["exit_code"] == case.code, said
    return done.stderr


def _options(command: str) -> set[str]:
    """The option strings `command` has (the hints may name only these)."""
    from patchcarry import cli

    _, parsers = cli.build_parser()
    return set(parsers[command]._option_string_actions)
