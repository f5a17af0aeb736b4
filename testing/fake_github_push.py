"""The fake GitHub's git side for forks: receive-pack refuses what github.com's refuses, with
GitHub's words, per ref (`! [remote rejected] <ref> (<reason>)` in the pusher's output).

Fork repositories are local bare repos; git pushes to them run `git receive-pack` locally, in
the pusher's environment. A `proc-receive` hook (git >= 2.29, `receive.procReceiveRefs`)
takes over every ref update so it can answer `ng <ref> <reason>` per ref, as GitHub does:

- a classic/OAuth token without the `workflow` scope (a GitHub App without the `workflows`
  permission) may not create or update a file under `.github/workflows/` in any commit that
  is new to the repository, judged commit by commit, unless a branch of the repository
  already holds that file with the same contents (GitHub's scope documentation);
- hidden refs (`refs/pull/...`) are refused: "deny updating a hidden ref";
- a protected branch (`GitHubState.protected_branches`): "protected branch hook declined",
  with `GH006: Protected branch update failed for <ref>.` on a `remote:` line;
- a ruleset that refuses the branch (`GitHubState.ruleset_branches`): "push declined due to
  repository rule violations", `GH013: Repository rule violations found for <ref>.`;
- a new commit carrying the pusher's private email (`GitHubState.private_emails`, with
  "Block command line pushes that expose my email" on): "push declined due to email privacy
  restrictions", `GH007: Your push would publish a private email address.`

- a pusher without write access to the fork (its owner, an organisation's members, its
  collaborators) is refused, but for a branch some open PR comes from with "Allow edits by
  maintainers" on, which the base repository's writers may push to: "Permission to
  <repo>.git denied to <login>." (GitHub answers that at the HTTP level, with a 403);
- secret scanning's push protection (on by default for public repositories): a new commit
  adding a GitHub token (`ghp_` + 36 characters) is refused, "push declined due to repository
  rule violations", with `GH013` and `- GITHUB PUSH PROTECTION` ... `- Push cannot contain
  secrets` on `remote:` lines;
- a branch or tag named with 40 hex characters: "pre-receive hook declined", with
  `GH002: Sorry, branch or tag names consisting of 40 hex characters are not allowed.`;
- a merge commit is judged by the workflow files it results in, against its first parent
  (`git diff-tree` without `-m` prints nothing for a merge).

The GHxxx codes appear only in `remote:` lines (the hook's stderr), as on github.com.

The pusher is identified the way GitHub's credential is: `GITHUB_TOKEN` in its environment
(what patchcarry's credential helper sends). Only sha256 digests of tokens reach the hook's
data file. A push without a token is a local administrator's and is let through.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

TOKENS_FILE = "fake-github-tokens.json"
RULES_FILE = "fake-github-rules.json"

# Token kinds by prefix, as GitHub issues them.
CLASSIC, FINE_GRAINED, OAUTH, APP_USER, APP = "classic", "fine-grained", "oauth", "app", "actions"


def token_kind(token: str) -> str:
    """GitHub's token kind from its prefix; an unprefixed (legacy 40-hex) token is classic."""
    for prefix, kind in (
        ("github_pat_", FINE_GRAINED),
        ("ghp_", CLASSIC),
        ("gho_", OAUTH),
        ("ghu_", APP_USER),
        ("ghs_", APP),
    ):
        if token.startswith(prefix):
            return kind
    return CLASSIC


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_HOOK = r'''#!{python}
"""proc-receive of the fake GitHub (testing/fake_github_push.py)."""
import json, os, re, subprocess, sys

ZERO = "0" * 40
IN, OUT = sys.stdin.buffer, sys.stdout.buffer


def read():
    size = int(IN.read(4), 16)
    return None if size == 0 else IN.read(size - 4).decode().rstrip("\n")


def write(text=None):
    if text is None:
        OUT.write(b"0000")
    else:
        data = (text + "\n").encode()
        OUT.write(b"%04x" % (len(data) + 4) + data)
    OUT.flush()


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True).stdout


while read() is not None:
    pass
write("version=1")
write()
commands = []
while (line := read()) is not None:
    commands.append(line.split(" ", 2))

token = os.environ.get("GITHUB_TOKEN", "")
import hashlib
here = os.path.dirname(os.path.abspath(__file__))
tokens = json.load(open(os.path.join(here, "{tokens}")))
rules = json.load(open(os.path.join(here, "{rules}")))
info = tokens.get(hashlib.sha256(token.encode()).hexdigest()) if token else None


def say(*lines):
    sys.stderr.write("".join(line + "\n" for line in lines))
    sys.stderr.flush()


def exposes(new, email):
    for commit in git("rev-list", new, "--not", "--all").split():
        who = git("log", "-1", "--format=%ae%n%ce", commit).split()
        if email.lower() in (w.lower() for w in who):
            return commit
    return None


def on_a_branch(path, blob):
    """GitHub's scope documentation: a workflow file with the same path and contents on
    another branch of the repository may be committed without the scope."""
    for ref in git("for-each-ref", "--format=%(refname)", "refs/heads/").split():
        if git("rev-parse", "-q", "--verify", ref + ":" + path).strip() == blob:
            return True
    return False


def changed(commit, *paths):
    """`git diff-tree` raw lines of `commit` against its first parent: a merge's too (without
    `-m`, diff-tree prints nothing for a merge)."""
    parents = git("rev-list", "--parents", "-n", "1", commit).split()[1:]
    if len(parents) > 1:
        return git("diff-tree", "-r", parents[0], commit, "--", *paths).splitlines()
    return git("diff-tree", "--no-commit-id", "-r", "--root", commit, "--", *paths).splitlines()


def workflow_touched(new):
    """The first workflow file a commit new to the repository creates, updates or deletes,
    judged commit by commit (a change undone by a later commit still counts)."""
    for commit in git("rev-list", "--reverse", new, "--not", "--all").split():
        raw = changed(commit, ".github/workflows/")
        for line in sorted(raw, key=lambda x: x.split("\t", 1)[-1]):
            meta, _, path = line.partition("\t")
            blob, status = meta.split()[3], meta.split()[4]
            if status != "D" and on_a_branch(path, blob):
                continue
            return path
    return None


SECRET = re.compile(r"ghp_[A-Za-z0-9]{{36}}")


def secret_in(new):
    """(commit, path:line) of the first GitHub token a new commit adds, or None."""
    for commit in git("rev-list", "--reverse", new, "--not", "--all").split():
        path, line = None, 0
        for text in git("diff-tree", "-p", "--no-commit-id", "-r", "--root", commit).splitlines():
            if text.startswith("+++ "):
                path = text[6:] if text.startswith("+++ b/") else None
            elif text.startswith("@@"):
                line = int(text.split("+", 1)[1].split(",")[0].split(" ")[0]) - 1
            elif text.startswith("+") and path:
                line += 1
                if SECRET.search(text):
                    return commit, f"{{path}}:{{line}}"
            elif not text.startswith("-"):
                line += 1
    return None


def may_push(login, branch):
    if login.lower() in (w.lower() for w in rules.get("writers", [])):
        return True
    allowed = rules.get("maintainer_branches", {{}}).get(branch or "", [])
    return login.lower() in (w.lower() for w in allowed)


def refusal(old, new, ref):
    if ref.startswith("refs/pull/"):
        return "deny updating a hidden ref"
    branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else None
    name = ref.split("/", 2)[-1]
    if ref.startswith(("refs/heads/", "refs/tags/")) and re.fullmatch("[0-9a-fA-F]{{40}}", name):
        say("error: GH002: Sorry, branch or tag names consisting of 40 hex characters are "
            "not allowed.", "error: Invalid branch or tag name \"" + name + "\"")
        return "pre-receive hook declined"
    if info is not None and info.get("login") and not may_push(info["login"], branch):
        say(f"Permission to {{rules.get('repo', '')}}.git denied to {{info['login']}}.")
        return "permission denied"
    if branch in rules.get("protected", []):
        say(f"error: GH006: Protected branch update failed for {{ref}}.",
            "error: Changes must be made through a pull request.")
        return "protected branch hook declined"
    if branch in rules.get("rulesets", []):
        say(f"error: GH013: Repository rule violations found for {{ref}}.",
            "Review all repository rules at https://github.com/" + rules.get("repo", "")
            + "/rules?ref=" + ref.replace("/", "%2F"), "",
            "- Cannot update this protected ref.", "")
        return "push declined due to repository rule violations"
    if info is None or new == ZERO:
        return None
    if info.get("private_email") and exposes(new, info["private_email"]):
        say("error: GH007: Your push would publish a private email address.",
            "You can make your email public or disable this protection by visiting:",
            "https://github.com/settings/emails")
        return "push declined due to email privacy restrictions"
    found = secret_in(new)
    if found is not None:
        commit, where = found
        say(f"error: GH013: Repository rule violations found for {{ref}}.", "",
            "- GITHUB PUSH PROTECTION",
            "  " + "\u2014" * 41,
            "    Resolve the following violations before pushing again", "",
            "    - Push cannot contain secrets", "", "",
            "     (?) Learn how to resolve a blocked push",
            "     https://docs.github.com/code-security/secret-scanning/"
            "pushing-a-branch-blocked-by-push-protection", "", "",
            "      \u2014\u2014 GitHub Personal Access Token " + "\u2014" * 22,
            "       locations:", f"         - commit: {{commit}}", f"           path: {{where}}",
            "", "       (?) To push, remove secret from commit(s) or follow this URL to "
            "allow the secret.", "")
        return "push declined due to repository rule violations"
    path = workflow_touched(new)
    if path is None:
        return None
    if info["kind"] in ("classic", "oauth") and "workflow" not in info["scopes"]:
        who = "an OAuth App" if info["kind"] == "oauth" else "a Personal Access Token"
        return (f"refusing to allow {{who}} to create or update workflow `{{path}}` "
                "without `workflow` scope")
    if info["kind"] in ("app", "actions") and "workflows" not in info["scopes"]:
        return (f"refusing to allow a GitHub App to create or update workflow `{{path}}` "
                "without `workflows` permission")
    return None


reasons = [refusal(*c) for c in commands]
if any(reasons):  # all or nothing, like an --atomic push
    for (old, new, ref), why in zip(commands, reasons):
        write(f"ng {{ref}} {{why or 'atomic push failed'}}")
else:
    for old, new, ref in commands:
        if new == ZERO:
            subprocess.run(["git", "update-ref", "-d", ref, old], check=True)
        else:
            subprocess.run(["git", "update-ref", ref, new, old], check=True)
        write(f"ok {{ref}}")
write()
'''


def install(
    git_dir: Path, tokens: dict[str, dict[str, object]], rules: dict[str, object] | None = None
) -> None:
    """Give a fork's bare repository GitHub's receive rules, the current tokens and its own
    branch rules (`protected`, `rulesets`: branch names; `repo`: its full name)."""
    hooks = git_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "proc-receive"
    if not hook.exists():
        hook.write_text(_HOOK.format(python=sys.executable, tokens=TOKENS_FILE, rules=RULES_FILE))
        hook.chmod(0o755)
        # git's config syntax, appended: one process fewer for each fork the suite makes
        with (git_dir / "config").open("a", encoding="utf-8") as config:
            config.write("[receive]\n\tprocReceiveRefs = refs/\n")
    (hooks / TOKENS_FILE).write_text(json.dumps(tokens))
    (hooks / RULES_FILE).write_text(json.dumps(rules or {}))
