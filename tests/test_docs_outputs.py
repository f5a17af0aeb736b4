"""Every command output README.md and docs/ show is what that command prints today."""

from __future__ import annotations

import pytest

from testing import docs_outputs
from testing.shared_outputs import printed

LOOPBACK_BLOCKS = [
    (name, command)
    for name in docs_outputs.FILES
    if (docs_outputs.ROOT / name).is_file()
    for command in docs_outputs.blocks((docs_outputs.ROOT / name).read_text())
    if not docs_outputs.needs_mirror(command)
]


def test_the_readme_shows_the_first_commands_real_output() -> None:
    readme = (docs_outputs.ROOT / "README.md").read_text()
    assert "scripts/resubmit.sh --dry-run --offline" in docs_outputs.blocks(readme)


def test_every_block_names_a_known_command() -> None:
    for name in docs_outputs.FILES:
        path = docs_outputs.ROOT / name
        if path.is_file():
            unknown = set(docs_outputs.blocks(path.read_text())) - set(docs_outputs.COMMANDS)
            assert not unknown, f"{name}: no command known for {unknown}"


@pytest.mark.parametrize(("name", "command"), LOOPBACK_BLOCKS)
def test_block_is_what_its_command_prints(
    name: str, command: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = (docs_outputs.ROOT / name).read_text()
    shown = next(m.group(4) for m in docs_outputs.BLOCK_RE.finditer(text) if m.group(2) == command)
    assert shown == printed(tmp_path_factory, command), (
        f"{name} is stale for `{command}`: run scripts/render-docs"
    )


def test_normalise_hides_what_differs_between_runs() -> None:
    text = "cache /tmp/demo-x1/c/patchcarry/upstream/0123456789abcdef at http://127.0.0.1:40123 \n"
    assert docs_outputs.normalise(text) == (
        "cache $TMP/c/patchcarry/upstream/<hash> at http://127.0.0.1:PORT\n"
    )
