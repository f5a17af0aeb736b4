"""scripts/bootstrap and scripts/resubmit.sh's install phase, with a stand-in Python.

The stand-in (a bash script named python3.11, which the venv's `bin/python` links to) logs
every call with whether a credential was in its environment, and fakes `-m venv`, `-m pip`
and the one `-c` bootstrap runs. So these tests see exactly what bootstrap would run, in
which order and with which environment, without installing anything.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FAKE_PYTHON = r"""#!/usr/bin/env bash
creds=clean
for name in GITHUB_TOKEN GH_TOKEN RESUBMIT_TOKEN MY_SECRET AWS_SECRET_ACCESS_KEY NPM_TOKEN; do
  [ -z "${!name:-}" ] || creds="TOKEN:$name"
done
printf '%s|%s|%s\n' "$(basename "$0")" "$*" "$creds" >>"$FAKE_LOG"
[ "$1" != -P ] || shift  # the tests check that every call has it
if [ "$1" = -m ] && [ "$2" = venv ]; then
  dir=${*: -1}
  mkdir -p "$dir/bin" "$dir/lib/python3.11/site-packages"
  printf 'home = /fake\nversion = %s\n' "${FAKE_VERSION:-3.11.7}" >"$dir/pyvenv.cfg"
  ln -sf "$(command -v "$0")" "$dir/bin/python"
elif [ "$1" = -m ] && [ "$2" = ensurepip ]; then
  site="$(dirname "$0")/../lib/python3.11/site-packages"
  mkdir -p "$site/pip-23.0.1.dist-info" && touch "$site/pip-23.0.1.dist-info/RECORD"
elif [ "$1" = -m ] && [ "$2" = pip ] && [ -n "${FAKE_OLD_PIP:-}" ] && [[ " $* " == *" --python "* ]]
then
  exit 1  # a base Python whose pip is older than 22.3 has no --python
elif [ "$1" = -m ] && [ "$2" = pip ]; then
  if [[ " $* " == *" install "* ]] && { [ "${FAKE_PIP_FAIL:-}" = 1 ] ||
    [[ "${FAKE_PIP_FAIL:-}" = after-pip && " $* " != *" .venv/.pip/"* ]] ||
    [[ "${FAKE_PIP_FAIL:-}" = split && " $* " == *" .venv/.split/"* ]]; }; then
    echo "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE."
    exit 1
  fi
  if [ -n "${FAKE_PIP_MEET:-}" ] && [[ " $* " == *" install "* && " $* " != *" .venv/.pip/"* ]]
  then
    # runs at once: each waits (at most 5 s) until 5 installs have started, and says how
    # many it saw (a run alone, in sequence, sees only those before it)
    touch "$FAKE_PIP_MEET/$$"
    for _ in $(seq 250); do
      [ "$(ls "$FAKE_PIP_MEET" | wc -l)" -lt 5 ] || break
      sleep 0.02
    done
    echo "$(ls "$FAKE_PIP_MEET" | wc -l)" >>"$FAKE_LOG.meet"
  fi
  prev=
  site="$(dirname "$0")/../lib/python3.11/site-packages"  # .venv's, or the one --python names
  for arg in "$@"; do  # the requirement lines each install was given, for the split's test
    [ "$prev" != --python ] || site="$(dirname "$arg")/../lib/python3.11/site-packages"
    [ "$prev" != -r ] || cat "$arg" >>"$FAKE_LOG.requirements"
    if [ "$prev" = -r ] && version=$(sed -n 's/^pip==\([^ ]*\).*/\1/p' "$arg") &&
      [ -n "$version" ]; then  # a pip installed: its RECORD, written last
      mkdir -p "$site/pip-$version.dist-info" && touch "$site/pip-$version.dist-info/RECORD"
    fi
    prev=$arg
  done
  echo "pip output nobody needs on the terminal"
elif [ "$1" = -c ] && [[ "$2" == *sysconfig* ]]; then
  echo "$(cd "$(dirname "$0")/.." && pwd)/lib/python3.11/site-packages"
elif [ "$1" = -c ]; then
  command -v "$0"
  echo "${FAKE_VERSION:-3.11.7}"
