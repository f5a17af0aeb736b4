"""The upstream-style unit tests each entry carries (patches 0002, 0004) prove its fix.

For every manifest entry, two copies of the MEGATRON_SRC tree: "unpatched" (base + test
patches) and "patched" (fix + test patches). Upstream's pytest runs the new tests on each in
a child process (cwd and PYTHONPATH = the copy) with `-p patchcarry.runtime.pytest_standins`,
which stands in for CUDA/NCCL on a CPU host. Unpatched: every new test fails on its own
assertion. Patched: every new test passes.

Child flags: `--noconftest` skips upstream's tests/unit_tests/conftest.py, which imports
tests/test_utils (outside the sparse tree) and downloads a data set into /opt/data;
`-c os.devnull` keeps any stray ini file from configuring the run.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from patchcarry import carried_tests, manifest, proc
from patchcarry.patchfile import Patch
from patchcarry.runtime import tree as megatron_tree
from patchcarry.runtime.child import free_loopback_port

REPO = Path(__file__).resolve().parent.parent
ENTRIES = [e for e in manifest.load().entries if e.tests]


def added_test_ids(patch: Patch) -> list[str]:
    return carried_tests.added_test_ids([patch])


@dataclass(frozen=True)
class Case:
    """One test case from the child's junit report."""

    node: str
    outcome: str  # passed | failed | error | skipped
    message: str
    text: str


def run_upstream_tests(tree: Path, node_ids: list[str]) -> tuple[list[Case], str]:
    """Run `node_ids` with upstream's pytest in `tree` (one child process); cases and output."""
    report = tree / "upstream-unit-report.xml"
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(tree), str(REPO)]),
        MASTER_ADDR="localhost",
        MASTER_PORT=str(free_loopback_port()),
        WORLD_SIZE="1",
        LOCAL_RANK="0",
    )
    code, out, err = proc.cmd_output(
        sys.executable, "-m", "pytest", "-p", "patchcarry.runtime.pytest_standins",
        "--noconftest", "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", str(tree),
        "-q", "-W", "ignore", f"--junitxml={report}", *node_ids,
        cwd=tree, env=env, check=False,
    )  # fmt: skip
    output = f"exit {code}\n{out}\n{err}"
    if not report.is_file():
        pytest.fail(f"child pytest wrote no report:\n{output}")
    cases = []
    for case in ET.parse(report).iter("testcase"):
        node = f"{case.get('file') or case.get('classname')}::{case.get('name')}"
        outcome, message, text = "passed", "", ""
        for kind in ("failure", "error", "skipped"):
            found = case.find(kind)
            if found is not None:
                outcome = "failed" if kind == "failure" else kind
                message, text = found.get("message", ""), found.text or ""
                break
        cases.append(Case(node, outcome, message, text))
    return cases, output


@dataclass(frozen=True)
class Run:
    """One child run: the node ids asked for, the cases it reported, its output."""

    node_ids: list[str]
    cases: list[Case]
    output: str


VARIANTS = ("unpatched", "patched")


def run_variant(entry: manifest.Entry, variant: str, src: Path, base: Path) -> Run:
    """Prepare the variant's copy of `src` under `base` and run the entry's new tests there."""
    patches = [*([entry.fix] if variant == "patched" else []), *entry.tests]
    tree = megatron_tree.prepared_copy(src, patches, base / entry.name / variant)
    node_ids = [node for patch in entry.tests for node in added_test_ids(patch)]
    cases, output = run_upstream_tests(tree, node_ids)
    return Run(node_ids, cases, output)


@pytest.fixture(scope="session")
def upstream_src() -> Path:
    tree = megatron_tree.upstream_tree_from_env()
    if tree is None:
        pytest.skip(
            f"{megatron_tree.MEGATRON_SRC_ENV} is not set; set it to an upstream Megatron-LM "
            "checkout at the manifest's base_commit to run the carried upstream unit tests"
        )
    return tree


@pytest.fixture(scope="session")
def entry_runs(
    upstream_src: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[manifest.Entry], dict[str, Run]]:
    """Both variants' runs for an entry, made on first request: the two children run side by
    side (each is one CPU-bound process importing Megatron)."""
    base = tmp_path_factory.mktemp("upstream-unit")
    done: dict[str, dict[str, Run]] = {}

    def runs(entry: manifest.Entry) -> dict[str, Run]:
        if entry.name not in done:
            with ThreadPoolExecutor(max_workers=len(VARIANTS)) as pool:
                futures = {
                    v: pool.submit(run_variant, entry, v, upstream_src, base) for v in VARIANTS
                }
                done[entry.name] = {v: f.result() for v, f in futures.items()}
        return done[entry.name]

    return runs


def test_each_test_patch_adds_tests() -> None:
    for entry in manifest.load().entries:
        for patch in entry.tests:
            assert added_test_ids(patch), f"{patch.name} adds no test function or class"


@pytest.mark.upstream
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_upstream_unit_test_proves_fix(
    entry: manifest.Entry, variant: str, entry_runs: Callable[[manifest.Entry], dict[str, Run]]
) -> None:
    run = entry_runs(entry)[variant]
    output = run.output

    assert len(run.cases) >= len(run.node_ids), f"child ran fewer tests than asked:\n{output}"
    test_files = {node.split("::")[0] for node in run.node_ids}
    for case in run.cases:
        if variant == "patched":
            assert case.outcome == "passed", f"{case.node}: {case.message}\n{output}"
            continue
        # Fails on the test's own assertion: not an import error, setup error or a
        # CUDA-only call that the stand-ins missed (those raise elsewhere).
        assert case.outcome == "failed", f"{case.node}: {case.outcome}\n{output}"
        # pytest reports a bare `assert` (upstream's style) as "assert ...", one with a
        # message as "AssertionError: ..."; the last frame below says which line raised it
        assert case.message.startswith(("AssertionError", "assert ")), (
            f"{case.node}: {case.message}"
        )
        last_frame = case.text.strip().splitlines()[-1]
        assert re.fullmatch(
            rf"({'|'.join(map(re.escape, test_files))}):\d+: AssertionError", last_frame
        ), f"{case.node}: assertion raised outside the test file: {last_frame}"


def test_the_one_line_command_runs_exactly_the_tests_an_entry_carries() -> None:
    entry = manifest.load().select(["checkpoint-grad"])[0]
    assert carried_tests.command(entry.tests) == (
        "pytest tests/unit_tests/tensor_parallel/test_random.py"
        "::test_checkpoint_clears_detached_input_grad"
    )
    assert carried_tests.command([entry.fix]) is None  # the fix adds no test
