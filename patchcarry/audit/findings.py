"""What fails an audit: a new site, bytes rising every iteration, or unreachable bytes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from patchcarry.audit import known

UNATTRIBUTED = "not attributed"
# The unattributed bytes an audit tolerates: c76ff61 leaves one 4-byte scalar no path reaches.
UNATTRIBUTED_FLOOR = 1024


@dataclasses.dataclass(frozen=True)
class Finding:
    variant: str
    config: str
    site: str  # a site, UNATTRIBUTED, or (judge: "not built") the configuration's error
    kind: str  # new | grows | not attributed; the judge's: appears | survives patches | not built
    series: tuple[int, ...]  # bytes at each iteration
    detail: str = ""
    baseline: int | None = None  # (the judge) its bytes at the pinned base; None: absent there


def status(site: dict[str, Any]) -> str | None:
    """The manifest entry that fixes a site, "expected" for state kept by design, or None."""
    return site["known"] or ("expected" if known.expected(site["site"]) else None)


def site_names(config: dict[str, Any]) -> list[str]:
    """Every site of a configuration, in order of first appearance."""
    return list(dict.fromkeys(s["site"] for i in config["iterations"] for s in i["sites"]))


def series(config: dict[str, Any], name: str) -> tuple[int, ...]:
    """A site's bytes at each iteration (0 where absent)."""
    return tuple(
        next((s["bytes"] for s in i["sites"] if s["site"] == name), 0) for i in config["iterations"]
    )


def unattributed_series(config: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(i["unattributed"]["bytes"]) for i in config["iterations"])


def rising(values: tuple[int, ...]) -> bool:
    """More at every iteration than at the one before (two iterations at least)."""
    return len(values) >= 2 and all(b > a for a, b in zip(values, values[1:], strict=False))


def last_site(config: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for i in reversed(config["iterations"]) for s in i["sites"] if s["site"] == name)


def describe_unattributed(config: dict[str, Any], limit: int = 3) -> str:
    """The largest unattributed tensors of the last iteration: bytes, dtype, shape, op."""
    tensors = config["iterations"][-1]["unattributed"]["tensors"] if config["iterations"] else []
    parts = [f"{t['bytes']} B {t['dtype']}{list(t['shape'])} op {t.get('op') or '?'}"
             + (f" from {t['origin']}" if t.get("origin") else "")
             for t in sorted(tensors, key=lambda t: -int(t["bytes"]))[:limit]]  # fmt: skip
    return "; ".join(parts)


def of_config(variant: str, config: dict[str, Any]) -> Iterator[Finding]:
    if config["error"] or not config["iterations"]:
        return
    name = config["name"]
    for site in site_names(config):
        values = series(config, site)
        if status(last_site(config, site)) is None:
            yield Finding(variant, name, site, "new", values)
        if rising(values):
            yield Finding(variant, name, site, "grows", values)
    values = unattributed_series(config)
    if rising(values):
        yield Finding(variant, name, UNATTRIBUTED, "grows", values, describe_unattributed(config))
    elif values[-1] > UNATTRIBUTED_FLOOR:
        yield Finding(
            variant, name, UNATTRIBUTED, UNATTRIBUTED, values, describe_unattributed(config)
        )


def of_doc(doc: dict[str, Any]) -> list[Finding]:
    """Every finding of an evidence document, in its order."""
    return [f for v in doc["variants"] if v["status"] == "audited" for c in v["configs"]
            for f in of_config(v["name"], c)]  # fmt: skip


def line(f: Finding) -> str:
    """One finding as a line of the text report."""
    values = " → ".join(f"{b} B" for b in f.series)
    detail = f" ({f.detail})" if f.detail else ""
    return f"{f.kind.upper()}: {f.variant} / {f.config}: {f.site}: {values}{detail}"