fi
"""


class Repo:
    """A copy of what bootstrap reads, a stand-in python, and a log of its calls."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "repo"
        (self.root / "scripts").mkdir(parents=True)
        for script in ("bootstrap", "resubmit.sh", "scan"):
            shutil.copy2(ROOT / "scripts" / script, self.root / "scripts" / script)
        shutil.copytree(ROOT / "scripts" / "lib", self.root / "scripts" / "lib")  # the shims'
        shutil.copytree(ROOT / "requirements", self.root / "requirements")
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        self.python = bin_dir / "python3.11"
        self.python.write_text(FAKE_PYTHON)
        self.python.chmod(0o755)
        self.log = tmp / "calls.log"
        self.log.touch()
        self.env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(tmp),
            "PYTHON": str(self.python),
            "PATCHCARRY_TORCH": "cpu",
            "FAKE_LOG": str(self.log),
        }

    def run(self, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.root / "scripts" / script), *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def calls(self) -> list[tuple[str, str, str]]:
        """(program, argv, credentials) of every call so far; the log is then emptied."""
        lines = self.log.read_text().splitlines()
        self.log.write_text("")
        return [tuple(line.split("|")) for line in lines]  # type: ignore[misc]

    @staticmethod
    def installs(calls: list[tuple[str, str, str]]) -> list[list[str]]:
        """The lock files of each install: a `pip install` call's -r files; the calls of a lock
        with torch (its parts, .venv/.split/torch/NAME and .venv/.split/rest-N/NAME) are one
        install of requirements/NAME. The lock's pip, installed first (.venv/.pip/NAME), is
        left out (test_the_locks_pip_installs_first_then_drives_the_rest)."""
        found: list[list[str]] = []
        parts: set[str] = set()
        for _, argv, _ in calls:
            words = argv.split()
            if "pip" in words and "install" in words:
                files = [words[i + 1] for i, w in enumerate(words) if w == "-r"]
                if all(f.startswith(".venv/.pip/") for f in files):
                    continue
                if not all(f.startswith(".venv/.split/") for f in files):
                    found.append(files)
                    continue
                parts.update(f"requirements/{Path(f).name}" for f in files)
        if parts:
            found.append(sorted(parts))
        return sorted(found, key=lambda files: files != MAIN)  # runs at once: any order


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


MAIN = ["requirements/main.txt", "requirements/megatron-core.txt"]


