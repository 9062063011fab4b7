"""Read rules hide a repository's history only when that history may hold what they hide: with ``fs.read(**/.env)``
or ``fs.read(./.env)`` denied, a git-ignored ``.env`` that was never committed leaves ``git status``, ``diff`` and
``log -p`` working; once any commit, stash, branch, reflog, index or stored blob holds it, the history is hidden and
no git command prints it. Real git repositories in temp folders, real bwrap, the real registry; as root and as an
unprivileged user."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.helpers import GIT_ENV, NOBODY, as_user, git, give_to
from tests.registry._support import settings
from tests.security._support import workspace

from kairox.policy import NonInteractiveApprover, Rule
from kairox.registry import ToolRegistry, build_registry
from kairox.sandbox._readmask import ReadMask
from kairox.tools import ToolCall, ToolResult

ENV = "ENV-9d1f27c3-secret"
"""What ``.env`` holds now."""
OLD = "OLD-e85b0a46-secret"
"""What it held earlier, only in the history (so the walk by name, not the look-up by content, must find it)."""
PLAIN = "PLAIN-tracked-text"
EDITED = "EDITED-tracked-text"
RULES = {
    "name": Rule(action="deny", pattern="fs.read(**/.env)", layer="user", file="kairox.toml", line=1),
    "literal": Rule(action="deny", pattern="fs.read(./.env)", layer="user", file="kairox.toml", line=1),
}
GIT_WORKS = "git status --short; git diff; git log -p | cat"
ATTACKS = (
    "git log -p --all --reflog | cat; git show stash@{0}^3:.env "
    "side:.env; git --no-replace-objects log -p --all | cat; "
    "git cat-file --batch-all-objects --batch; git show :.env; git fsck --lost-found; git status; cat notes.txt"
)


def repository(ws: Path) -> None:
    """A repository whose history never held ``.env``: it is ignored, and holds the secret in the work tree."""
    git(ws, "init", "-q", "-b", "main")
    (ws / ".gitignore").write_text(".env\n")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    (ws / "notes.txt").write_text(PLAIN + "\nmore\n")
    git(ws, "commit", "-qam", "second")
    (ws / ".env").write_text(ENV + "\n")


def _committed_then_removed(ws: Path) -> None:
    (ws / ".env").write_text(OLD + "\n")
    git(ws, "add", "-f", ".env")
    git(ws, "commit", "-qm", "add .env")
    git(ws, "rm", "-q", "--cached", ".env")
    git(ws, "commit", "-qm", "drop .env")


def _stashed(ws: Path) -> None:
    (ws / ".env").write_text(OLD + "\n")
    git(ws, "stash", "push", "-q", "--all")  # ignored files too: the stash's third parent holds .env


def _on_a_branch(ws: Path) -> None:
    git(ws, "checkout", "-q", "-b", "side")
    (ws / ".env").write_text(OLD + "\n")
    git(ws, "add", "-f", ".env")
    git(ws, "commit", "-qm", "on side only")
    git(ws, "checkout", "-q", "main")


def _merged_away(ws: Path) -> None:
    _on_a_branch(ws)
    git(ws, "merge", "-q", "-s", "ours", "-m", "keep main's tree", "side")  # the merge is main's tree: no .env in it
    git(ws, "branch", "-qD", "side")
    git(ws, "reflog", "expire", "--expire=now", "--all")


def _renamed(ws: Path) -> None:
    (ws / "config.txt").write_text(OLD + "\n")
    git(ws, "add", "config.txt")
    git(ws, "commit", "-qm", "config")
    git(ws, "mv", "-f", "config.txt", ".env")
    git(ws, "commit", "-qm", "rename to .env")
    git(ws, "rm", "-q", "--cached", ".env")
    git(ws, "commit", "-qm", "stop tracking .env")


def _in_the_reflog(ws: Path) -> None:
    (ws / ".env").write_text(OLD + "\n")
    git(ws, "add", "-f", ".env")
    git(ws, "commit", "-qm", "oops")
    git(ws, "reset", "-q", "--hard", "HEAD~1")


def _behind_a_replace_ref(ws: Path) -> None:
    before = git(ws, "rev-parse", "HEAD")
    _committed_then_removed(ws)
    git(ws, "replace", git(ws, "rev-parse", "HEAD~1"), before)  # the commit that added .env looks like an older one
    git(ws, "reflog", "expire", "--expire=now", "--all")


def _staged(ws: Path) -> None:
    git(ws, "add", "-f", ".env")


def _staged_then_reset(ws: Path) -> None:
    git(ws, "add", "-f", ".env")
    git(ws, "reset", "-q")  # no name is left, the blob of what .env holds now is


HELD: dict[str, Callable[[Path], None]] = {
    "committed then removed": _committed_then_removed,
    "in a stash only": _stashed,
    "on another branch only": _on_a_branch,
    "on a branch merged away and deleted": _merged_away,
    "renamed from another name": _renamed,
    "in the reflog only after a reset": _in_the_reflog,
    "behind a replace ref": _behind_a_replace_ref,
    "in the index only": _staged,
    "added then reset": _staged_then_reset,
}


async def call(registry: ToolRegistry, command: str) -> ToolResult:
    return await registry.call(ToolCall(name="shell.exec", arguments={"command": command}))


def revealed(text: str) -> list[str]:
    return [s for s in (ENV, OLD) if s in text]


def note(ws: Path, rule: Rule) -> str:
    return (
        "[rules on reading: the history of the git repository at "
        f"{ws} is hidden (deny rule '{rule.pattern}' (kairox.toml:1) "
        "reaches it, and a repository keeps what it ever held): "
        "git commands that read objects (status, log, diff, show, "
        "clone) fail here; run them outside the sandbox, or narrow the rule to paths outside the repository]"
    )


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize("rule", RULES)
async def test_git_works_when_the_history_never_held_the_hidden_file(tmp_path: Path, rule: str) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    (ws / "notes.txt").write_text(EDITED + "\n")
    registry = await build_registry(settings(ws, RULES[rule]), approver=NonInteractiveApprover())

    result = await call(registry, f"{GIT_WORKS}; cat .env; {ATTACKS}")

    text = result.text_content()
    assert revealed(text) == [], text
    assert " M notes.txt\n" in text and f"+{EDITED}" in text and f"+{PLAIN}" in text, text  # status, diff, log -p
    assert "rules on reading" not in text, text


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("held", HELD)
async def test_the_history_is_hidden_once_it_holds_the_hidden_file(tmp_path: Path, held: str, rule: str) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    HELD[held](ws)
    (ws / ".env").write_text(ENV + "\n")
    registry = await build_registry(settings(ws, RULES[rule]), approver=NonInteractiveApprover())

    result = await call(registry, ATTACKS)

    text = result.text_content()
    assert revealed(text) == [], text
    assert PLAIN in text, text  # it ran
    assert text.splitlines()[-1] == note(ws, RULES[rule]), text


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_commit_of_the_hidden_file_between_two_commands_hides_the_history_from_the_next(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    registry = await build_registry(settings(ws, RULES["name"]), approver=NonInteractiveApprover())
    mask = registry.settings.sandbox.hidden
    assert isinstance(mask, ReadMask)
    mask.history.settle_ns = 50_000_000
    time.sleep(0.1)  # the repository's files had settled: their statuses show the next change

    first = await call(registry, "git log -p | cat")
    again = await call(registry, "git log -p | cat")
    walks = mask.history.walks
    git(ws, "add", "-f", ".env")
    git(ws, "commit", "-qm", "add .env after all")
    after = await call(registry, "git log -p | cat; git show HEAD:.env; cat notes.txt")

    assert not first.is_error and not again.is_error and PLAIN in again.text_content(), again.text_content()
    assert walks == 1  # the second command was answered from what the first one found
    assert mask.history.walks == 2
    assert revealed(after.text_content()) == [] and PLAIN in after.text_content(), after.text_content()
    assert after.text_content().splitlines()[-1] == note(ws, RULES["name"])


# --- root inside the sandbox, and an unprivileged user, through the real `kairox` command -----------------------


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    """A repository both users can reach (pytest's folders are private to root), its ``.env`` never committed."""
    base = Path(tempfile.mkdtemp(prefix="kairox-kept-", dir="/tmp"))
    base.chmod(0o755)
    ws = base / "ws"
    ws.mkdir()
    (base / "kx").mkdir()
    (base / "kx" / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    (base / "kx" / "kairox.toml").write_text('[policy.rules]\ndeny = ["fs.read(**/.env)"]\n')
    repository(ws)
    (ws / "notes.txt").write_text(EDITED + "\n")
    clone = base / "clone"
    git(base, "clone", "-q", str(ws), str(clone))
    _committed_then_removed(clone)
    (clone / ".env").write_text(ENV + "\n")
    give_to(user, base)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def kairox(place: Path, user: str, where: Path, command: str) -> str:
    env = {
        **os.environ,
        **GIT_ENV,
        "KAIROX_HOME": str(place / "kx"),
        "KAIROX_SANDBOX_POLICY": "workspace_write",
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
    }
    argv = [
        *as_user(user),
        sys.executable,
        "-m",
        "kairox",
        "tools",
        "call",
        "shell.exec",
        json.dumps({"command": command}),
    ]
    run = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, timeout=110, check=False)
    return run.stdout + run.stderr


@pytest.mark.timeout(120)
def test_the_kairox_command_keeps_a_clean_history_and_hides_a_holding_one_for_root_and_an_unprivileged_user(
    place: Path, user: str
) -> None:
    kept = kairox(place, user, place / "ws", f"{GIT_WORKS}; cat .env; id -u")
    hidden = kairox(place, user, place / "clone", f"{ATTACKS}; id -u")

    assert revealed(kept + hidden) == [], kept + hidden
    assert f"+{EDITED}" in kept and f"+{PLAIN}" in kept and "rules on reading" not in kept, kept
    assert f"\n{0 if user == 'root' else NOBODY}\n" in kept, kept  # it ran, as that user
    assert f"the history of the git repository at {place / 'clone'} is hidden" in hidden and PLAIN in hidden, hidden
