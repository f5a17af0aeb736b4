"""The README's numbers come from evidence files, and its commands are the ones CI runs."""

from __future__ import annotations

import json
from pathlib import Path

from patchcarry.measure import readme
from patchcarry.measure.evidence import render_markdown_table

ROOT = Path(__file__).resolve().parent.parent


def test_readme_evidence_tables_match_their_evidence_files():
    text = (ROOT / "README.md").read_text()
    assert readme.blocks(text), "the README shows no evidence table"
    assert readme.render(text, ROOT) == text, (
        "README is stale: run `.venv/bin/python -m patchcarry.measure.readme`"
    )


def test_render_replaces_a_typed_number(tmp_path: Path):
    evidence = ROOT / "evidence" / "hc-gpt-cpu.json"
    (tmp_path / "e.json").write_text(evidence.read_text())
    typed = "<!-- evidence: e.json -->\n| unpatched | 28.63 GB |\n<!-- /evidence -->\n"
    rendered = readme.render(typed, root=tmp_path)
    assert "28.63 GB" not in rendered
    assert render_markdown_table(json.loads(evidence.read_text())).strip() in rendered


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    text = (ROOT / "README.md").read_text()
    assert "scripts/test" in ci and "scripts/test" in text


def first_screen() -> str:
    """The README's first 40 lines: what a new reader sees before scrolling."""
    return "\n".join((ROOT / "README.md").read_text().splitlines()[:40])


def code_blocks(text: str) -> list[list[str]]:
    """The lines of each ```bash block in `text`."""
    blocks = text.split("```bash\n")[1:]
    return [block.split("\n```", 1)[0].strip().splitlines() for block in blocks]


def test_first_screen_says_what_it_does_the_users_path_and_the_two_commands():
    first = first_screen()
    for needed in ("fork network", "any GitHub repository", "## Two commands",
                   "docs/exit-codes.md", "patchcarry help exit-codes"):  # fmt: skip
        assert needed in first, f"README's first 40 lines lack {needed!r}"
    users, ours = code_blocks(first)[:2]
    commands = [line.split("  #")[0].strip() for line in users]
    steps = [c for c in commands if c.startswith("patchcarry ")]
    assert [s.split()[1] for s in steps] == ["scan", "adopt", "resubmit", "resubmit"]
    assert steps[0] == "patchcarry scan --all" and "--dry-run" in steps[2]
    # exactly two commands for a fresh machine: the main job (offline dry run) and the tests
    assert [line.split("  #")[0].strip() for line in ours] == [
        "scripts/resubmit.sh --dry-run --offline",
        "scripts/test",
    ]
    assert "| 5 |" not in first  # the exit-code table is reference: docs/ and a help topic


def test_the_gpu_section_quotes_only_committed_gpu_evidence(tmp_path):
    from patchcarry.measure import pretrain_evidence
    from testing import recorded_gpu

    block = "<!-- gpu-evidence: evidence -->\n| fix | 0.27 GB |\n<!-- /gpu-evidence -->\n"
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evidence" / "hc-gpt-cpu.json").write_text(
        (ROOT / "evidence" / "hc-gpt-cpu.json").read_text()
    )
    empty = readme.render(block, root=tmp_path)
    assert "0.27 GB" not in empty and readme.NO_GPU_EVIDENCE in empty
    doc = recorded_gpu.pretrain_doc()
    pretrain_evidence.write(doc, tmp_path / "evidence" / "hc-gpt-pretrain-cuda-2l-seq8192.json")
    rendered = readme.render(block, root=tmp_path)
    assert "From `hc-gpt-pretrain-cuda-2l-seq8192.json`: On NVIDIA H200" in rendered
    assert pretrain_evidence.render_markdown_table(doc).strip() in rendered
    assert "![hc-gpt-pretrain-cuda-2l-seq8192](evidence/hc-gpt-pretrain-cuda-2l-seq8192.png)" in (
        rendered
    )