def _count(files: list[str]) -> int:
    """Requirements in the lock files, as bootstrap counts them for its progress line."""
    lines = (line for f in files for line in (ROOT / f).read_text().splitlines())
    return sum(1 for line in lines if re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*==", line))


def test_cold_main_set_one_line_per_phase_then_nothing_when_current(repo: Repo) -> None:
    result = repo.run("bootstrap", "main")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert [line.split(":")[1].strip().split(" ")[0] for line in lines] == [
        "creating",
        "main",
        ".venv",
    ]
    assert lines[1].startswith(f"bootstrap: main: {_count(MAIN)} locked packages, hashes required")
    assert "pip output" not in result.stderr + result.stdout
    assert "pip output nobody needs" in (repo.root / ".venv" / "bootstrap.log").read_text()
    calls = repo.calls()
    assert repo.installs(calls) == [MAIN]
    (install,) = [argv for _, argv, _ in calls if " install " in f" {argv} "]
    for flag in ("--require-hashes", "--no-deps", "--only-binary :all:"):
        assert flag in install
    pth = repo.root / ".venv" / "lib" / "python3.11" / "site-packages" / "patchcarry-checkout.pth"
    assert pth.read_text().strip() == str(repo.root)
    # the checkout's command has the installed package's name: .venv/bin/patchcarry COMMAND
    command = repo.root / ".venv" / "bin" / "patchcarry"
    assert command.read_text().startswith(f"#!{repo.root}/.venv/bin/python\n")
    assert "from patchcarry.cli import main" in command.read_text()
    ran = subprocess.run([command, "scan", "--all"], env=repo.env, capture_output=True, timeout=60)
    assert ran.returncode == 0
    assert [(p, a) for p, a, _ in repo.calls()] == [("python", f"{command} scan --all")]

    again = repo.run("bootstrap", "main")
    assert (again.returncode, again.stderr, repo.calls()) == (0, "", [])
    command.unlink()  # a .venv from before the command existed gets it, installing nothing
    again = repo.run("bootstrap", "main")
    assert (again.returncode, again.stderr, repo.calls()) == (0, "", [])
    assert command.is_file()


def test_no_credential_reaches_pip_or_the_venv(repo: Repo) -> None:
    secrets = {
        "GITHUB_TOKEN": "sentinel-1",
        "GH_TOKEN": "sentinel-2",
        "RESUBMIT_TOKEN": "sentinel-3",
        "MY_SECRET": "sentinel-4",
        "AWS_SECRET_ACCESS_KEY": "sentinel-5",
        "NPM_TOKEN": "sentinel-6",
    }
    assert repo.run("bootstrap", "test", **secrets).returncode == 0
    calls = repo.calls()
    assert repo.installs(calls) == [MAIN, ["requirements/test-cpu.txt"]]
    assert {creds for _, _, creds in calls} == {"clean"}


def test_resubmit_installs_without_the_token_then_runs_the_venv_with_it(repo: Repo) -> None:
    result = repo.run("resubmit.sh", "--dry-run", GITHUB_TOKEN="sentinel", RESUBMIT_TOKEN="s2")
    assert result.returncode == 0, result.stderr
    *install, last = repo.calls()
    assert repo.installs(install) == [MAIN]
    assert {creds for _, _, creds in install} == {"clean"}
    assert all(argv.startswith("-P ") for _, argv, _ in [*install, last])  # no import from cwd
    assert last[0] == "python" and last[1] == "-P -m patchcarry resubmit --dry-run"
    assert last[2].startswith("TOKEN:")  # the token step itself still has it

    # .venv current: nothing but the venv's python runs
    assert repo.run("scan", GITHUB_TOKEN="sentinel").returncode == 0
    assert [(p, a) for p, a, _ in repo.calls()] == [("python", "-P -m patchcarry scan")]


def test_a_failure_names_the_phase_and_shows_the_end_of_the_log(repo: Repo) -> None:
    result = repo.run("bootstrap", "main", FAKE_PIP_FAIL="1")
    assert result.returncode == 1
    log = repo.root / ".venv" / "bootstrap.log"
    assert f"bootstrap: FAILED while: main: {_count(MAIN)} locked packages" in result.stderr
    assert "  | ERROR: THESE PACKAGES DO NOT MATCH THE HASHES" in result.stderr
    assert result.stderr.rstrip().endswith(f"bootstrap: full log: {log}")
    assert not (repo.root / ".venv" / ".patchcarry-main").exists()
    repo.calls()
    # the next run starts from nothing (no main stamp: the half-built venv is not trusted)
    assert repo.run("bootstrap", "main").returncode == 0
    calls = repo.calls()
    assert any(argv.startswith("-P -m venv") for _, argv, _ in calls)
    assert repo.installs(calls) == [MAIN]


def test_sets_are_layers_and_triton_is_added_on_cpu_only(repo: Repo) -> None:
    assert repo.run("bootstrap", "main").returncode == 0
    repo.calls()
    assert repo.run("bootstrap", "test").returncode == 0
    assert repo.installs(repo.calls()) == [["requirements/test-cpu.txt"]]
    assert repo.run("bootstrap", "upstream").returncode == 0
    assert repo.installs(repo.calls()) == [["requirements/upstream-cpu.txt"]]


def test_the_test_set_compiles_what_the_tests_import_once_after_its_install(repo: Repo) -> None:
    """Bytecode is written at install (scripts/lib/bytecode.py: one group of imports per core),
    whatever PYTHONDONTWRITEBYTECODE says (under it every process that imports torch compiled
    it again); not for the main set."""
    assert repo.run("bootstrap", "main").returncode == 0
    assert not [a for _, a, _ in repo.calls() if "bytecode" in a]
    result = repo.run("bootstrap", "test", PYTHONDONTWRITEBYTECODE="1")
    assert result.returncode == 0, result.stderr
    assert (
        "bootstrap: test: compiling the bytecode of what the tests import (all cores)"
        in result.stderr.splitlines()
    )
    calls = [a for _, a, _ in repo.calls()]
    install = next(i for i, a in enumerate(calls) if " install " in f" {a} ")
    (compile_call,) = [i for i, a in enumerate(calls) if "bytecode" in a]
    assert compile_call > install
    site = repo.root / ".venv" / "lib" / "python3.11" / "site-packages"
    assert calls[compile_call] == f"-P {repo.root}/scripts/lib/bytecode.py {site} {repo.root}"
    again = repo.run("bootstrap", "test")  # current: nothing installed, nothing compiled
    assert (again.returncode, again.stderr, repo.calls()) == (0, "", [])


def _bytecode_module() -> Any:
    """scripts/lib/bytecode.py, imported from its file (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("bytecode", ROOT / "scripts/lib/bytecode.py")
    assert spec is not None and spec.loader is not None
    bytecode = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bytecode)
    return bytecode


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_bytecode_is_written_for_what_a_group_imports_and_all_of_megatron(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scripts/lib/bytecode.py under PYTHONDONTWRITEBYTECODE: a module a group imports (and
    what it imports) gets bytecode, one nothing imports gets none, megatron gets all of it; a
    group naming a module that is not installed is no failure."""
    bytecode = _bytecode_module()
    site = tmp_path / "site"
    _write(
        site,
        {
            "warm/__init__.py": "from warm import used\n",
            "warm/used.py": "",
            "warm/unused.py": "",
            "cold.py": "",
            "megatron/core/deep.py": "",
        },
    )
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", str(site))
    assert bytecode.main(site, groups=(("warm", "not_installed"),)) == 0
    compiled = {
        p.parent.parent.relative_to(site) / p.name.split(".")[0] for p in site.rglob("*.pyc")
    }
    assert compiled == {Path("warm/__init__"), Path("warm/used"), Path("megatron/core/deep")}, (
        compiled
    )


def test_the_checkouts_bytecode_is_written_beside_the_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bytecode.py SITE CHECKOUT: the checkout's own bytecode too (checkout_bytecode.py, a
    process beside the groups), plain for a module, pytest's rewritten one for a test module."""
    bytecode = _bytecode_module()
    checkout = tmp_path / "checkout"
    (checkout / "scripts" / "lib").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts/lib/checkout_bytecode.py", checkout / "scripts/lib")
    _write(
        checkout,
        {
            "pyproject.toml": "",
            "patchcarry/mod.py": "",
            "tests/test_a.py": "def test_a():\n    assert True\n",
        },
    )
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert bytecode.main(tmp_path / "site", groups=(), checkout=checkout) == 0
    written = {
        p.relative_to(checkout)
        for d in ("patchcarry", "tests")
        for p in (checkout / d).rglob("*.pyc")
    }
    mod = Path(importlib.util.cache_from_source(str(checkout / "patchcarry/mod.py")))
    (test_a,) = written - {mod.relative_to(checkout)}
    assert mod.relative_to(checkout) in written
    assert test_a.parent == Path("tests/__pycache__") and "-pytest-" in test_a.name, written


