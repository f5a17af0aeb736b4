"""Answers of an unexpected shape (issue 47, item 8): each of the loopback GitHub's real
answers, with one field the tool reads turned into another JSON type (a login as a number, a
null PR number, a list for a repository), is refused where it enters: one line naming the
request, exit 6 (docs/exit-codes.md), never a traceback wherever it is first touched."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

import pytest

from patchcarry import cli
from patchcarry import github_types as t
from patchcarry.errors import ExitCode
from patchcarry.github import GitHub, GitHubError, MalformedAnswerError
from testing import github_scenarios as sc
from testing import hostile_github as hostile
from testing.fake_github import FakeGitHub, GitHubState

Where = tuple[str | int, ...]

# each verb of the door, called as a run calls it, and the shape its answer must have
VERBS: dict[str, tuple[Callable[[GitHub], Any], Any]] = {
    "user": (lambda gh: gh.user(), t.UserRef),
    "repo": (lambda gh: gh.repo(sc.NEW_FORK), t.RepoRef),
    "pull": (lambda gh: gh.pull(sc.UPSTREAM, 6117), t.PullRef),
    "pulls": (lambda gh: gh.pulls(sc.UPSTREAM, state="all"), tuple[t.PullRef, ...]),
    "search": (lambda gh: gh.search_issues(f"repo:{sc.UPSTREAM}"), t.SearchPage),
    "events": (lambda gh: gh.issue_events(sc.UPSTREAM, 6117), tuple[t.EventRef, ...]),
    "comments": (lambda gh: gh.issue_comments(sc.UPSTREAM, 6017), tuple[t.CommentRef, ...]),
    "rules": (lambda gh: gh.branch_rules(sc.UPSTREAM, "dev"), tuple[t.RuleRef, ...]),
    "comment": (lambda gh: gh.create_comment(sc.UPSTREAM, 6017, "x"), t.CommentRef),
    "update": (lambda gh: gh.update_pull(sc.UPSTREAM, 6117, title="t"), t.PullRef),
}


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeGitHub]:
    with FakeGitHub(GitHubState()) as fake:
        sc.detached_fork_close(fake.state, tmp_path_factory.mktemp("up") / "upstream.git", None)
        checks = {"required_status_checks": [{"context": "DCO gate"}]}
        fake.state.add_branch_rule(sc.UPSTREAM, "dev", "required_status_checks", checks)
        yield fake


def _declared(value: Any, shape: Any, at: Where = ()) -> Iterator[Where]:
    """The paths into `value` of every field `shape` reads, and of the objects on the way
    (a list: its first item)."""
    if get_origin(shape) is UnionType:
        shape = next(o for o in get_args(shape) if o is not type(None))
    if get_origin(shape) is tuple and value:
        yield from _declared(value[0], get_args(shape)[0], (*at, 0))
    elif dataclasses.is_dataclass(shape) and isinstance(value, dict):
        hints = get_type_hints(shape)
        for field in dataclasses.fields(shape):
            holder, path = value, t.path_of(field)
            for depth, key in enumerate(path, 1):
                if not isinstance(holder, dict) or key not in holder:
                    break
                yield (*at, *path[:depth])
                holder = holder[key]
            else:
                yield from _declared(holder, hints[field.name], (*at, *path))


def _other_type(value: Any) -> Any:
    """`value` as another JSON type: what a shape-changing answer sends instead."""
    if isinstance(value, bool):
        return "true"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 7
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return {"items": value}
    return ["null"]  # a null where one may stand: a list is not one


def _changed(answer: Any, path: Where) -> Any:
    answer = copy.deepcopy(answer)
    if not path:
        return _other_type(answer)
    holder = answer
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = _other_type(holder[path[-1]])
    return answer


def _is_error(answer: Any) -> bool:
    return isinstance(answer, dict) and "documentation_url" in answer


def _cases(fake: FakeGitHub) -> Iterator[tuple[str, Where]]:
    """Each verb, and every path it reads in the answer the door was given."""
    seen: list[Any] = []
    with hostile.RewritingFront(fake.url, lambda m, p, b: seen.append(b) or b) as front:
        gh = GitHub(host=front.url, token=sc.TOKEN)
        for name, (call, shape) in VERBS.items():
            call(gh)
            answer = seen[-1]
            assert answer, f"{name}: the world serves nothing to change"
            yield name, ()
            yield from dict.fromkeys((name, path) for path in _declared(answer, shape))


def test_every_field_read_of_another_type_is_refused_at_the_door_in_one_line(
    fake: FakeGitHub,
) -> None:
    holder: dict[str, Callable[[str, str, Any], Any]] = {}
    cases = list(_cases(fake))
    assert len(cases) > 60  # the fields the tool reads, on every verb
    escaped = []
    with hostile.RewritingFront(fake.url, lambda m, p, b: holder["f"](m, p, b)) as front:
        gh = GitHub(host=front.url, token=sc.TOKEN, sleep=lambda s: None)
        gh.write_spacing = 0
        for name, path in cases:
            call, _ = VERBS[name]
            holder["f"] = lambda m, p, b, path=path: b if _is_error(b) else _changed(b, path)
            try:
                call(gh)
            except MalformedAnswerError as exc:
                said = str(exc)
                if len(said.splitlines()) != 1 or not said.startswith(("GET /", "PATCH", "POST")):
                    escaped.append((name, path, said))
                continue
            except Exception as exc:  # noqa: BLE001 (what escaped the door, reported below)
                escaped.append((name, path, repr(exc)))
                continue
            escaped.append((name, path, "accepted"))
    assert escaped == []
    assert MalformedAnswerError.exit_code == ExitCode.GITHUB


def test_a_command_given_a_malformed_answer_exits_6_in_one_line(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through `scan`: a null where the search's items carry the PR number."""

    def rewrite(method: str, path: str, answer: Any) -> Any:
        if path.startswith("/search/issues") and isinstance(answer, dict) and answer["items"]:
            answer["items"][0]["number"] = None
        return answer

    with hostile.RewritingFront(fake.url, rewrite) as front:
        monkeypatch.setenv("GH_HOST", front.url)
        monkeypatch.setenv("GITHUB_TOKEN", sc.TOKEN)
        assert cli.main(["scan", "--all"]) == ExitCode.GITHUB
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error: GET /search/issues") and "items[0].number is null" in err, err


def test_an_error_answer_of_another_shape_is_still_its_status(fake: FakeGitHub) -> None:
    """A 404 whose `message` is a number is still a 404, not a traceback."""
    with hostile.RewritingFront(fake.url, lambda m, p, b: {"message": 404, "errors": "x"}) as front:
        with pytest.raises(GitHubError, match="404 Not Found"):
            GitHub(host=front.url, token=sc.TOKEN).pull(sc.UPSTREAM, 1)
