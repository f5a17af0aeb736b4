"""The PR body's "Measured impact" of one entry's fix, from evidence files (the body never
types a figure): `--evidence`, else the evidence committed beside the manifest, GPU first."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from patchcarry import git, inputs, install, manifest
from patchcarry.errors import BadInputError
from patchcarry.manifest import Entry
from patchcarry.units import human_bytes

CPU_EVIDENCE = "hc-gpt-cpu.json"
QUOTED = "quoted.toml"  # original authors' own measured figures, by entry

# What each variant frees between iterations, in a reviewer's words.
FREES = {
    "fix": "the detached inputs' `.grad`, one `[seq, mbs, streams × hidden]` tensor per "
    "checkpointed layer",
    "reset": "the recomputed graph each layer's `mlp_norm_manager` kept alive, with the detached "
    "input, its `.grad` and the manager's `[seq, mbs, hidden]` tensor per checkpointed layer",
    "both": "everything the recomputed graphs kept alive between iterations",
}


@dataclasses.dataclass(frozen=True)
class Home:
    """The repository and revision holding an evidence file (`web`: its web address, or None)."""

    rel: str  # the file, relative to the repository's top
    sha: str | None  # the newest commit of it (None: not committed, or changed since)
    web: str | None
    name: str  # owner/name on the web host, else the folder's name

    def file_link(self) -> str:
        if self.sha is None:
            return f"`{self.rel}` (not committed)"
        if self.web:
            return f"[`{self.rel}`]({self.web}/blob/{self.sha}/{self.rel}) at {git.short(self.sha)}"
        return f"`{self.rel}` at {git.short(self.sha)}"


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a measurement lives and the command that remakes it (into a new temporary folder)."""

    what: str  # "upstream's training loop on NVIDIA H200", "counted on CPU"
    link: str  # the file and commit of this repository, linked when a web address is known
    command: str | None
    expected: str = ""  # what the command prints that holds the figures
    home: Home | None = None

    def sentence(self) -> str:
        """One line: the file, and where the command runs (the command is in `markdown`)."""
        return f"Evidence ({self.what}): {self.link}."

    def markdown(self) -> str:
        if not self.command:
            return self.sentence()
        home = self.home
        if home is not None and home.web and home.sha:
            folder = home.web.rstrip("/").rsplit("/", 1)[-1]
            where = (f"To reproduce it, run the harness that made it, [{home.name}]"
                     f"({home.web}/tree/{home.sha}) at {git.short(home.sha)}")  # fmt: skip
            clone = f"git clone {home.web} && cd {folder} && git checkout {git.short(home.sha)}\n"
        else:
            at = f" at {git.short(home.sha)}" if home is not None and home.sha else ""
            name = home.name if home is not None else "this repository"
            where = (
                f"It was made with {name}{at}, a repository with no web address (no git remote "
                "and no `[project.urls]` in its pyproject.toml names one): a reader cannot "
                "fetch it. Its command"
            )
            clone = ""
        block = f"```sh\n{clone}{self.command}\n```"
        expected = f"\n\nExpected: {self.expected}" if self.expected else ""
        return (f"{self.sentence()}\n\n{where}, which writes to a new temporary folder, not over "
                f"the committed file:\n\n{block}{expected}")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Impact:
    """One entry's measured impact: figures, sources, the pairing, the author's own (`quote`)."""

    figures: str  # what was measured, with its configuration (numbers)
    sources: tuple[Source, ...]
    pair: str = ""  # "Why both PRs?": this fix alone, the other alone, both (measured)
    quote: str = ""  # the superseded PR's own measured figures, quoted as its author's

    @property
    def source(self) -> str:
        return "\n\n".join(s.markdown() for s in self.sources)

    def markdown(self) -> str:
        quote = f"\n\n{self.quote}" if self.quote else ""
        return f"{self.figures}{quote}\n\n{self.source}"


def evidence_dir(manifest_path: Path) -> Path:
    return Path(manifest_path).absolute().parent.parent / "evidence"


