"""Read rules hold for commands too (attack corpus, class 13): what ``fs.read`` deny and ask rules forbid is hidden
inside the sandbox, so ``shell.exec``, hook commands and plugin command tools cannot print, copy, pack or search
it, by any spelling or link, while the files next to it stay readable. Real registry, real bwrap, as root and as
an unprivileged user."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.helpers import NOBODY, as_user, give_to
from tests.plugins.conftest import make_plugin
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import SHELL, engine, workspace

from kairox.config import ApprovalPolicy, HooksConfig, KairoxConfig, SandboxPolicy, resolve_config
from kairox.config._models import HookConfig
from kairox.hooks import HookRegistry
from kairox.plugins import plugin_tool_providers, route_plugins
from kairox.plugins._discovery import discover_plugins
from kairox.policy import (
    ApprovalAnswer,
    ApprovalRequest,
    NonInteractiveApprover,
    PolicyEngine,
    Rule,
)
from kairox.registry import ToolRegistry, build_registry, registry_settings
from kairox.sandbox._readmask import SEARCH_LIMIT
from kairox.tools import ToolCall, ToolResult

PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
"""A Python both users can run inside the sandbox (a virtualenv under /root is private to root)."""
KEY = "KEY-5e1f0c9a-secret"
MORE = "MORE-77b2d4e1-secret"
ENV = "ENV-0d93c6aa-secret"
SSH = "SSH-a41c7f02-secret"
PRIVATE = "PRIVATE-c2e8b5d9-secret"
SECRETS = (KEY, MORE, ENV, SSH, PRIVATE)
PLAIN = "PLAIN-neighbour-text"
RULES = (
    ("deny", "fs.read(secrets/**)"),
    ("deny", "fs.read(**/.env)"),
    ("deny", "fs.read(~/.ssh/**)"),
    ("ask", "fs.read(private.txt)"),  # a command cannot be asked about mid-run: ask rules hide too
)


def plant(ws: Path, home: Path) -> None:
    """Secrets and harmless neighbours, readable by every user (only the sandbox stands between them)."""
    files = {
        ws / "secrets" / "key.txt": KEY,
        ws / "secrets" / "deeper" / "more.txt": MORE,
        ws / "app" / "config" / ".env": ENV,
        ws / "deep" / "a" / "b" / "c" / ".env": ENV,
        ws / "private.txt": PRIVATE,
        home / ".ssh" / "id_rsa": SSH,
        ws / "notes.txt": PLAIN,
        ws / "public" / "readme.txt": PLAIN,
        ws / "app" / "config" / "settings.txt": PLAIN,
        ws / "deep" / "a" / "b" / "c" / "env.txt": PLAIN,
        home / "notes.txt": PLAIN,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    (ws / "link-to-key").symlink_to(ws / "secrets" / "key.txt")  # a link made before the rule was written
    (ws / "link-to-ssh").symlink_to(home / ".ssh")
    (ws / "rel-link").symlink_to("secrets")


ATTACKS = [
    "cat secrets/key.txt secrets/deeper/more.txt",
    "head -c 200 secrets/key.txt; tail secrets/deeper/more.txt",
    "cp secrets/key.txt out.txt; cp -r secrets copied; cat out.txt copied/key.txt",
    "tar cf copy.tar secrets app deep; tar cf - secrets | tar xOf -",
    "grep -r secret . ; grep -r secret ..",
    f"{PYTHON} -c \"print(open('secrets/key.txt').read(), open('app/config/.env').read())\"",
    "cat link-to-key rel-link/key.txt link-to-ssh/id_rsa",
    "cat secrets/../secrets/key.txt ./public/../secrets/key.txt $PWD/secrets//key.txt secrets/./deeper/more.txt",
    "cat app/config/.env deep/a/b/c/.env; find . -name .env -exec cat {} +",
    "cat ../home/.ssh/id_rsa HOMEDIR/.ssh/id_rsa; ls -a HOMEDIR/.ssh",
    "cat private.txt; cat ./private.txt",
    "ln secrets/key.txt hard; mv secrets moved; umount secrets; cat hard moved/key.txt secrets/key.txt",
    "(cd secrets && cat key.txt deeper/more.txt)",
]


def copies_hold_no_secret(ws: Path) -> None:
    """No file the commands left in the workspace (copies, archives) holds a secret: read outside the sandbox."""
    planted = {
        ws / "secrets" / "key.txt",
        ws / "secrets" / "deeper" / "more.txt",
        ws / "app" / "config" / ".env",
        ws / "deep" / "a" / "b" / "c" / ".env",
        ws / "private.txt",
    }
    for folder, _, names in os.walk(ws):
        for name in names:
            path = Path(folder) / name
            if path in planted or path.is_symlink():
                continue
            data = path.read_bytes()
            assert not any(s.encode() in data for s in SECRETS), path


def revealed(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def rules() -> list[Rule]:
    return [
        Rule(action=a, pattern=p, layer="user", file="kairox.toml", line=i) for i, (a, p) in enumerate(RULES, start=1)
    ]


async def call(registry: ToolRegistry, command: str) -> ToolResult:
    return await registry.call(ToolCall(name="shell.exec", arguments={"command": command}))


# --- shell.exec through the registry -----------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize("attack", ATTACKS)
async def test_a_command_cannot_read_what_fs_read_rules_forbid(tmp_path: Path, attack: str) -> None:
    ws = workspace(tmp_path)
    home = tmp_path / "home"
    plant(ws, home)
    registry = await build_registry(settings(ws, *rules()), approver=NonInteractiveApprover())

    result = await call(registry, attack.replace("HOMEDIR", str(home)) + f"; cat notes.txt; {PYTHON} -c 'print(1+1)'")

    text = result.text_content()
    assert revealed(text) == [], text
    assert PLAIN in text and "\n2" in text, text  # it ran, and the file next to the secrets is still readable
    copies_hold_no_secret(ws)
    assert (ws / "secrets" / "key.txt").read_text() == KEY + "\n"  # nothing the command did reached the real files


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_neighbours_of_hidden_files_stay_readable(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    home = tmp_path / "home"
    plant(ws, home)
    registry = await build_registry(settings(ws, *rules()), approver=NonInteractiveApprover())

    result = await call(
        registry, f"cat notes.txt public/readme.txt app/config/settings.txt deep/a/b/c/env.txt {home}/notes.txt"
    )

    assert not result.is_error, result.text_content()
    assert result.text_content().count(PLAIN) == 5


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_files_made_after_the_registry_started_are_hidden_too(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    registry = await build_registry(settings(ws, *rules()), approver=NonInteractiveApprover())
    (ws / "late" / "x").mkdir(parents=True)
    (ws / "late" / "x" / ".env").write_text(ENV)
    (ws / "secrets" / "key.txt").write_text(KEY)

    result = await call(registry, "cat late/x/.env secrets/key.txt; echo done")

    assert revealed(result.text_content()) == [] and "done" in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_read_only_mode_hides_them_as_well(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    plant(ws, tmp_path / "home")
    registry = await build_registry(
        settings(ws, *rules(), sandbox=SandboxPolicy.READ_ONLY), approver=NonInteractiveApprover()
    )

    result = await call(registry, "cat secrets/key.txt app/config/.env private.txt; grep -r secret .; cat notes.txt")

    assert revealed(result.text_content()) == [] and PLAIN in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_past_the_search_limit_the_command_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    many = ws / "many"
    many.mkdir()
    for i in range(SEARCH_LIMIT + 1):
        (many / f"f{i}").touch()
    (ws / "id.key").write_text(KEY)
    registry = await build_registry(
        settings(ws, Rule(action="deny", pattern="fs.read(**/*.key)")), approver=NonInteractiveApprover()
    )

    result = await call(registry, "cat id.key; touch ran")

    assert result.is_error
    assert f"more than {SEARCH_LIMIT} files and folders" in result.text_content()
    assert not (ws / "ran").exists() and KEY not in result.text_content()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_command_is_refused_with_the_reason_when_it_would_run_in_a_hidden_folder(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    plant(ws, tmp_path / "home")
    registry = await build_registry(settings(ws, *rules()), approver=NonInteractiveApprover())
    inside = await registry.call(ToolCall(name="shell.exec", arguments={"command": "cat key.txt", "cwd": "secrets"}))
    everything = await build_registry(
        settings(ws, Rule(action="deny", pattern=f"fs.read({tmp_path}/**)")), approver=NonInteractiveApprover()
    )
    around = await call(everything, "cat notes.txt")

    assert (
        inside.is_error
        and f"the rules on reading hide {ws / 'secrets'}, so a command cannot run in {ws / 'secrets'}"
        in inside.text_content()
    )
    assert (
        around.is_error
        and f"the rules on reading hide {tmp_path}, so a command cannot run in {ws}" in around.text_content()
    )
    assert revealed(inside.text_content() + around.text_content()) == [] and PLAIN not in around.text_content()


@pytest.mark.anyio
async def test_without_read_rules_there_is_nothing_to_hide(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    registry = await build_registry(
        settings(ws, Rule(action="deny", pattern="fs.write(secrets/**)")), approver=NonInteractiveApprover()
    )
    assert registry.settings.sandbox.hidden is None
    guarded = await build_registry(settings(ws, *rules()), approver=NonInteractiveApprover())
    assert guarded.settings.sandbox.hidden is not None


def test_without_a_sandbox_the_decision_says_read_rules_do_not_hold(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    policy = engine(ws, *RULES)
    unguarded = PolicyEngine(replace(policy.settings, sandbox=SandboxPolicy.DANGER_FULL_ACCESS))
    assert "fs.read deny and ask rules do not hold" in unguarded.decide(SHELL, {"command": "ls"}).reason
    assert "do not hold" not in policy.decide(SHELL, {"command": "ls"}).reason


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_the_retry_without_a_sandbox_says_read_rules_do_not_hold_there(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    plant(ws, tmp_path / "home")
    asked: list[ApprovalRequest] = []

    class Person:
        async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
            asked.append(request)
            return ApprovalAnswer.deny("no")

    registry = await build_registry(settings(ws, *rules(), approval=ApprovalPolicy.ON_FAILURE), approver=Person())
    result = await call(registry, "cat secrets/key.txt")

    assert result.is_error and KEY not in result.text_content()
    assert [r.unsandboxed for r in asked] == [True]
    assert "fs.read deny and ask rules do not hold" in asked[0].reason


# --- hook commands and plugin command tools ----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_hook_command_cannot_read_them(tmp_path: Path, isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    plant(ws, tmp_path / "home")
    (isolated_home / "kairox.toml").write_text('[policy.rules]\ndeny = ["fs.read(secrets/**)", "fs.read(**/.env)"]\n')
    sandbox = registry_settings(resolve_config(ws)).sandbox  # the sandbox a session hands its hooks
    out = ws / "hook-out.txt"
    hooks = HooksConfig(
        pre_tool_use=[HookConfig(command=f"cat secrets/key.txt app/config/.env notes.txt > {out} 2>&1; true")]
    )
    registry = HookRegistry.from_config(hooks, workspace=ws, sandbox=sandbox)

    await registry.pre_tool_use(ToolCall(name="fs.read", arguments={"path": "notes.txt"}, call_id="c1"), SHELL)

    said = out.read_text()
    assert revealed(said) == [] and PLAIN in said, said


_PEEK = """import json, sys
json.load(sys.stdin)
found = []
for name in ("secrets/key.txt", "app/config/.env", "notes.txt"):
    try:
        found.append(open(name).read())
    except OSError as exc:
        found.append(type(exc).__name__)
