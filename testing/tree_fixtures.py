"""Session-scoped Megatron trees for tests, built once and shared.

`source_tree` is parametrized: "installed" (the installed megatron-core, always) and
"upstream" (the tree named by MEGATRON_SRC, marked `upstream`, skipped with the reason when
the variable is unset). `tree_pair` copies that source twice with
`megatron_tree.prepared_copy`: once unpatched, once with the manifest entry's fix applied
(`git apply`; site-packages is never edited). `proof_results` runs the synthetic probe
(`patchcarry.proof.probe.run_probe`, CPU and TP=2 batches) once per copy, each in its own process.

Use from a test module (or list the module in `pytest_plugins` of tests/conftest.py):

    from testing.tree_fixtures import proof_results, source_tree, tree_pair  # noqa: F401

Builds and probe runs are also cached per process, so several modules that import these
fixtures still build each tree and run each probe only once; the fixtures build them once per
run, in the temp root xdist's workers share (testing/once.py).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from patchcarry import manifest
from patchcarry.proof.probe import BATCHES, run_probe
from patchcarry.runtime import tree as megatron_tree
from testing.forked_children import forked
from testing.once import once_dir, once_json

# The entry whose fix the proof tests judge: the one `measure` calls the fix.
PROOF_ENTRY = next(e.name for e in manifest.load().entries if e.measure == "fix")
ITERATIONS = 2


@dataclasses.dataclass(frozen=True)
class SourceTree:
    kind: str  # "installed" | "upstream"
    path: Path
    label: str


@dataclasses.dataclass(frozen=True)
class TreePair:
    """Two importable copies of one source tree, differing only by the entry's fix."""

    source: SourceTree
    unpatched: Path
    patched: Path


@dataclasses.dataclass(frozen=True)
class ProofResults:
    """The probe's JSON for the unpatched and the patched copy of one source tree."""

    pair: TreePair
    unpatched: dict[str, Any]
    patched: dict[str, Any]


_PAIRS: dict[tuple[Path, str], TreePair] = {}
_RESULTS: dict[tuple[Path, str], ProofResults] = {}


def source_for(kind: str) -> SourceTree | None:
    """The installed tree, or the MEGATRON_SRC tree (None when the variable is unset)."""
    path = (
        megatron_tree.installed_tree()
        if kind == "installed"
        else megatron_tree.upstream_tree_from_env()
    )
    if path is None:
        return None
    return SourceTree(kind=kind, path=path, label=megatron_tree.tree_label(path))


def build_pair(source: SourceTree, base_dir: Path, entry_name: str = PROOF_ENTRY) -> TreePair:
    """Unpatched and patched copies of `source` under `base_dir` (cached per process)."""
    key = (source.path, entry_name)
    if key not in _PAIRS:
        entry = manifest.load().select([entry_name])[0]
        unpatched = megatron_tree.prepared_copy(source.path, [], base_dir / "unpatched")
        patched = megatron_tree.prepared_copy(source.path, [entry.fix], base_dir / "patched")
        _PAIRS[key] = TreePair(source=source, unpatched=unpatched, patched=patched)
    return _PAIRS[key]


def proof_for(pair: TreePair, entry_name: str = PROOF_ENTRY) -> ProofResults:
    """Both probes for `pair` (cached per process): one child per copy, all batches.

    The two children run at the same time (each is single-threaded; CI has two cores), each
    forked from a process that imported torch once (testing/forked_children.py).
    """
    key = (pair.source.path, entry_name)
    if key not in _RESULTS:
        with forked(), ThreadPoolExecutor(max_workers=2) as pool:
            unpatched = pool.submit(run_probe, pair.unpatched, BATCHES, ITERATIONS)
            patched = pool.submit(run_probe, pair.patched, BATCHES, ITERATIONS)
            _RESULTS[key] = ProofResults(pair, unpatched.result(), patched.result())
    return _RESULTS[key]


@pytest.fixture(
    scope="session",
    params=["installed", pytest.param("upstream", marks=pytest.mark.upstream)],
)
def source_tree(request: pytest.FixtureRequest) -> SourceTree:
    source = source_for(request.param)
    if source is None:
        pytest.skip(
            f"{megatron_tree.MEGATRON_SRC_ENV} is not set; set it to an upstream Megatron-LM "
            "checkout (e.g. one at the manifest's base_commit) to run against upstream"
        )
    return source


@pytest.fixture(scope="session")
def tree_pair(source_tree: SourceTree, tmp_path_factory: pytest.TempPathFactory) -> TreePair:
    """Built once per run, shared by xdist's workers (testing/once.py)."""
    key = (source_tree.path, PROOF_ENTRY)
    if key not in _PAIRS:
        base = once_dir(
            tmp_path_factory, f"trees-{source_tree.kind}", lambda d: build_pair(source_tree, d)
        )
        _PAIRS[key] = TreePair(source_tree, base / "unpatched", base / "patched")
    return _PAIRS[key]


@pytest.fixture(scope="session")
def proof_results(tree_pair: TreePair, tmp_path_factory: pytest.TempPathFactory) -> ProofResults:
    """Both probes, run once per run and shared by xdist's workers (testing/once.py)."""
    key = (tree_pair.source.path, PROOF_ENTRY)
    if key not in _RESULTS:

        def both() -> dict[str, Any]:
            results = proof_for(tree_pair)
            return {"unpatched": results.unpatched, "patched": results.patched}

        found = once_json(tmp_path_factory, f"proof-{tree_pair.source.kind}", both)
        _RESULTS[key] = ProofResults(tree_pair, found["unpatched"], found["patched"])
    return _RESULTS[key]