def _variant(variants: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((v for v in variants if v["name"] == name and v["status"] == "measured"), None)


def _exact(n: int) -> str:
    """`268,435,456 B (0.27 GB)`: the exact count, then the decimal unit the PRs use."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(n) >= size // 10:
            return f"{n:,} B ({n / size:.2f} {unit})"
    return f"{n:,} B"


def _config(s: dict[str, Any]) -> str:
    return (f"{s['layers']} layers, {s['streams']} residual streams, {s['dtype']}, micro-batch "
            f"{s['mbs']}, seq {s['seq']}, hidden {s['hidden']}")  # fmt: skip


LABELS = {"fix": "the fix frees", "reset": "the reset frees", "both": "both fixes free"}


def _tree(doc: dict[str, Any]) -> str:
    return git.short(str(doc["tree"]["commit"] or doc["tree"]["label"]))


def gpu_sentence(doc: dict[str, Any], variant: str | None = None) -> str:
    """The training-loop measurement in words, of `variant` or of every fix variant."""
    from patchcarry.measure.pretrain_evidence import bytes_spread

    s, base = doc["shape"], _variant(doc["variants"], "unpatched")
    head = (f"On {doc['hardware']['gpu']}, upstream's own `pretrain_gpt.py` at "
            f"{_tree(doc)} ({_config(s)}, full "
            "recompute):")  # fmt: skip
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
            f"peak {bytes_spread(base['peak_bytes'])} → {bytes_spread(own['peak_bytes'])}, "
            f"reserved {bytes_spread(base['reserved_bytes'])} → "
            f"{bytes_spread(own['reserved_bytes'])}, step-time ratio {own['step_time_ratio']:.3f};"
        )
    return " ".join(parts).rstrip(";") + "."


def cpu_paragraphs(doc: dict[str, Any], variant: str) -> str:
    """The CPU measurement of `variant` alone, at the configuration it ran; nothing extrapolated."""
    run = doc["runs"][-1]
    s, own = run["shape"], _variant(run["variants"], variant)
    where = (f"Counted on CPU (no GPU run): upstream's `GPTModel` with "
             f"`HyperConnectionTransformerLayer` at "
             f"{_tree(doc)}, {_config(s)}, full "
             f"recompute, {doc['iterations']} iterations; live tensors between iterations, each "
             "variant in its own process.")  # fmt: skip
    if own is None:
        return f"{where}\n\nThe `{variant}` variant was not measured."
    grads = {True: "Gradients are bit-identical to the unpatched run's.",
             False: "Gradients DIFFER from the unpatched run's."}  # fmt: skip
    lines = [f"- This change alone frees {_exact(own['freed']['live_tensor_bytes'])}: "
             f"{FREES.get(variant, 'what the unpatched run kept')}.",
             f"- {grads.get(own['grads_identical_to_unpatched'], '')}".rstrip(" -")]  # fmt: skip
    return f"{where}\n\n" + "\n".join(line for line in lines if line.strip("- "))


def pair_paragraph(doc: dict[str, Any], variant: str, siblings: Mapping[str, str], *,
                   tested: bool = False) -> str:  # fmt: skip
    """What `variant` frees alone, the other fix alone, and both (measured, never a sum)."""
    run = doc["runs"][-1]
    others = [
        v["name"] for v in run["variants"]
        if v["name"] not in ("unpatched", variant, "both") and v["status"] == "measured"
    ]  # fmt: skip
    own, both = _variant(run["variants"], variant), _variant(run["variants"], "both")
    if own is None or both is None or len(others) != 1:
        return ""
    other = _variant(run["variants"], others[0])
    assert other is not None
    label = siblings.get(others[0], f"the `{others[0]}` fix")
    alone, other_alone = own["freed"]["live_tensor_bytes"], other["freed"]["live_tensor_bytes"]
    together = both["freed"]["live_tensor_bytes"]
    more = together - other_alone
    lines = [
        "Measured in the same CPU run as above (each variant in its own process):",
        "",
        f"- this fix alone frees {_exact(alone)};",
        f"- {label} alone frees {_exact(other_alone)};",
        f"- both together free {_exact(together)}"
        + (
            " (not the sum: what either fix frees is counted once)."
            if together < alone + other_alone
            else "."
        ),  # fmt: skip
        "",
        f"With {label} merged, this fix frees {_exact(more)} more in this measurement."
        if more
        else f"With {label} merged, this fix frees nothing more in this measurement (0 B): "
        "here the retention it clears exists only through the holder that fix removes.",
    ]
    if more == 0:
        tests = (" The test this PR adds models such a holder: a run function that keeps the "
                 "tensor it is recomputed on past backward." if tested else "")  # fmt: skip
        lines[-1] += (" Its case is defence in depth: it clears the retention whatever keeps the "
                      f"recomputed graph alive.{tests}")  # fmt: skip
    return "\n".join(lines)


def web_home(root: Path) -> tuple[str | None, str]:
    """(web address, owner/name) of the repository at `root`; (None, folder name) if unnamed."""
    names = git.remote_names(cwd=root)
    for name in sorted(names, key=lambda n: n != "origin"):
        web = web_url(git.remote_url_of(name, cwd=root) or "")
        if web:
            return web, web.split("/", 3)[-1]
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text()).get("project", {})
    except (OSError, ValueError):
        project = {}
    urls = project.get("urls", {}) if isinstance(project, dict) else {}
    found = {str(k).lower(): v for k, v in urls.items()} if isinstance(urls, dict) else {}
    for key in ("repository", "source", "homepage"):
        web = web_url(str(found.get(key, "")))
        if web:
            return web, web.split("/", 3)[-1]
    named = project.get("name") if isinstance(project, dict) else None
    return None, str(named) if isinstance(named, str) and named else root.name


def home_of(path: Path) -> Home | None:
    """The repository, commit and web address of an evidence file; None outside git."""
    root = git.toplevel(path.resolve().parent)
    if root is None:
        return None
    rel = path.resolve().relative_to(root).as_posix()
    sha = git.last_commit_of(rel, cwd=root)
    if sha is not None and git.is_modified(rel, cwd=root):
        sha = None
    web, name = web_home(root)
    return Home(rel, sha, web, name)


_REMOTE_RES = (
    re.compile(r"^https?://(?:[^@/]*@)?(?P<host>[^/]+)/(?P<path>[^/]+/[^/]+?)(?:\.git)?/?$"),
    re.compile(r"^ssh://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>[^/]+/[^/]+?)(?:\.git)?$"),
    re.compile(r"^[\w.-]+@(?P<host>[^:/]+):(?P<path>[^/]+/[^/]+?)(?:\.git)?$"),
)


def web_url(remote: str) -> str | None:
    """The web address of a git remote on a GitHub-like host (no credentials), else None."""
    for pattern in _REMOTE_RES:
        match = pattern.match(remote)
        if match:
            return f"https://{match.group('host')}/{match.group('path')}"
    return None


def out_to_temp(command: str | None) -> str | None:
    """The command writing to a new temporary folder, never over the committed evidence."""
    if command is None:
        return None
    words = shlex.split(command)
    if "--out" in words[:-1]:
        at = words.index("--out")
        del words[at : at + 2]
    return f'{shlex.join(words)} --out "$(mktemp -d)"'


def expected_rows(doc: dict[str, Any]) -> str:
    """What `measure` prints that holds the figures: each fix row's freed bytes."""
    run = doc["runs"][-1]
    rows = [f"`{v['name']}` {human_bytes(v['freed']['live_tensor_bytes'])}" for v in run["variants"]
            if v["name"] != "unpatched" and v["status"] == "measured"]  # fmt: skip
    same = all(v["grads_identical_to_unpatched"] for v in run["variants"])
    grads = "; `grads = unpatched` reads yes in every row" if same else ""
    return f"the table's live-tensor freed column reads {', '.join(rows)}{grads}."


def render_file(path: Path, variant: str, siblings: Mapping[str, str] | None = None, *,
                tested: bool = False) -> Impact:  # fmt: skip
    """`variant`'s impact from one evidence file (training loop or this repository's harness)."""
    from patchcarry.measure import evidence, pretrain_evidence

    doc = inputs.read_json(Path(path), "evidence file")  # one line, exit 5, when it is not
    home = home_of(path)
    link = home.file_link() if home else f"`{path.parent.name}/{path.name}`"
    if pretrain_evidence.is_pretrain(doc):
        doc = pretrain_evidence.load(path)
        table = pretrain_evidence.render_markdown_table(doc, only=("unpatched", variant))
        where = f"upstream's training loop on {doc['hardware']['gpu']}"
        return Impact(f"{gpu_sentence(doc, variant)}\n\n{table.strip()}",
                      (Source(where, link, out_to_temp(doc["command"]), home=home),))  # fmt: skip
    doc = evidence.load(path)
    source = Source(f"counted on {doc['device'].upper()}", link, out_to_temp(doc.get("command")),
                    expected_rows(doc) if doc["device"] == "cpu" else "", home)  # fmt: skip
    if doc["device"] == "cuda":
        return Impact(str(evidence.render_markdown_table(doc)).strip(), (source,))
    pair = pair_paragraph(doc, variant, siblings or {}, tested=tested)
    return Impact(cpu_paragraphs(doc, variant), (source,), pair)


def gpu_files(folder: Path) -> list[Path]:
    """The committed training-loop evidence files, in name order."""
    from patchcarry.measure import pretrain_evidence

    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if pretrain_evidence.is_pretrain(doc):
            found.append(path)
    return found


def quoted(folder: Path, entry: str | None) -> str:
    """The original author's figures for `entry`, quoted from `quoted.toml`, never re-derived."""
    path = folder / QUOTED
    if entry is None or not path.is_file():
        return ""
    try:
        doc = tomllib.loads(inputs.read_text(path, "quoted figures file"))
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"{path}: not TOML ({exc})") from None
    item = doc.get(entry)
    if not isinstance(item, dict) or not all(
        isinstance(item.get(k), str | int) for k in ("pr", "where", "text", "source")
    ):
        return ""
    return (
        f"#{item['pr']} measured this change itself, on {item['where']}; in its author's "
        f"words:\n\n> {item['text']}\n\nQuoted, not re-measured: this repository has no GPU "
        f"run of it. Source: {item['source']}."
    )


