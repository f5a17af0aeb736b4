"""Upstream's PR template, read where GitHub reads it and filled the way a person would:
the description under its "What does this PR do?" heading, every other line kept, a box
ticked only where the PR makes it true."""

from __future__ import annotations

from pathlib import Path

from patchcarry import git, pr_template

IDENT = ("-c", "user.name=A", "-c", "user.email=a@example.com")
TEMPLATE = (
    "- [ ] I, the PR author, have personally reviewed every line of this PR.\n\n"
    "# What does this PR do?\n"
    "<!-- Add a one line overview of what this PR aims to accomplish. -->\n\n"
    "## Issue tracking\n\nLinked issue: <!-- e.g. Fixes #1234 / Related to #1234 -->\n\n"
    "### Pre-checks\n\n- [ ] I have added relevant unit tests\n"
    "- [ ] I have added relevant functional tests\n- [ ] I have added relevant documentation\n"
)


def test_the_description_goes_under_the_templates_heading_and_every_line_stays() -> None:
    body = pr_template.fill(TEMPLATE, "Clears .grad.\n\nSECTION", ticks=["unit tests"])
    lines = body.splitlines()
    assert lines[0] == "- [ ] I, the PR author, have personally reviewed every line of this PR."
    what = lines.index("# What does this PR do?")
    assert lines[what + 1].startswith("<!-- Add a one line overview")
    assert lines[what + 3] == "Clears .grad." and body.index("SECTION") < body.index("## Issue")
    assert "Linked issue: <!-- e.g. Fixes #1234 / Related to #1234 -->" in lines
    assert "- [x] I have added relevant unit tests" in lines
    assert "- [ ] I have added relevant functional tests" in lines
    assert "- [ ] I have added relevant documentation" in lines
    unticked = body.replace(
        "- [x] I have added relevant unit tests", "- [ ] I have added relevant unit tests"
    )
    assert unticked.replace("Clears .grad.\n\nSECTION\n\n", "") == TEMPLATE


def test_no_box_is_ticked_unless_asked_and_a_template_without_the_heading_gets_it_on_top() -> None:
    assert "[x]" not in pr_template.fill(TEMPLATE, "What.")
    body = pr_template.fill("## Checklist\n- [ ] I have added relevant unit tests\n", "What.")
    assert body.startswith("What.\n\n## Checklist\n")


def _repo(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    repo = tmp_path / "up"
    git.init(repo)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git.git("add", "-A", cwd=repo)
    git.git(*IDENT, "commit", "-qm", "x", "--allow-empty", cwd=repo)
    git.git("branch", "-M", "main", cwd=repo)
    return repo, git.rev_parse("HEAD", cwd=repo)


def test_read_looks_where_github_does_whatever_the_case(tmp_path) -> None:
    repo, sha = _repo(tmp_path, {".github/PULL_REQUEST_TEMPLATE.md": "dot-github\r\n",
                                 "docs/pull_request_template.md": "docs\n"})  # fmt: skip
    assert pr_template.read(repo, sha) == "dot-github\n"
    git.git("rm", "-q", ".github/PULL_REQUEST_TEMPLATE.md", cwd=repo)
    git.git(*IDENT, "commit", "-qm", "y", cwd=repo)
    assert pr_template.read(repo, "HEAD") == "docs\n"
    git.git("rm", "-q", "docs/pull_request_template.md", cwd=repo)
    git.git(*IDENT, "commit", "-qm", "z", cwd=repo)
    assert pr_template.read(repo, "HEAD") is None


def test_fetch_brings_the_default_branchs_tip_into_the_cache(tmp_path) -> None:
    repo, sha = _repo(tmp_path, {".github/pull_request_template.md": "the template\n"})
    cache = tmp_path / "cache"
    git.git("init", "-q", "--bare", str(cache), cwd=tmp_path)
    git.git("remote", "add", "origin", f"file://{repo}", cwd=cache)
    git.git("config", "remote.origin.uploadpack", git.LOCAL_UPLOAD_PACK, cwd=cache)
    ref = pr_template.fetch(cache, "main")
    assert ref is not None and git.rev_parse(ref, cwd=cache) == sha
    assert pr_template.read(cache, ref) == "the template\n"
    assert pr_template.fetch(cache, "no-such-branch") is None