def test_torch_installs_beside_the_rest_of_its_lock_every_entry_once(repo: Repo) -> None:
    """The test set's lock in four pip runs at once: torch's entry alone and the rest dealt to
    three; between them every line of the lock's entries, hashes included, once; the parts
    are removed."""
    assert repo.run("bootstrap", "main").returncode == 0
    repo.calls()
    given = Path(f"{repo.log}.requirements")
    given.write_text("")
    assert repo.run("bootstrap", "test").returncode == 0, repo.log
    calls = [a for _, a, _ in repo.calls() if " install " in f" {a} "]
    assert sorted(c.split(" -r ")[-1] for c in calls) == [
        ".venv/.pip/test-cpu.txt",  # the lock's pip, first (its own test)
        ".venv/.split/rest-1/test-cpu.txt",
        ".venv/.split/rest-2/test-cpu.txt",
        ".venv/.split/rest-3/test-cpu.txt",
        ".venv/.split/torch/test-cpu.txt",
    ]
    assert all("--require-hashes --no-deps" in c for c in calls)
    lock = (repo.root / "requirements" / "test-cpu.txt").read_text().splitlines()
    entries = [line for line in lock if line and not line.startswith("#")]
    pip_first = 4  # its name, two hashes, its `# via`
    assert sorted(given.read_text().splitlines()[pip_first:]) == sorted(entries)
    assert not (repo.root / ".venv" / ".split").exists()