def check_file(path: Path) -> None:
    """A bad `--evidence` is refused before anything is read (rendered later, where used)."""
    from patchcarry.measure import evidence, pretrain_evidence

    if not path.is_file():
        raise BadInputError(
            f"--evidence {path}: no such file; run {install.command('measure')} first"
        )
    doc = inputs.read_json(path, "evidence file")  # one line, exit 5, when it is not
    (pretrain_evidence if pretrain_evidence.is_pretrain(doc) else evidence).load(path)


def for_entries(
    entries: Sequence[Entry], explicit: Path | None, manifest_path: Path | None,
    tested: Callable[[Entry], bool],
) -> dict[str, Impact | None]:  # fmt: skip
    """Each entry's impact, the other entries' fixes named as a reviewer knows them (#PR)."""
    if manifest_path is None:
        return {}

    def named(fields: Mapping[str, object]) -> str:
        supersedes = fields.get("supersedes") or ()
        if fields.get("pr"):
            return f"#{fields['pr']}"
        if isinstance(supersedes, tuple | list) and supersedes:
            return f"#{supersedes[-1]}'s fix"  # its re-submission has no number yet
        return f"`{fields['name']}`"

    # the other entries' fields only: their patches are not read (a bad one stops its own run)
    labels = {str(p.fields["measure"]): named(p.fields)
              for p in manifest.load(manifest_path).pending if p.fields.get("measure")}  # fmt: skip
    return {
        e.name: measured_impact(
            explicit, manifest_path, e.measure or "fix", entry=e.name,
            siblings={v: n for v, n in labels.items() if v != (e.measure or "fix")},
            tested=tested(e),
        )
        for e in entries
    }  # fmt: skip


def measured_impact(
    explicit: Path | None, manifest_path: Path, variant: str, *, entry: str | None = None,
    siblings: Mapping[str, str] | None = None, tested: bool = False,
) -> Impact | None:  # fmt: skip
    """`variant`'s impact: `explicit`, else committed GPU then CPU evidence, else None."""
    if explicit is not None:
        check_file(explicit)
        found = render_file(explicit, variant, siblings, tested=tested)
        beside = explicit.parent if (explicit.parent / QUOTED).is_file() else None
        quote = quoted(beside or evidence_dir(manifest_path), entry)
        return dataclasses.replace(found, quote=quote)
    folder = evidence_dir(manifest_path)
    files = gpu_files(folder) + [p for p in [folder / CPU_EVIDENCE] if p.is_file()]
    if not files:
        return None
    parts = [render_file(p, variant, siblings, tested=tested) for p in files]
    figures = "\n\n".join(p.figures.strip() for p in parts)
    pair = next((p.pair for p in parts if p.pair), "")
    return Impact(figures, tuple(s for p in parts for s in p.sources), pair, quoted(folder, entry))
