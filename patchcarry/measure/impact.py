"""The PR body's "Measured impact" of ONE entry's fix, from evidence files (the body never
types a figure).

With `--evidence PATH`, that file. Otherwise the evidence committed beside the manifest
(`<repository>/evidence/`, the manifest being `<repository>/patches/series.toml`): upstream's
training loop on a GPU first, when the repository has it; then the CPU measurement, which says
what it counts and why that equals the GPU difference. Only the entry's own variant is named
(`measure` in the manifest): another fix's rows belong in another PR. Each block ends with its
source, the file and commit of this repository (linked when git names a web remote), and the
command that reproduces it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from pathlib import Path
from typing import Any

from patchcarry import git, inputs, install
from patchcarry.errors import BadInputError
from patchcarry.measure import model
from patchcarry.units import human_bytes

CPU_EVIDENCE = "hc-gpt-cpu.json"

# What each variant frees between iterations, in a reviewer's words.
FREES = {
    "fix": "the detached inputs' `.grad`, one `[seq, mbs, streams × hidden]` tensor per "
    "checkpointed layer",
    "reset": "the recomputed graph each layer's `mlp_norm_manager` kept alive, with the detached "
    "input, its `.grad` and the manager's `[seq, mbs, hidden]` tensor per checkpointed layer",
    "both": "everything the recomputed graphs kept alive between iterations",
}


@dataclasses.dataclass(frozen=True)
class Source:
    """Where one measurement lives and how to make it again."""

    what: str  # "upstream's training loop on NVIDIA H200", "counted on CPU"
    link: str  # the file and commit of this repository, linked when git knows a web remote
    command: str | None

    def sentence(self) -> str:
        again = f"; reproduce: `{self.command}`" if self.command else ""
        return f"Evidence ({self.what}): {self.link}{again}."


@dataclasses.dataclass(frozen=True)
class Impact:
    """One entry's measured impact: the figures, and where they come from."""

    figures: str  # what was measured, with its configuration (numbers)
    sources: tuple[Source, ...]

    @property
    def source(self) -> str:
        return "\n".join(s.sentence() for s in self.sources)

    def markdown(self) -> str:
        return f"{self.figures}\n\n{self.source}"


def evidence_dir(manifest_path: Path) -> Path:
    return Path(manifest_path).absolute().parent.parent / "evidence"


