"""No entry point and no Python child imports from the folder it runs in (issue 37): with a
module of every standard and dependency name planted where `scripts/resubmit.sh` is run (a
`json.py` there ran with the token), none is imported. Entry points pass Python's `-P`; the
tool's children are `proc.PYTHON` (`-P`) with PYTHONSAFEPATH set for the Pythons they start."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from patchcarry import proc
from testing.package_source import nodes

ROOT = Path(__file__).resolve().parent.parent

# Each planted module appends its name to the marker file when it is imported.
_PLANT = "open({marker!r}, 'a').write(__name__ + '\\n')\n"
_NAMES = {"patchcarry", "testing", "ghapi", "fastcore", "tomlkit", "jsonschema", "torch",
          "megatron", "pytest", "pip", "sitecustomize", "usercustomize"}  # fmt: skip


def _poisoned(folder: Path) -> Path:
    """`folder` holding `NAME.py` for every module name Python or the tool may import; the
    marker file they would write."""
    folder.mkdir()
    marker = folder.parent / "imported-from-the-working-folder"
    for name in set(sys.stdlib_module_names) | _NAMES:
        (folder / f"{name}.py").write_text(_PLANT.format(marker=str(marker)))
    return marker


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in proc.TOKEN_VARS}
    env.pop("PYTHONSAFEPATH", None)
    return {**env, "XDG_CACHE_HOME": str(tmp / "cache")}


def test_scripts_resubmit_run_from_a_poisoned_folder_imports_nothing_from_it(tmp_path):
    marker = _poisoned(tmp_path / "work")
    done = subprocess.run(
        [ROOT / "scripts/resubmit.sh", "--dry-run", "--offline"],
        cwd=tmp_path / "work", env=_clean_env(tmp_path), capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 0, done.stderr


def test_a_python_child_and_the_pythons_it_starts_import_nothing_from_their_folder(tmp_path):
    """`proc.PYTHON` in a poisoned folder, starting a plain `python -m json.tool` there."""
    marker = _poisoned(tmp_path / "work")
    grandchild = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-m', 'json.tool', '--help'], check=True,"
        " stdout=subprocess.DEVNULL)\n"
    )
    env = _clean_env(tmp_path)
    proc.cmd_output(*proc.PYTHON, "-c", grandchild, cwd=tmp_path / "work", env=env)
    assert not marker.exists(), marker.read_text()


def test_every_python_child_in_the_package_is_started_as_proc_python():
    """A child started as bare `sys.executable` would import from its working folder."""
    found = []
    for path in (ROOT / "patchcarry").rglob("*.py"):
        for node in nodes(path):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "executable"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
                and path.name != "proc.py"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found


# A Python started from a script or a workflow: an interpreter word, then -m or -c or a script.
_STARTS = re.compile(
    r"""(?:^|[\s(=])"?(?:python3?(?:\.\d+)?|\S*bin/python|\$\{?(?:python|shim_py|here)\}?)"?"""
    r"""\s+(?!-P\b)(?:-[mc]\s|"?\$root/|\.github/)"""
)


def test_every_python_a_script_or_workflow_starts_passes_dash_p():
    files = [
        p
        for p in (ROOT / "scripts").rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts  # bytecode
    ]
    files += sorted((ROOT / ".github/workflows").glob("*.yml"))
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if not line.lstrip().startswith("#") and _STARTS.search(line)
    ]
    assert not found
