"""Find every byte a Megatron model keeps alive between iterations, and who holds it.

Builds upstream's GPTModel once per variant (unpatched, fix, reset, both), each in its own
process on its own patched tree; runs N iterations; lists every live tensor that is not a
parameter, grad, optimizer state or buffer, by the path that keeps it reachable, grouped by
site. --fail-on-new: exit 1 on a site no entry fixes, a growing one, or unattributed bytes.
More: the README's Audit section.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from patchcarry.commands import argtypes
from patchcarry.commands.measure import positive
from patchcarry.errors import BadInputError, ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", choices=("hc-gpt", "synthetic"), default="hc-gpt")
    parser.add_argument("--variants", default="unpatched,fix,reset,both",
                        help="comma-separated subset of unpatched,fix,reset,both")  # fmt: skip
    parser.add_argument(
        "--config", action="append", default=[],
        help="configuration name (repeatable; default hc-full-uniform-1); see --list-configs",
    )  # fmt: skip
    parser.add_argument("--sweep", action="store_true", help="every known configuration")
    parser.add_argument("--list-configs", action="store_true")
    parser.add_argument("--iterations", type=positive, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--megatron-src", type=Path)
    argtypes.add_upstream(parser, when="no tree given: the pinned base from it")
    argtypes.add_manifest(parser)
    parser.add_argument("--json", type=Path, metavar="PATH", help="evidence file")
    parser.add_argument("--markdown", type=Path, metavar="PATH")
    parser.add_argument(
        "--render", type=Path, metavar="JSON",
        help="run nothing: print (and with --markdown write) the tables of an evidence file",
    )  # fmt: skip
    parser.add_argument(
        "--fail-on-new", action="store_true",
        help="exit 1 on a new site (any holder), a growing one, or unattributed bytes",
    )  # fmt: skip


def _configs(args: argparse.Namespace) -> list[dict[str, object]]:
    from patchcarry.audit import configs

    if args.model == "synthetic":
        return [{"name": "synthetic", "shape": {**configs.SHAPE, "streams": 1}, "overrides": {}}]
    names = list(configs.CONFIGS) if args.sweep else (args.config or [configs.DEFAULT])
    try:
        return configs.resolve(names)
    except KeyError as exc:
        raise BadInputError(str(exc.args[0])) from None


def run(args: argparse.Namespace) -> int:
    from patchcarry import manifest as manifest_mod
    from patchcarry.audit import configs, evidence, runner
    from patchcarry.measure import setup, variants

    if args.list_configs:
        for name, config in configs.CONFIGS.items():
            print(f"{name}: {config['overrides']}")
        for module, reason in configs.NOT_ON_CPU.items():
            print(f"(not built on CPU) {module}: {reason}")
        return ExitCode.OK
    if args.render:
        doc = evidence.load(args.render)
        return _report(doc, args)
    chosen = _configs(args)
    tree = setup.TreeFrom(args.model, args.megatron_src, args.upstream, args.manifest)
    src = setup.source_tree(tree)  # the same tree rules as measure
    manifest = manifest_mod.load(args.manifest) if args.manifest else manifest_mod.load()
    requested = [v.strip() for v in args.variants.split(",") if v.strip()]
    plan = variants.plan(manifest, requested)
    request = runner.Request(model=args.model, configs=tuple(chosen), device=args.device,
                             iterations=args.iterations)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="patchcarry-audit-") as work:
        results = runner.run(
            src, plan, request, Path(work), offline_note=variants.offline_note(manifest),
            progress=lambda line: print(f"audit: {line}", file=sys.stderr),
        )  # fmt: skip
    doc = evidence.build(request, results, tree=setup.tree_info(src))
    if args.json:
        print(f"evidence: {evidence.write(doc, args.json)}")
    return _report(doc, args)


def _report(doc: dict[str, Any], args: argparse.Namespace) -> int:
    from patchcarry.audit import evidence, findings

    print(evidence.render_text(doc))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(evidence.render_markdown(doc) + "\n")
        print(f"markdown: {args.markdown}")
    if args.fail_on_new and findings.of_doc(doc):
        return ExitCode.FAILED
    return ExitCode.OK