def test_a_rest_too_short_to_deal_to_every_run_starts_only_the_runs_it_fills(repo: Repo) -> None:
    """A lock of an option line, torch and one other entry: the other gets one run, and no
    run is started with the option alone (pip refuses a run without a requirement)."""
    assert repo.run("bootstrap", "main").returncode == 0
    lock = repo.root / "requirements" / "test-cpu.txt"
    text = lock.read_text()
    keep = [re.search(rf"^{name}==.*?(?=^\S)", text, re.M | re.S) for name in ("sympy", "torch")]
    lock.write_text("--prefer-binary\n" + "".join(m.group(0) for m in keep if m is not None))
    repo.calls()
    assert repo.run("bootstrap", "test").returncode == 0, repo.log.read_text()
    assert sorted(f for _, f in _pip_installs(repo)) == [
        ".venv/.split/rest-1/test-cpu.txt",
        ".venv/.split/torch/test-cpu.txt",
    ]


def test_the_locks_pip_installs_first_then_drives_the_rest(repo: Repo) -> None:
    """pip 23 (Python 3.11's) matches every wheel on a package's index page against its tags at
    ~140 CPU ms a package, pip 26 at a third of that: a set whose lock has pip gets that pip
    first, alone, by the base Python's pip, and every install after it runs .venv's pip. A set
    without pip in its lock (main alone) keeps the base Python's pip."""
    assert repo.run("bootstrap", "main").returncode == 0
    main_only = [(p, a) for p, a, _ in repo.calls() if " install " in f" {a} "]
    assert [p for p, _ in main_only] == ["python3.11"]
    shutil.rmtree(repo.root / ".venv")
    given = Path(f"{repo.log}.requirements")
    given.write_text("")
    result = repo.run("bootstrap", "test")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[1].startswith("bootstrap: pip: the lock's own into .venv")
    installs = [(p, a) for p, a, _ in repo.calls() if " install " in f" {a} "]
    (program, first), *rest = installs
    assert program == "python3.11" and first.endswith(" -r .venv/.pip/test-cpu.txt")
    lock = (repo.root / "requirements" / "test-cpu.txt").read_text()
    pip_entry = re.search(r"^pip==.*?(?=^\S)", lock, re.M | re.S)
    assert pip_entry is not None
    assert given.read_text().startswith(pip_entry.group(0))
    assert [p for p, _ in rest] == ["python"] * 5  # main, then the test lock's four parts
    assert all(a.startswith("-P -m pip install --require-hashes --no-deps") for _, a in rest)
    assert not (repo.root / ".venv" / ".pip").exists()


def _pip_installs(repo: Repo) -> list[tuple[str, str]]:
    """(program, the last -r file) of each `pip install` so far, in order."""
    calls = [(p, a) for p, a, _ in repo.calls() if " install " in f" {a} "]
    return [(p, a.split(" -r ")[-1]) for p, a in calls]


def test_a_base_python_with_an_older_pip_gets_ensurepips_then_the_locks_alone(
    repo: Repo,
) -> None:
    """A base pip without --python (< 22.3): ensurepip's pip into .venv, then the lock's pip
    by it, alone, before the runs that go at once (no pip replaces itself under another)."""
    result = repo.run("bootstrap", "test", FAKE_OLD_PIP="1")
    assert result.returncode == 0, result.stderr
    installs = _pip_installs(repo)
    assert installs[0] == ("python", ".venv/.pip/test-cpu.txt"), installs
    assert [p for p, _ in installs] == ["python"] * 6
    site = repo.root / ".venv" / "lib" / "python3.11" / "site-packages"
    assert (site / "pip-26.3.dist-info" / "RECORD").is_file()


