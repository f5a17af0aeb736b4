"""testing/forked_children.py: a child forked from the server is the process `python -P -m`
would start (its argv, folder, PYTHONPATH first, environment, standard streams, exit code),
and one asking for another import-time environment than the server's is started for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from patchcarry import proc
from testing import forked_children

SAYS = """import json, os, sys
print(json.dumps({"preloaded": "decimal" in sys.modules, "argv": sys.argv[1:],
                  "cwd": os.getcwd(), "path0": sys.path[0], "stdin": sys.stdin.read(),
                  "said": os.environ.get("SAID"), "name": __name__}))
print("to stderr", file=sys.stderr)
sys.exit(3)
"""


@pytest.fixture(scope="module")
def server() -> object:
    command, process = forked_children.start(("decimal",))  # a cheap stand-in for torch
    yield command
    process.kill()
    process.wait()
    shutil.rmtree(Path(command[-1]).parent)


def _run(command: tuple[str, ...], tmp_path: Path, **env: str) -> tuple[int, dict, str]:
    (tmp_path / "tree").mkdir(exist_ok=True)
    (tmp_path / "tree" / "says.py").write_text(SAYS)
    child_env = {**os.environ, **forked_children.SERVER_ENV, "SAID": "hello", **env}
    child_env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "tree"), str(forked_children.ROOT)])
    code, out, err = proc.cmd_output(
        *command, "-m", "says", "--flag", "x y", cwd=tmp_path, env=child_env, check=False,
        stdin="from stdin",
    )  # fmt: skip
    return code, json.loads(out), err


def test_a_forked_child_is_what_python_would_start(server, tmp_path: Path) -> None:
    code, said, err = _run(server, tmp_path)
    assert (code, err) == (3, "to stderr\n")
    assert said == {
        "preloaded": True,  # forked: the server's import is there
        "argv": ["--flag", "x y"],
        "cwd": str(tmp_path),
        "path0": str(tmp_path / "tree"),
        "stdin": "from stdin",
        "said": "hello",
        "name": "__main__",
    }


def test_another_import_time_environment_is_started_for_real(server, tmp_path: Path) -> None:
    code, forked, _ = _run(server, tmp_path)
    code_real, real, _ = _run(server, tmp_path, OMP_NUM_THREADS="2")
    assert code == code_real == 3
    assert (forked.pop("preloaded"), real.pop("preloaded")) == (True, False)
    assert forked == real


def test_a_runs_server_serves_until_its_owner_is_gone_then_removes_its_folder(
    tmp_path: Path,
) -> None:
    """The server xdist's workers share (`python_command` under a run): started by one worker,
    it outlives that worker and ends with the run's controller (its owner), folder and all."""
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    folder = Path(tempfile.mkdtemp(prefix="forked-children."))  # a socket's path is short
    command, server = forked_children.start(("decimal",), folder=str(folder), owner=owner.pid)
    code, said, _ = _run(command, tmp_path)
    assert code == 3 and said["preloaded"]
    assert server.poll() is None  # serving while its owner runs
    owner.kill()
    owner.wait()
    assert server.wait(timeout=10) == 0
    assert not folder.exists()
