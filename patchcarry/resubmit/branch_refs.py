"""The refs on the fork that record what this tool published on a branch, and by which entry
(see branch.py): named here, once, for the read phase that reads them and the write phase that
moves them."""

from __future__ import annotations


def record_ref(branch: str) -> str:
    """The fork ref naming the commit this tool last published on `branch`."""
    return f"refs/patchcarry/published/{branch}"


PUBLISHER_PREFIX = "refs/patchcarry/publisher/"


def publisher_ref(entry_name: str, branch: str) -> str:
    """The fork ref naming which entry published the record's commit on `branch`."""
    return f"{PUBLISHER_PREFIX}{entry_name}/{branch}"


def publisher_pattern(branch: str) -> str:
    """`git ls-remote` pattern for every entry's publisher ref of `branch`."""
    return f"{PUBLISHER_PREFIX}*/{branch}"


def publishers(found: dict[str, str], branch: str) -> dict[str, str]:
    """{entry name: commit} from an ls-remote answer (entry names hold no slash, so a
    longer branch ending in `/<branch>` does not count)."""
    out = {}
    for ref, sha in found.items():
        name = ref.removeprefix(PUBLISHER_PREFIX).removesuffix(f"/{branch}")
        if ref.startswith(PUBLISHER_PREFIX) and ref.endswith(f"/{branch}") and "/" not in name:
            out[name] = sha
    return out


def published_by(entry_name: str, published: str | None, named: dict[str, str]) -> str | None:
    """The entry the record names: this one when its publisher ref holds the record's
    commit, else another that does, else None."""
    if published is None:
        return None
    if named.get(entry_name) == published:
        return entry_name
    return next((name for name, sha in sorted(named.items()) if sha == published), None)
