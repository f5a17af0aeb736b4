"""No decision reads rendered text: what a plan says (its facts, its writes' calls, a reason)
is for people, and rewording it must not change what the tool does. Read from the source: no
`in`, `startswith` or other string test on such text anywhere in the product's PR code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = sorted(
    [
        *(ROOT / "patchcarry" / "resubmit").glob("*.py"),
        *(ROOT / "patchcarry" / "pulls").glob("*.py"),
        ROOT / "patchcarry" / "scan.py",
    ]
)
# What the plan renders for people: its sentences, a write's call line and words, reasons.
RENDERED = {"facts", "call", "what", "reason", "unverified"}
STRING_TESTS = {"startswith", "endswith", "find", "index", "count", "partition", "split",
                "removeprefix", "removesuffix", "__contains__"}  # fmt: skip


def _rendered_names(tree: ast.AST) -> set[str]:
    """Names a comprehension or loop binds to items of rendered text."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.comprehension):
            pairs.append((node.target, node.iter))
        elif isinstance(node, ast.For):
            pairs.append((node.target, node.iter))
        for target, source in pairs:
            if isinstance(target, ast.Name) and _mentions(source, set()):
                bound.add(target.id)
    return bound


def _mentions(expr: ast.AST, names: set[str]) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute) and node.attr in RENDERED:
            return True
        if isinstance(node, ast.Name) and (node.id in RENDERED or node.id in names):
            return True
    return False


def text_decisions(source: str) -> list[str]:
    """`line: code` of each string test on rendered text in `source`."""
    tree = ast.parse(source)
    names = _rendered_names(tree)
    found = []
    for node in ast.walk(tree):
        tested: list[ast.expr] = []
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            tested = [node.left, *node.comparators]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STRING_TESTS
        ):
            tested = [node.func.value]
        if any(_mentions(e, names) for e in tested):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_decision_reads_rendered_text(path: Path):
    assert text_decisions(path.read_text()) == []


@pytest.mark.parametrize(
    "code",
    [
        'api = any(not w.call.startswith("git ") for w in plan.writes)',
        'vetted = any("is vetted" in f for f in plan.facts)',
        'kept = [f for f in facts if not f.startswith("after the push:")]',
        'if "merged" in plan.reason: pass',
    ],
)
def test_the_check_sees_a_decision_on_text(code: str):
    """The checker itself, on the shapes such decisions had."""
    assert text_decisions(code)


def test_the_check_lets_field_tests_pass():
    code = "api = any(w.api for w in plan.writes)\nok = vetting.vets(live)\nx = 'a' in names\n"
    assert text_decisions(code) == []
