"""The tests' torch children forked from one process that imported torch once.

A proof, measure or audit child is `python -P -m patchcarry.X.child` with one Megatron tree
first on PYTHONPATH (patchcarry/runtime/child.py); about 7 of its 9 CPU seconds are torch's
import and the torch modules megatron-core's import reaches (`torch._dynamo`, `torch._inductor`,
`torch.distributed.tensor`, sympy). `python_command()` is a `proc.PYTHON` for the tests that
run such children: the command it names (this module's client) hands its argv, folder,
environment and standard streams to a server of this worker's that imported those torch modules
once and forks for each child. Nothing of megatron or patchcarry is imported before the fork:
each child imports its own tree's megatron as a fresh process does, with the PYTHONPATH,
folder and environment it was given, so an unpatched and a patched tree still never share a
module. What a fork cannot change (an environment variable read while torch was imported,
such as OMP_NUM_THREADS) must match the server's; when it does not, the forked child runs the
real command instead (`os.execve`), so it is never run with another torch setup than asked.

    python -P -m testing.forked_children serve SOCKET MODULE.. # the server, importing MODULEs
    python -P -m testing.forked_children SOCKET -m MODULE ARG.. # the client, as proc.PYTHON
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the children's environment holds (runtime/child.probe_env): read while torch imports.
SERVER_ENV = {"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", "CUDA_VISIBLE_DEVICES": ""}
# Names whose value at torch's import decides how it behaves: a child asking for another value
# than the server's is run for real. TORCHDYNAMO_DISABLE is read at each call, not at import.
_IMPORT_TIME = ("TORCH", "PYTORCH", "OMP_", "MKL_", "KMP_", "CUDA", "NVIDIA", "LD_", "PYTHON")
_READ_LATER = {"TORCHDYNAMO_DISABLE", "PYTHONPATH", "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE"}
# torch and what megatron-core's import reaches of it; never megatron, never patchcarry.
PRELOAD = ("torch", "torch._dynamo", "torch._inductor.compile_fx", "torch.distributed.tensor",
           "torch.fx.experimental.symbolic_shapes", "torch.optim", "torch.utils.checkpoint",
           "numpy")  # fmt: skip
_MESSAGE = 1 << 20


def _import_time_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_IMPORT_TIME) and k not in _READ_LATER}


def _child(
    conn: socket.socket, request: dict, fds: list[int], base_path: list[str], server: _Server
) -> None:
    """In the forked process: become the asked-for `python -P -m MODULE ARGS`; never returns."""
    code = 1
    try:
        conn.close()
        os.setpgid(0, 0)  # its own group, as proc gives a child (its ranks are killed with it)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        env: dict[str, str] = request["env"]
        argv: list[str] = request["argv"]
        if argv[:1] != ["-m"] or _import_time_env(env) != _import_time_env(server.started_with):
            os.execve(sys.executable, [sys.executable, "-P", *argv], env)
        os.environ.clear()
        os.environ.update({**server.set_by_imports, **env})  # as the imports set them
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [*paths, *base_path]
        sys.argv = argv[1:]
        import runpy

        runpy._run_module_as_main(argv[1], alter_argv=True)  # type: ignore[attr-defined]
        code = 0
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - printed as Python prints an uncaught one
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class _Server:
    """The environment the server started with, and what its imports added to it (torch's
    inductor names its cache folder there: a fresh child's imports would set it too)."""

    def __init__(self) -> None:
        self.started_with = dict(os.environ)
        self.set_by_imports: dict[str, str] = {}


def serve(path: str, preload: list[str], owner: int | None = None) -> int:
    """Import `preload`, listen at `path`, fork a child for each request; its exit code
    back. Ends when the process that started it is gone; with `owner`, when that process is
    (a run's controller: the server is the workers' and removes its folder)."""
    import importlib
    import warnings

    server = _Server()
    parent = os.getppid()
    alive = (lambda: os.getppid() == parent) if owner is None else (lambda: _alive(owner))
    warnings.simplefilter("ignore")
    for name in preload:
        importlib.import_module(name)
    server.set_by_imports = {k: v for k, v in os.environ.items() if server.started_with.get(k) != v}
    base_path = list(sys.path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    while alive():
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                data, fds, _, _ = socket.recv_fds(conn, _MESSAGE, 3)
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    _child(conn, json.loads(data), fds, base_path, server)
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                sel.register(conn, selectors.EVENT_READ, pid)
            else:  # the client went away (killed past its deadline): its child goes too
                try:
                    os.killpg(key.data, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                sel.unregister(key.fileobj)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = children.pop(pid)
            try:
                conn.send(str(os.waitstatus_to_exitcode(status)).encode())
            except OSError:
                pass
            if conn.fileno() >= 0:
                try:
                    sel.unregister(conn)
                except (KeyError, ValueError):
                    pass
                conn.close()
    if owner is not None:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    return 0


def _alive(pid: int) -> bool:
    """`pid` runs (a zombie, dead but not yet waited for, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def client(path: str, argv: list[str]) -> int:
    """Hand argv, folder, environment and stdin/stdout/stderr to the server; its code."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.connect(path)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    answer = conn.recv(64)
    code = int(answer) if answer else 1
    if code < 0:  # killed by a signal: so is this process, as a parent sees it
        os.kill(os.getpid(), -code)
    return code


def start(
    preload: tuple[str, ...] = PRELOAD, folder: str | None = None, owner: int | None = None
) -> tuple[tuple[str, ...], subprocess.Popen[str]]:
    """A server importing `preload` (once it listens) at `folder`/socket (default: a new
    folder), and the `proc.PYTHON` that uses it; with `owner`, it serves until that process
    is gone, in a session of its own (serve)."""
    folder = folder or tempfile.mkdtemp(prefix="forked-children.")
    path = os.path.join(folder, "socket")
    env = {**os.environ, **SERVER_ENV}
    env.pop("PYTHONPATH", None)
    mine = [] if owner is None else ["--owner", str(owner)]
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "testing.forked_children", "serve", path, *mine, *preload],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=owner is not None,
    )
    assert server.stdout is not None
    if server.stdout.readline().strip() != "ready":
        raise RuntimeError(f"the forked-children server did not start ({server.wait()})")
    return (sys.executable, "-P", "-m", "testing.forked_children", path), server


_SERVER: tuple[str, ...] | None = None
_STARTED: list[subprocess.Popen[str]] = []  # the run's server, when this worker started it


def python_command() -> tuple[str, ...]:
    """A `proc.PYTHON` whose `-m` children are forked from a server: under pytest-xdist the
    run's one server (each server's imports cost seconds of CPU; a worker started them for
    itself), else this process's (started at the first call; stopped when it exits)."""
    global _SERVER
    if _SERVER is None:
        run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
        _SERVER = _the_runs(run) if run else _this_process_s()
    return _SERVER


def _this_process_s() -> tuple[str, ...]:
    command, server = start()
    folder = os.path.dirname(command[-1])
    atexit.register(lambda: (server.kill(), server.wait(), shutil.rmtree(folder, True)))
    return command


def _the_runs(run: str) -> tuple[str, ...]:
    """The server of xdist's run `run`, started by the first worker to ask: it serves until
    the run's controller (a worker's parent) is gone, then removes its folder."""
    folder = os.path.join(tempfile.gettempdir(), f"forked-children.{run}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(folder, "ready")):
            _STARTED.append(start(folder=folder, owner=os.getppid())[1])  # kept: not reaped
            open(os.path.join(folder, "ready"), "w").close()
    return (sys.executable, "-P", "-m", "testing.forked_children", os.path.join(folder, "socket"))


@contextlib.contextmanager
def forked() -> Iterator[None]:
    """Inside the block, the tool's Python children (`proc.PYTHON`) come from the server."""
    from patchcarry import proc

    before = proc.PYTHON
    proc.PYTHON = python_command()
    try:
        yield
    finally:
        proc.PYTHON = before


if __name__ == "__main__":
    if sys.argv[1] == "serve" and sys.argv[3:4] == ["--owner"]:
        sys.exit(serve(sys.argv[2], sys.argv[5:], int(sys.argv[4])))
    if sys.argv[1] == "serve":
        sys.exit(serve(sys.argv[2], sys.argv[3:]))
    sys.exit(client(sys.argv[1], sys.argv[2:]))
