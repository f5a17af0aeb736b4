"""Upstream's unit tests for the changed code on both trees, plus the carried tests."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from patchcarry import manifest, proc
from patchcarry.measure import unit_verdict
from patchcarry.patchfile import Patch
from patchcarry.runtime import tree as megatron_tree
from patchcarry.runtime.child import PACKAGE_PARENT, free_loopback_port

# (file, -k expression or None): the tests that exercise the two changed functions.
GROUPS: tuple[tuple[str, str | None], ...] = (
    ("tests/unit_tests/tensor_parallel/test_random.py", None),
    ("tests/unit_tests/transformer/test_transformer_block.py", "checkpoint"),
    ("tests/unit_tests/transformer/test_hyper_connection_recompute.py", None),
    ("tests/unit_tests/transformer/test_transformer_layer.py", "HyperConnection or MHC"),
)
TREES = ("unpatched", "patched")


@dataclasses.dataclass(frozen=True)
class GroupRun:
    group: str
    tree: str
    exit_code: int
    outcomes: dict[str, str]  # node id -> passed | failed | error | skipped
    messages: dict[str, str] = dataclasses.field(default_factory=dict)  # failed/error: why


def groups(test_patches: list[Patch]) -> list[tuple[str, str | None]]:
    """GROUPS, then every test file a carried test patch touches that GROUPS does not name."""
    named = {path for path, _ in GROUPS}
    extra = sorted(
        {f for p in test_patches for f in p.files if f.startswith("tests/") and f.endswith(".py")}
        - named
    )
    return [*GROUPS, *((path, None) for path in extra)]


def prepare_trees(src: Path, work: Path) -> dict[str, Path]:
    """The two copies: tests/ copied whole, then the patches applied with prepared_copy."""
    entries = manifest.load().entries
    tests_only = [t for e in entries for t in e.tests]
    everything = [p for e in entries for p in e.patches(with_tests=True)]
    trees = {}
    for name, patches in (("unpatched", tests_only), ("patched", everything)):
        dest = work / name
        dest.mkdir(parents=True, exist_ok=True)
        if (src / "tests").is_dir() and not (dest / "tests").exists():
            shutil.copytree(src / "tests", dest / "tests",
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        trees[name] = megatron_tree.prepared_copy(src, patches, dest)
    return trees


def junit_outcomes(report: Path, messages: dict[str, str] | None = None) -> dict[str, str]:
    """node id -> outcome from a pytest junit XML file (empty when there is none); `messages`
    gets each failure's or error's message and the end of its text."""
    if not report.is_file():
        return {}
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        node = f"{case.get('classname')}::{case.get('name')}"
        outcomes[node] = "passed"
        for kind, label in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            found = case.find(kind)
            if found is not None:
                outcomes[node] = label
                if messages is not None and kind != "skipped":
                    text = f"{found.get('message') or ''}\n{(found.text or '')[-2000:]}"
                    messages[node] = text.strip()
                break
    return outcomes


def run_group(
    tree: Path, tree_name: str, group: tuple[str, str | None], report: Path, *, nproc: int,
    torchrun: bool,
) -> GroupRun:  # fmt: skip
    """One test group in one tree; its exit status and per-test outcomes."""
    path, keyword = group
    env = dict(os.environ)
    env.update(PYTHONPATH=os.pathsep.join([str(tree), str(PACKAGE_PARENT)]),
               MASTER_ADDR="localhost", MASTER_PORT=str(free_loopback_port()))  # fmt: skip
    launcher = (
        [*proc.PYTHON, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}",
         f"--master-port={env['MASTER_PORT']}"]
        if torchrun
        else [*proc.PYTHON]
    )  # fmt: skip
    if not torchrun:
        env.update(WORLD_SIZE="1", RANK="0", LOCAL_RANK="0")
    args = [*launcher, "-m", "pytest", "-p", "patchcarry.runtime.pytest_standins", "--noconftest",
            "-p", "no:cacheprovider", "-c", os.devnull, "--rootdir", str(tree), "-q", "-W",
            "ignore", f"--junitxml={report}", path]  # fmt: skip
    if keyword:
        args += ["-k", keyword]
    code, out, err = proc.cmd_output(*args, cwd=tree, env=env, check=False)
    report.with_suffix(".log").write_text(out + "\n" + err)
    messages: dict[str, str] = {}
    return GroupRun(path, tree_name, code, junit_outcomes(report, messages), messages)


def regressions(runs: list[GroupRun]) -> list[str]:
    """What passes unpatched but not patched."""
    return unit_verdict.classify([dataclasses.asdict(r) for r in runs], set()).regressions


def render_markdown(runs: list[GroupRun]) -> str:
    """A side-by-side table: one row per test, outcome unpatched | patched."""
    by = {(r.group, r.tree): r for r in runs}
    rows = ["| test | unpatched | patched |", "|---|---|---|"]
    keywords = dict(GROUPS)
    for group in dict.fromkeys(r.group for r in runs):
        keyword = keywords.get(group)
        before, after = by.get((group, "unpatched")), by.get((group, "patched"))
        if before is None or after is None:
            continue
        label = f"{group}" + (f" -k '{keyword}'" if keyword else "")
        rows.append(f"| **{label}** (exit status) | {before.exit_code} | {after.exit_code} |")
        for node in sorted(set(before.outcomes) | set(after.outcomes)):
            rows.append(f"| `{node}` | {before.outcomes.get(node, 'missing')} "
                        f"| {after.outcomes.get(node, 'missing')} |")  # fmt: skip
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m patchcarry.measure.upstream_tests")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--work", type=Path, help="where the two copies go "
        "(default: a new temporary directory; not under --out, an artifact)",
    )  # fmt: skip
    parser.add_argument("--nproc", type=int, default=1)
    parser.add_argument("--no-torchrun", dest="torchrun", action="store_false")
    args = parser.parse_args(argv)
    src = megatron_tree.upstream_tree_from_env()
    if src is None:
        print("error: set MEGATRON_SRC to the upstream tree", file=sys.stderr)
        return 2
    out = args.out.resolve()
    reports = out / "upstream-tests"
    reports.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="patchcarry-upstream-tests-"))
    trees = prepare_trees(src, work.resolve())
    test_patches = [t for e in manifest.load().entries for t in e.tests]
    runs = []
    for index, group in enumerate(groups(test_patches)):
        for name in TREES:
            report = reports / f"{index}-{Path(group[0]).stem}-{name}.xml"
            print(f"upstream tests: {group[0]} on {name}", file=sys.stderr, flush=True)
            runs.append(
                run_group(
                    trees[name], name, group, report, nproc=args.nproc, torchrun=args.torchrun
                )
            )
    table = render_markdown(runs)
    recorded = [dataclasses.asdict(r) for r in runs]
    carried = unit_verdict.carried_tests(test_patches)
    verdict = unit_verdict.classify(recorded, carried)
    (out / "upstream-tests.md").write_text(table)
    (out / "upstream-tests.json").write_text(
        json.dumps(
            {"runs": recorded, "carried_tests": sorted(carried),
             "regressions": verdict.regressions},
            indent=1,
        )
    )  # fmt: skip
    print(table)
    print(unit_verdict.render(verdict))
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