def test_a_rerun_after_a_failure_resumes_with_the_locks_pip_unless_it_was_cut_short(
    repo: Repo,
) -> None:
    """The lock's pip installed, then a failure: the re-run drives everything with it and
    does not install it again. A pip cut short while unpacking (no RECORD, pip writes it
    last) is not a pip: the re-run installs the lock's again, first."""
    assert repo.run("bootstrap", "main").returncode == 0  # stamped: a re-run resumes on it
    failed = repo.run("bootstrap", "test", FAKE_PIP_FAIL="after-pip")
    assert failed.returncode != 0
    site = repo.root / ".venv" / "lib" / "python3.11" / "site-packages"
    assert (site / "pip-26.3.dist-info" / "RECORD").is_file()
    repo.calls()
    assert repo.run("bootstrap", "test").returncode == 0
    installs = _pip_installs(repo)
    assert ".venv/.pip/test-cpu.txt" not in [f for _, f in installs], installs
    assert {p for p, _ in installs} == {"python"}

    shutil.rmtree(repo.root / ".venv")
    assert repo.run("bootstrap", "main").returncode == 0
    assert repo.run("bootstrap", "test", FAKE_PIP_FAIL="after-pip").returncode != 0
    (site / "pip-26.3.dist-info" / "RECORD").unlink()
    (site / "pip").mkdir()
    (site / "pip" / "__init__.py").touch()
    repo.calls()
    assert repo.run("bootstrap", "test").returncode == 0
    assert _pip_installs(repo)[0] == ("python3.11", ".venv/.pip/test-cpu.txt")


def test_main_installs_beside_torch_and_the_rest_when_both_sets_install(repo: Repo) -> None:
    """A cold `bootstrap test`: main's locks are one more pip run beside the test lock's four
    (all five at once, on disjoint packages), not a run in front of them; main is stamped,
    and importable, once they all passed."""
    meet = repo.root.parent / "meet"
    meet.mkdir()
    result = repo.run("bootstrap", "test", FAKE_PIP_MEET=str(meet))
    assert result.returncode == 0, result.stderr
    assert "main: 18 locked packages, hashes required (requirements/main.txt " in result.stderr
    assert repo.installs(repo.calls()) == [MAIN, ["requirements/test-cpu.txt"]]
    seen = Path(f"{repo.log}.meet").read_text().split()
    assert seen == ["5"] * 5, seen  # (the lock's pip, alone, first, is not counted)
    assert (repo.root / ".venv" / ".patchcarry-main").is_file()
    assert (
        repo.root / ".venv" / "lib" / "python3.11" / "site-packages" / "patchcarry-checkout.pth"
    ).is_file()
    assert not (repo.root / ".venv" / ".split").exists()


def test_main_beside_a_failed_test_lock_is_stamped_and_a_rerun_resumes_on_it(repo: Repo) -> None:
    """main's run passed beside a test lock's run that failed: main is whole, so it is
    stamped, and the re-run installs the test lock alone (the venv is not rebuilt)."""
    assert repo.run("bootstrap", "test", FAKE_PIP_FAIL="split").returncode != 0
    assert (repo.root / ".venv" / ".patchcarry-main").is_file()
    assert not (repo.root / ".venv" / ".patchcarry-test").exists()
    repo.calls()
    assert repo.run("bootstrap", "test").returncode == 0
    assert repo.installs(repo.calls()) == [["requirements/test-cpu.txt"]]


def test_cuda_torch_brings_its_own_triton(repo: Repo) -> None:
    assert repo.run("bootstrap", "upstream", PATCHCARRY_TORCH="cuda").returncode == 0
    assert repo.installs(repo.calls()) == [MAIN, ["requirements/test-cuda.txt"]]


def test_a_changed_lock_rebuilds_the_venv_with_every_set_it_held(repo: Repo) -> None:
    assert repo.run("bootstrap", "test").returncode == 0
    (repo.root / ".venv" / "stray-file").touch()
    repo.calls()
    main = repo.root / "requirements" / "main.txt"
    main.write_text(main.read_text() + "# changed\n")
    assert repo.run("bootstrap", "main").returncode == 0
    calls = repo.calls()
    assert any(argv.startswith("-P -m venv") for _, argv, _ in calls)
    assert repo.installs(calls) == [MAIN, ["requirements/test-cpu.txt"]]
    assert not (repo.root / ".venv" / "stray-file").exists()