def _variant(variants: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((v for v in variants if v["name"] == name and v["status"] == "measured"), None)


def _spread(spread: dict[str, int]) -> str:
    low, high = spread["min"], spread["max"]
    return human_bytes(low) if low == high else f"{human_bytes(low)} – {human_bytes(high)}"


def _exact(n: int) -> str:
    """`268,435,456 B (0.27 GB)`: the exact count, then the decimal unit the PRs use."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(n) >= size // 10:
            return f"{n:,} B ({n / size:.2f} {unit})"
    return f"{n:,} B"


def _config(s: dict[str, Any]) -> str:
    return (
        f"{s['layers']} layers, {s['streams']} residual streams, {s['dtype']}, micro-batch "
        f"{s['mbs']}, seq {s['seq']}, hidden {s['hidden']}"
    )


LABELS = {"fix": "the fix frees", "reset": "the reset frees", "both": "both fixes free"}


def _tree(doc: dict[str, Any]) -> str:
    return git.short(str(doc["tree"]["commit"] or doc["tree"]["label"]))


def gpu_sentence(doc: dict[str, Any], variant: str | None = None) -> str:
    """The training-loop measurement in words: of `variant` ("this change"), or of every
    fix variant (the README's account of both fixes)."""
    s, base = doc["shape"], _variant(doc["variants"], "unpatched")
    head = (
        f"On {doc['hardware']['gpu']}, upstream's own `pretrain_gpt.py` at "
        f"{_tree(doc)} ({_config(s)}, full "
        "recompute):"
    )
    labels = {variant: "this change frees"} if variant else LABELS
    parts = [head]
    for name, label in labels.items():
        own = _variant(doc["variants"], name)
        if own is None or base is None:
            parts.append(f"the `{name}` variant was not measured;")
            continue
        parts.append(
            f"{label} {human_bytes(own['freed']['floor_bytes'])} of the allocator floor "
            f"between iterations (the model predicts {human_bytes(own['freed']['predicted'])}); "
            f"peak {_spread(base['peak_bytes'])} → {_spread(own['peak_bytes'])}, reserved "
            f"{_spread(base['reserved_bytes'])} → {_spread(own['reserved_bytes'])}, step-time "
            f"ratio {own['step_time_ratio']:.3f};"
        )
    return " ".join(parts).rstrip(";") + "."


def cpu_paragraphs(doc: dict[str, Any], variant: str) -> str:
    """The CPU measurement of `variant`: what it counts, at what configuration, and how it
    relates to the GPU difference the PR reports."""
    run = doc["runs"][-1]
    s, own = run["shape"], _variant(run["variants"], variant)
    where = (
        f"On CPU, upstream's `GPTModel` with `HyperConnectionTransformerLayer` at "
        f"{_tree(doc)} ({_config(s)}, full recompute)"
    )
    if own is None:
        return f"{where}: the `{variant}` variant was not measured."
    freed, predicted = own["freed"]["live_tensor_bytes"], own["freed"]["predicted"]
    agrees = (
        "exactly the model's count"
        if freed == predicted
        else f"the model predicts {_exact(predicted)}"
    )
    grads = {True: " Gradients are bit-identical to the unpatched run's.",
             False: " Gradients DIFFER from the unpatched run's."}  # fmt: skip
    text = (
        f"{where}, this change frees {_exact(freed)} of live tensors between iterations, "
        f"{agrees}: {FREES.get(variant, 'what the unpatched run kept')}."
        f"{grads.get(own['grads_identical_to_unpatched'], '')}"
    )
    seed = model.Shape(**doc["extrapolation"]["seed_shape"])
    at_seed, seed_config = model.freed(seed, variant), _config(dataclasses.asdict(seed))
    pr = model.PR_MEASURED_IN
    if variant != "fix":
        return (
            f"{text} At the configuration #{pr} measured on an H200 ({seed_config}; the hidden "
            f"size is derived) the same count is {_exact(at_seed)}."
        )
    gpu = (
        f"the drop of the allocator floor #{pr} measured on an H200 for this change, since on "
        "a GPU these tensors' blocks are what that floor holds between iterations"
    )
    if model.Shape(**s) == seed:
        return f"{text} This is #{pr}'s own configuration: the same bytes as {gpu}."
    return (
        f"{text} At #{pr}'s own configuration ({seed_config}; the hidden size is derived, as "
        f"#{pr} states none) the same count is {_exact(at_seed)}: {gpu}."
    )


def evidence_link(path: Path) -> str:
    """`[evidence/x.json](web URL at commit) at abc1234`: the file and the commit of this
    repository that holds it, linked when git's `origin` is a web host; the path alone when
    git knows no commit of it (or it changed since)."""
    root = git.toplevel(path.resolve().parent)
    if root is None:
        return f"`{path.parent.name}/{path.name}`"
    rel = path.resolve().relative_to(root).as_posix()
    sha = git.last_commit_of(rel, cwd=root)
    if sha is None or git.is_modified(rel, cwd=root):
        return f"`{rel}` (not committed)"
    web = web_url(git.remote_url_of("origin", cwd=root) or "")
    name = f"[`{rel}`]({web}/blob/{sha}/{rel})" if web else f"`{rel}`"
    return f"{name} at {git.short(sha)}"


_REMOTE_RES = (
    re.compile(r"^https?://(?:[^@/]*@)?(?P<host>[^/]+)/(?P<path>[^/]+/[^/]+?)(?:\.git)?/?$"),
    re.compile(r"^ssh://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>[^/]+/[^/]+?)(?:\.git)?$"),
    re.compile(r"^[\w.-]+@(?P<host>[^:/]+):(?P<path>[^/]+/[^/]+?)(?:\.git)?$"),
)


def web_url(remote: str) -> str | None:
    """The web address of a git remote on a GitHub-like host (credentials dropped); None for
    a local path or anything else."""
    for pattern in _REMOTE_RES:
        match = pattern.match(remote)
        if match:
            return f"https://{match.group('host')}/{match.group('path')}"
    return None


def own_command(command: str | None, variant: str) -> str | None:
    """The measurement's command narrowed to this entry's rows (`--variants unpatched,V`):
    each variant runs in its own process, so the rows it prints are the same."""
    if command is None:
        return None
    words = shlex.split(command)
    if "--variants" in words[:-1]:
        words[words.index("--variants") + 1] = f"unpatched,{variant}"
    return shlex.join(words)


def render_file(path: Path, variant: str) -> Impact:
    """`variant`'s impact from one evidence file (training loop or this repository's harness)."""
    from patchcarry.measure import evidence, pretrain_evidence

    doc = inputs.read_json(Path(path), "evidence file")  # one line, exit 5, when it is not
    link = evidence_link(path)
    if pretrain_evidence.is_pretrain(doc):
        doc = pretrain_evidence.load(path)
        table = pretrain_evidence.render_markdown_table(doc, only=("unpatched", variant))
        where = f"upstream's training loop on {doc['hardware']['gpu']}"
        return Impact(
            f"{gpu_sentence(doc, variant)}\n\n{table.strip()}",
            (Source(where, link, doc["command"]),),
        )
    doc = evidence.load(path)
    command = own_command(doc.get("command"), variant)
    source = Source(f"counted on {doc['device'].upper()}", link, command)
    if doc["device"] == "cuda":
        return Impact(str(evidence.render_markdown_table(doc)).strip(), (source,))
    return Impact(cpu_paragraphs(doc, variant), (source,))


def gpu_files(folder: Path) -> list[Path]:
    """The committed training-loop evidence files, in name order."""
    from patchcarry.measure import pretrain_evidence

    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and pretrain_evidence.is_pretrain(doc):
            found.append(path)
    return found


def measured_impact(explicit: Path | None, manifest_path: Path, variant: str) -> Impact | None:
    """`variant`'s impact: `explicit`, else committed GPU evidence then CPU, else None."""
    if explicit is not None:
        if not explicit.is_file():
            measure = install.command("measure")
            raise BadInputError(f"--evidence {explicit}: no such file; run {measure} first")
        return render_file(explicit, variant)
    folder = evidence_dir(manifest_path)
    files = gpu_files(folder) + [p for p in [folder / CPU_EVIDENCE] if p.is_file()]
    if not files:
        return None
    parts = [render_file(p, variant) for p in files]
    figures = "\n\n".join(p.figures.strip() for p in parts)
    return Impact(figures, tuple(s for p in parts for s in p.sources))
