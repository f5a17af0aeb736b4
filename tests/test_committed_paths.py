"""What is committed names no path of the machine it was made on: the pre-commit hook's own
pattern, run over every committed file it covers."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from patchcarry import git

ROOT = Path(__file__).resolve().parent.parent


def _hook() -> dict:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = [h for repo in config["repos"] for h in repo["hooks"]]
    (hook,) = [h for h in hooks if h["id"] == "no-machine-paths"]
    return hook


def test_the_hook_catches_a_machine_path_and_not_a_url() -> None:
    pattern = re.compile(_hook()["entry"])
    assert pattern.search('"label": "upstream tree /work/megatron-git @ c76ff61"')
    assert pattern.search("MEGATRON_SRC=/home/me/Megatron-LM")
    assert not pattern.search("https://github.com/NVIDIA/Megatron-LM/work/x and ~/work/x")


def test_no_committed_evidence_or_doc_names_a_machine_path() -> None:
    hook = _hook()
    pattern, files = re.compile(hook["entry"]), re.compile(hook["files"])
    _, listed, _ = git.git("ls-files", "-z", cwd=ROOT)
    offenders = [
        f"{name}: {match.group(0)}"
        for name in filter(None, listed.split("\0"))
        if files.search(name) and (ROOT / name).is_file()
        for match in [pattern.search((ROOT / name).read_text(errors="replace"))]
        if match
    ]
    assert offenders == []
