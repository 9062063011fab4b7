"""Read rules hold against a repository's history and a file's other names (attack corpus, class 13): with
``fs.read(secrets/**)`` denied, no git command, no zlib on ``.git/objects`` and no hard link made before the rule
prints the secret. Real git repositories in temp folders, real bwrap, the real registry; as root and as an
unprivileged user."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import GIT_ENV, NOBODY, as_user, git, give_to
from tests.registry._support import settings
from tests.security._support import workspace

from kairox.policy import NonInteractiveApprover, Rule
from kairox.registry import ToolRegistry, build_registry
from kairox.tools import ToolCall, ToolResult

PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
KEY = "KEY-3b9e61d0-secret"
OLD = "OLD-a7c25e14-secret"
"""An earlier version of the key, only in the history."""
STASHED = "STASHED-5d0f9b23-secret"
ENV = "ENV-c41a8e77-secret"
SECRETS = (KEY, OLD, STASHED, ENV)
PLAIN = "PLAIN-tracked-text"
DENY = Rule(action="deny", pattern="fs.read(secrets/**)", layer="user", file="kairox.toml", line=1)
DENY_ENV = Rule(action="deny", pattern="fs.read(**/.env)", layer="user", file="kairox.toml", line=2)


def repository(ws: Path, *, packed: bool = False) -> dict[str, str]:
    """A repository whose history holds every secret: the key committed twice, a stash, a `.env` committed and
    removed, a commit message file with a diff; the work tree holds the current key and a tracked neighbour.
    Returns the blobs' names."""
    git(ws, "init", "-q", "-b", "main")
    (ws / "secrets").mkdir(exist_ok=True)
    (ws / "secrets" / "key.txt").write_text(OLD + "\n")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    (ws / ".env").write_text(ENV + "\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    (ws / "secrets" / "key.txt").write_text(KEY + "\n")
    git(ws, "rm", "-q", ".env")
    git(ws, "commit", "-qam", "rotate the key, drop .env")
    (ws / "secrets" / "key.txt").write_text(STASHED + "\n")
    git(ws, "stash", "-q")
    blobs = {
        secret: subprocess.run(
            ["git", "hash-object", "--stdin"], input=secret + "\n", cwd=ws, capture_output=True, text=True, check=True
        ).stdout.strip()
        for secret in SECRETS
    }
    (ws / ".git" / "COMMIT_EDITMSG").write_text(
        f"rotate the key\n# diff kept by commit -v\n-{OLD}\n+{KEY}\n"
    )  # as `git commit -v` leaves it
    if packed:
        git(ws, "gc", "-q", "--prune=now")
    return blobs


ZLIB = """import os, zlib
for top, _, names in os.walk('.git'):
    for name in names:
        try:
            data = open(os.path.join(top, name), 'rb').read()
        except OSError:
            continue
        for start in range(len(data)):
            try:
                print(zlib.decompressobj().decompress(data[start:]).decode('latin-1'))
            except zlib.error:
                pass
"""

GIT_ATTACKS = [
    "git show HEAD:secrets/key.txt HEAD~1:secrets/key.txt HEAD~1:.env",
    "git cat-file -p BLOB_KEY; git cat-file -p BLOB_OLD; git cat-file --batch-all-objects --batch",
    "git log -p --all",
    "git diff HEAD~1 HEAD; git diff HEAD~1 -- .env",
    "git archive HEAD~1 | tar xOf -",
    "git grep -e secret HEAD HEAD~1",
    "git stash show -p",
    "git blame secrets/key.txt; git blame HEAD~1 -- .env",
    "git format-patch --stdout -2 HEAD",
    "git bundle create out.bundle --all && git clone -q out.bundle unbundled && git -C unbundled log -p | cat",
    "git clone -q . clone; cat clone/secrets/key.txt clone/.env; "
    "git clone -q --no-local . clone2; cat clone2/secrets/key.txt",
    "git fast-export --all",
    "git reflog -p",
    "cp .git/index idx; GIT_INDEX_FILE=idx "
    "git checkout -q HEAD~1 -- .env; cat .env",  # .git is read-only: its own index
    f'{PYTHON} -c "$(cat peek_objects.py)"',
    "cat .git/objects/pack/*.pack | strings; find .git -type f -exec cat {} +",
]


async def call(registry: ToolRegistry, command: str) -> ToolResult:
    return await registry.call(ToolCall(name="shell.exec", arguments={"command": command}))


def revealed(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def no_copies(where: Path, *planted: Path) -> None:
    """No file the commands left (clones, bundles, checked-out files) holds a secret: read outside the sandbox."""
    for folder, _, names in os.walk(where):
        if Path(folder).is_relative_to(where / ".git"):
            continue  # the repository's own store, as it was
        for name in names:
            path = Path(folder) / name
            if path in (where / "secrets" / "key.txt", *planted) or path.is_symlink():
                continue
            data = path.read_bytes()
            assert not any(s.encode() in data for s in SECRETS), path


# --- the history -------------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
@pytest.mark.parametrize("attack", GIT_ATTACKS)
async def test_a_command_cannot_read_a_hidden_path_from_the_history(tmp_path: Path, attack: str, packed: bool) -> None:
    ws = workspace(tmp_path)
    blobs = repository(ws, packed=packed)
    (ws / "peek_objects.py").write_text(ZLIB)
    registry = await build_registry(settings(ws, DENY, DENY_ENV), approver=NonInteractiveApprover())

    command = attack.replace("BLOB_KEY", blobs[KEY]).replace("BLOB_OLD", blobs[OLD])
    result = await call(registry, f"{command}; cat notes.txt; git ls-files")

    text = result.text_content()
    assert revealed(text) == [], text
    assert PLAIN in text and "secrets/key.txt" in text, text  # it ran: the work tree and the index are still there
    no_copies(ws)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_git_status_fails_with_the_rule_and_what_to_do(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    result = await call(registry, "git status")

    assert result.is_error
    assert result.text_content().splitlines()[-1] == (
        f"[rules on reading: the history of the git repository at {ws} is hidden (deny rule 'fs.read(secrets/**)' "
        "(kairox.toml:1) reaches it, and a repository keeps what it ever held): git commands that read objects "
        "(status, log, diff, show, clone) fail here; run them outside the sandbox, or narrow the rule to paths "
        "outside the repository]"
    )


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_removed_path_still_hides_the_history_that_holds_it(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    git(ws, "rm", "-rq", "secrets")
    git(ws, "commit", "-qm", "no more secrets in the tree")
    shutil.rmtree(ws / "secrets", ignore_errors=True)
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    result = await call(
        registry, "git show HEAD~1:secrets/key.txt HEAD~2:secrets/key.txt; git log -p | cat; cat notes.txt"
    )

    assert revealed(result.text_content()) == [] and PLAIN in result.text_content(), result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_linked_worktree_hides_the_history_it_shares(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    repository(main)
    ws = workspace(tmp_path)
    shutil.rmtree(ws)
    git(main, "worktree", "add", "-q", str(ws), "-b", "side")
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    result = await call(
        registry,
        "git show main:secrets/key.txt; git log -p main | cat; find "
        f"{main}/.git -type f -exec cat {{}} + | strings; cat notes.txt",
    )

    assert revealed(result.text_content()) == [] and PLAIN in result.text_content(), result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_the_stores_it_borrows_from_are_hidden_too(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    repository(origin)
    ws = workspace(tmp_path)
    shutil.rmtree(ws)
    git(tmp_path, "clone", "-q", "--shared", str(origin), str(ws))  # objects/info/alternates -> origin's objects
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    result = await call(
        registry,
        f"git show HEAD~1:secrets/key.txt; find {origin}/.git/objects "
        f"-type f -exec cat {{}} + | strings | head; cat notes.txt",
    )

    assert revealed(result.text_content()) == [] and PLAIN in result.text_content(), result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_repository_without_a_hidden_path_keeps_its_history(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    registry = await build_registry(
        settings(ws, Rule(action="deny", pattern=f"fs.read({tmp_path / 'home'}/**)")), approver=NonInteractiveApprover()
    )

    result = await call(registry, "git show HEAD:notes.txt && git status --short")

    assert not result.is_error and PLAIN in result.text_content(), result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_fs_read_and_search_refuse_the_hidden_history(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    repository(ws)
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    read = await registry.call(ToolCall(name="fs.read", arguments={"path": ".git/COMMIT_EDITMSG"}))
    search = await registry.call(ToolCall(name="search.ripgrep", arguments={"pattern": "secret", "path": ".git"}))

    assert read.is_error and "holds the history of the git repository" in read.text_content(), read.text_content()
    assert revealed(read.text_content() + search.text_content()) == [], search.text_content()


# --- other names of a hidden file --------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_other_names_of_a_hidden_file_are_hidden_too(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "secrets" / "key.txt").write_text(KEY + "\n")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    os.link(ws / "secrets" / "key.txt", ws / "src" / "innocent.txt")  # made before the rule was written
    (ws / ".git").mkdir()
    os.link(ws / "secrets" / "key.txt", ws / ".git" / "kept")
    os.link(ws / "secrets" / "key.txt", tmp_path / "tmp" / "copy")  # a configured writable root
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    result = await call(
        registry, f"cat src/innocent.txt .git/kept {tmp_path}/tmp/copy; grep -r secret . {tmp_path}/tmp; cat notes.txt"
    )

    assert revealed(result.text_content()) == [] and PLAIN in result.text_content(), result.text_content()
    assert (
        f"[rules on reading: {tmp_path / 'tmp' / 'copy'}, {ws / '.git' / 'kept'}"
        f", {ws / 'src' / 'innocent.txt'}: another name (hard link) "
        f"of {ws / 'secrets' / 'key.txt'}, which deny rule "
        "'fs.read(secrets/**)' (kairox.toml:1) covers, so it is hidden too]"
    ) in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_hidden_file_with_a_name_outside_the_roots_refuses_the_command(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "secrets" / "key.txt").write_text(KEY + "\n")
    (tmp_path / "elsewhere").mkdir()
    os.link(ws / "secrets" / "key.txt", tmp_path / "elsewhere" / "key-copy")
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    result = await call(registry, f"cat {tmp_path}/elsewhere/key-copy; touch ran")

    assert result.is_error and revealed(result.text_content()) == []
    assert (
        f"{ws / 'secrets' / 'key.txt'} (deny rule 'fs.read(secrets/**)' "
        "(kairox.toml:1)) has 1 other name(s) outside the "
        "workspace and the writable roots (hard links), where a command could read it"
    ) in result.text_content()
    assert "find / -xdev -samefile" in result.text_content()
    assert not (ws / "ran").exists()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_fs_read_search_and_list_refuse_another_name_of_a_hidden_file(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "secrets" / "key.txt").write_text(KEY + "\n")
    (ws / "notes.txt").write_text(PLAIN + "\n")
    os.link(ws / "secrets" / "key.txt", ws / "src" / "innocent.txt")
    (tmp_path / "elsewhere").mkdir()
    os.link(ws / "secrets" / "key.txt", tmp_path / "elsewhere" / "key-copy")
    registry = await build_registry(settings(ws, DENY), approver=NonInteractiveApprover())

    read = await registry.call(ToolCall(name="fs.read", arguments={"path": "src/innocent.txt"}))
    outside = await registry.call(
        ToolCall(name="fs.read", arguments={"path": str(tmp_path / "elsewhere" / "key-copy")})
    )
    search = await registry.call(ToolCall(name="search.ripgrep", arguments={"pattern": "secret|PLAIN"}))
    plain = await registry.call(ToolCall(name="fs.read", arguments={"path": "notes.txt"}))
    listing = await registry.call(ToolCall(name="fs.list", arguments={"path": "src"}))
    edit = await registry.call(
        ToolCall(name="fs.edit", arguments={"path": "src/innocent.txt", "old_string": "KEY", "new_string": "x"})
    )

    said = read.text_content() + outside.text_content() + search.text_content()
    assert revealed(said) == [], said
    assert read.is_error and outside.is_error
    assert (
        f"{ws / 'src' / 'innocent.txt'} may not be read: {ws / 'src' / 'innocent.txt'} is another name (hard link) of "
        f"{ws / 'secrets' / 'key.txt'}, which deny rule 'fs.read(secrets/**)' (kairox.toml:1) covers"
    ) in read.text_content()
    assert (
        "2 file(s) left out" in search.text_content() and PLAIN in search.text_content()
    )  # the file, and its other name
    assert not plain.is_error and PLAIN in plain.text_content()
    assert (
        listing.text_content()
        == "(no files)\n[fs.list: 1 file(s) left out: reading them is denied or needs approval ("
        + (
            f"{ws / 'src' / 'innocent.txt'} is another name (hard link) of {ws / 'secrets' / 'key.txt'}"
            ", which deny rule 'fs.read(secrets/**)' (kairox.toml:1) covers)]"
        )
    )
    assert (
        edit.is_error
        and "may not be read" in edit.text_content()
        and (ws / "secrets" / "key.txt").read_text() == KEY + "\n"
    )


# --- root inside the sandbox, and an unprivileged user, through the real `kairox` command -----------------------


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    """A repository both users can reach (pytest's folders are private to root), its history holding the secrets."""
    base = Path(tempfile.mkdtemp(prefix="kairox-history-", dir="/tmp"))
    base.chmod(0o755)
    ws = base / "ws"
    ws.mkdir()
    (base / "kx").mkdir()
    (base / "kx" / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    (base / "kx" / "kairox.toml").write_text('[policy.rules]\ndeny = ["fs.read(secrets/**)", "fs.read(**/.env)"]\n')
    repository(ws, packed=True)
    (ws / "peek_objects.py").write_text(ZLIB)
    os.link(ws / "secrets" / "key.txt", ws / "innocent.txt")
    give_to(user, base)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.timeout(120)
def test_the_kairox_command_hides_the_history_from_root_and_from_an_unprivileged_user(place: Path, user: str) -> None:
    env = {
        **os.environ,
        **GIT_ENV,
        "KAIROX_HOME": str(place / "kx"),
        "KAIROX_SANDBOX_POLICY": "workspace_write",
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
    }
    command = " ; ".join(GIT_ATTACKS).replace("BLOB_KEY", "HEAD:secrets/key.txt").replace("BLOB_OLD", "HEAD~1:.env")
    command += " ; cat innocent.txt; cat notes.txt; id -u"
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
    run = subprocess.run(argv, cwd=place / "ws", env=env, capture_output=True, text=True, timeout=110, check=False)

    said = run.stdout + run.stderr
    assert revealed(said) == [], said
    assert PLAIN in said and f"\n{0 if user == 'root' else NOBODY}\n" in said, said  # it ran, as that user
    no_copies(place / "ws", place / "ws" / "innocent.txt")