print(json.dumps({"found": found}))
"""


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_plugin_command_tool_cannot_read_them(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    plant(ws, tmp_path / "home")
    root = make_plugin(
        tmp_path / "plugins" / "kit",
        {
            "name": "kit",
            "tools": [
                {
                    "name": "peek",
                    "command": f"{PYTHON} ${{KAIROX_PLUGIN_ROOT}}/peek.py",
                    "inputSchema": {"type": "object"},
                }
            ],
        },
        manifest_dir=".kairox-plugin",
    )
    (root / "peek.py").write_text(_PEEK)
    registry = await build_registry(settings(ws, *rules()), approver=ScriptedApprover())
    routing = route_plugins(
        discover_plugins(
            KairoxConfig.model_validate({"plugins": {"paths": [str(root)]}}), home=tmp_path / "home"
        ).plugins
    )
    for provider in plugin_tool_providers(routing.tools, routing.permissions):
        await registry.add_provider(provider)

    result = await registry.call(ToolCall(name="kit__peek", arguments={}))

    assert not result.is_error, result.text_content()
    assert revealed(result.text_content()) == [] and PLAIN in result.text_content()


# --- root inside the sandbox, and an unprivileged user, through the real `kairox` command -----------------------


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    """A folder both users can reach (pytest's own are private to root), with secrets every user may read."""
    base = Path(tempfile.mkdtemp(prefix="kairox-readmask-", dir="/tmp"))
    base.chmod(0o755)
    (base / "ws").mkdir()
    (base / "kx").mkdir()
    (base / "kx" / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    (base / "kx" / "kairox.toml").write_text(
        "[policy.rules]\n"
        + "\n".join(f"{a} = {json.dumps([p for b, p in RULES if b == a])}" for a in ("deny", "ask"))
        + "\n"
    )
    plant(base / "ws", base)
    give_to(user, base)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.timeout(120)
def test_the_kairox_command_hides_them_from_root_and_from_an_unprivileged_user(place: Path, user: str) -> None:
    prefix = as_user(user)
    env = {
        **os.environ,
        "KAIROX_HOME": str(place / "kx"),
        "KAIROX_SANDBOX_POLICY": "workspace_write",
        "HOME": str(place),
        "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
    }
    command = (
        " ; ".join(a.replace("HOMEDIR", str(place)) for a in ATTACKS) + " ; cat ~/.ssh/id_rsa; cat notes.txt; id -u"
    )
    argv = [*prefix, sys.executable, "-m", "kairox", "tools", "call", "shell.exec", json.dumps({"command": command})]
    run = subprocess.run(argv, cwd=place / "ws", env=env, capture_output=True, text=True, timeout=110, check=False)

    said = run.stdout + run.stderr
    assert revealed(said) == [], said
    assert PLAIN in said and f"\n{0 if user == 'root' else NOBODY}\n" in said, said  # it ran, as that user
    copies_hold_no_secret(place / "ws")
