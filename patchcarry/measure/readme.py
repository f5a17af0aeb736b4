"""Keeps the README's measured tables rendered from the evidence files: each `<!-- evidence:
PATH -->` / `<!-- gpu-evidence: DIR -->` block is rewritten from its files."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from patchcarry.measure.evidence import render_markdown_table

_BLOCK_RE = re.compile(r"(<!-- evidence: (\S+) -->\n)(.*?)(<!-- /evidence -->)", re.DOTALL)
_GPU_RE = re.compile(r"(<!-- gpu-evidence: (\S+) -->\n)(.*?)(<!-- /gpu-evidence -->)", re.DOTALL)
NO_GPU_EVIDENCE = (
    "No GPU evidence is committed in this repository yet: no figure measured on a GPU is "
    "quoted here. `scripts/gpu-check` on a GPU machine writes it "
    "([docs/operations.md](docs/operations.md#an-offline-gpu-machine)); commit its "
    "`hc-gpt-pretrain-cuda-*.json` and `.png` to `evidence/`."
)


def render_gpu(folder: Path) -> str:
    """Every committed training-loop evidence file in `folder`: its sentence and its table."""
    from patchcarry.measure import impact, pretrain_evidence

    parts = []
    for path in impact.gpu_files(folder):
        doc = pretrain_evidence.load(path)
        parts.append(
            f"From `{path.name}`: {impact.gpu_sentence(doc)} Produced by `{doc['command']}`.\n\n"
            f"{pretrain_evidence.render_markdown_table(doc).strip()}\n\n"
            f"![{path.stem}]({folder.name}/{path.stem}.png)"
        )
    return "\n\n".join(parts) if parts else NO_GPU_EVIDENCE


def render(text: str, root: Path) -> str:
    """`text` with every evidence block re-rendered from the file it names."""

    def block(match: re.Match[str]) -> str:
        evidence = json.loads((root / match.group(2)).read_text())
        if Path(match.group(2)).name.startswith("audit-"):  # the retention audit's evidence
            from patchcarry.audit.evidence import render_markdown

            table = render_markdown(evidence)
        else:
            table = render_markdown_table(evidence)
        return f"{match.group(1)}{table.strip()}\n{match.group(4)}"

    def gpu_block(match: re.Match[str]) -> str:
        return f"{match.group(1)}{render_gpu(root / match.group(2))}\n{match.group(4)}"

    return _GPU_RE.sub(gpu_block, _BLOCK_RE.sub(block, text))


def blocks(text: str) -> list[str]:
    """The evidence files the README's blocks name."""
    return [m.group(2) for m in _BLOCK_RE.finditer(text)]


def main(argv: list[str] | None = None) -> int:
    for name in (argv if argv is not None else sys.argv[1:]) or ["README.md"]:
        path = Path(name)
        text = path.read_text()
        new = render(text, path.parent)
        if new != text:
            path.write_text(new)
            print(f"updated {len(blocks(new))} evidence block(s) in {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