def test_a_venv_bootstrap_did_not_make_is_rebuilt(repo: Repo) -> None:
    (repo.root / ".venv" / "bin").mkdir(parents=True)
    (repo.root / ".venv" / ".patchcarry-installed").write_text("the old single stamp")
    assert repo.run("bootstrap", "main").returncode == 0
    assert any(argv.startswith("-P -m venv") for _, argv, _ in repo.calls())
    assert not (repo.root / ".venv" / ".patchcarry-installed").exists()


def test_check_mode_installs_nothing(repo: Repo) -> None:
    before = repo.run("bootstrap", "--check", "main")
    assert before.returncode == 1 and "run scripts/bootstrap main" in before.stderr
    assert repo.calls() == []
    assert repo.run("bootstrap", "main").returncode == 0
    repo.calls()
    assert repo.run("bootstrap", "--check", "main").returncode == 0
    assert repo.run("bootstrap", "--check", "test").returncode == 1
    assert repo.calls() == []


def test_unknown_set_and_torch_build_are_usage_errors(repo: Repo) -> None:
    assert repo.run("bootstrap", "everything").returncode == 2
    assert repo.run("bootstrap", "main", PATCHCARRY_TORCH="rocm").returncode == 2
    assert repo.calls() == []


@pytest.mark.parametrize("version", ["3.12.3", "3.13.0"])
def test_python_3_12_and_3_13_on_cpu_get_the_torchless_test_set(repo: Repo, version: str) -> None:
    """torch's +cpu build exists here for cp311 only: 3.12 and 3.13 install test-notorch, and
    CUDA's lock (whose torch has their wheels) stays theirs."""
    result = repo.run("bootstrap", "test", FAKE_VERSION=version)
    assert result.returncode == 0, result.stderr
    assert repo.installs(repo.calls()) == [MAIN, ["requirements/test-notorch.txt"]]
    assert f"no +cpu build for Python {version}" in result.stderr.splitlines()[-1]
    again = repo.run("bootstrap", "test", FAKE_VERSION=version)
    assert (again.returncode, repo.calls()) == (0, [])  # current: nothing runs
    cuda = repo.run("bootstrap", "test", FAKE_VERSION=version, PATCHCARRY_TORCH="cuda")
    assert cuda.returncode == 0, cuda.stderr
    assert repo.installs(repo.calls()) == [MAIN, ["requirements/test-cuda.txt"]]


def test_another_python_rebuilds_the_venv_and_an_unsupported_one_is_refused(
    repo: Repo, tmp_path: Path
) -> None:
    assert repo.run("bootstrap", "main").returncode == 0
    other = tmp_path / "bin" / "python3.13"
    shutil.copy2(repo.python, other)
    repo.calls()
    assert repo.run("bootstrap", "main", PYTHON=str(other), FAKE_VERSION="3.13.0").returncode == 0
    calls = repo.calls()
    assert any(p == "python3.13" and a.startswith("-P -m venv") for p, a, _ in calls)
    assert "version = 3.13.0" in (repo.root / ".venv" / "pyvenv.cfg").read_text()
    old = tmp_path / "bin" / "python3.10"
    shutil.copy2(repo.python, old)
    refused = repo.run("bootstrap", "main", PYTHON=str(old), FAKE_VERSION="3.10.13")
    assert refused.returncode == 1
    assert "is Python 3.10.13: set PYTHON to a Python 3.11, 3.12 or 3.13" in refused.stderr


def test_a_bare_name_pyenv_will_not_run_is_found_among_its_versions(
    repo: Repo, tmp_path: Path
) -> None:
    """pyenv's shim for a version that is installed but not selected exits 127: bootstrap
    takes pyenv's own install of that Python instead (CI's 3.13 run on this kind of machine)."""
    shim = tmp_path / "bin" / "python3.13"
    shim.write_text(
        "#!/usr/bin/env bash\necho 'pyenv: python3.13: command not found' >&2\nexit 127\n"
    )
    shim.chmod(0o755)
    real = tmp_path / "pyenv" / "versions" / "3.13.0" / "bin" / "python3.13"
    real.parent.mkdir(parents=True)
    shutil.copy2(repo.python, real)
    done = repo.run(
        "bootstrap", "main", PYTHON="python3.13", PYENV_ROOT=str(tmp_path / "pyenv"),
        FAKE_VERSION="3.13.0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"creating .venv (Python 3.13.0, {real})" in done.stderr
