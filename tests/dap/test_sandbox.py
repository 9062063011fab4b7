"""A debugged program runs in the sandbox ``shell.exec`` commands run in (attack corpus): the model can write a
program in the workspace and ``dap.launch`` it, so that program must not write outside the writable roots, into
``.git``, into ``~``, read what ``fs.read`` rules forbid or reach the network, while debugging it still works.
``dap.attach`` reaches a process no sandbox holds, so it is asked about. Real registry, real debugpy, real bwrap,
as root and as an unprivileged user."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import debugpy
import pytest
from tests.dap._fixtures import PROGRAM, debugpy_config, free_port, wait_for_listener
from tests.helpers import NOBODY, as_user, give_to
from tests.registry._support import ScriptedApprover, settings

import kairox
from kairox._rpc._process import ChildProcess
from kairox.config import ApprovalPolicy, SandboxPolicy
from kairox.dap import DapToolProvider
from kairox.policy import ApprovalAnswer, Approver, NonInteractiveApprover, Rule
from kairox.registry import ToolRegistry, build_registry
from kairox.tools import ToolCall, ToolResult

PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
"""A Python both users can run, also inside the sandbox, with this environment's packages on its path (a
virtualenv under /root is private to root): it runs the `kairox` command and its debug adapter."""
SITE = Path(debugpy.__file__).parent.parent
SOURCE = Path(kairox.__file__).parent.parent
MARK = "MARK-4d1f77c2-escaped"
"""What an attack writes or sends; it must turn up nowhere."""
KEY = "KEY-8a30e6b5-secret"
"""The content of a file an fs.read rule hides."""
WAIT = 45
"""Seconds a launch or continue that must end or stop may wait: the tools' own 10 s is short when CI's two cores
are busy with bubblewrap, debugpy and the other tests at once; a program that ends returns at once."""
DENY_SECRETS = Rule(action="deny", pattern="fs.read(secrets/**)", layer="user", file="kairox.toml", line=1)
PROBE = """import os, socket
try:
    {attack}
    print("attack: no error")
except OSError as exc:
    print("attack:", type(exc).__name__)
print("home:", os.path.expanduser("~"))
print("done")
"""
ATTACKS = {
    "outside": "open({outside!r}, 'w').write({mark!r})",
    "git_hook": "open('.git/hooks/pre-commit', 'w').write({mark!r})",
    "git_config": "open('.git/config', 'a').write({mark!r})",
    "home": "open(os.path.expanduser('~/.bashrc'), 'a').write({mark!r})",
    "home_new": "open(os.path.expanduser('~/.profile'), 'w').write({mark!r})",
    "secret": "print(open('secrets/key.txt').read() or 'nothing')",
    "secret_copy": "open('copied.txt', 'w').write(open('secrets/key.txt').read())",
    "network": "socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall({mark!r}.encode())",
}
SOURCE_TRICK = """import os
# a frame whose source is named as the hidden file: Kairox shows a stopped frame's line, read outside the sandbox
exec(compile("breakpoint()\\nx = 1\\nx = 2\\n", os.path.abspath("secrets/key.txt"), "exec"))
print("done")
"""


def plant(base: Path) -> Path:
    """A workspace with a git folder and a hidden secret, and a home and a folder outside it; returns the workspace."""
    ws = base / "ws"
    for folder in (ws / ".git" / "hooks", ws / "secrets", base / "home", base / "outside", base / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "secrets" / "key.txt").write_text((KEY + "\n") * 5)
    (base / "home" / ".bashrc").write_text("# rc\n")
    (ws / "program.py").write_text(PROGRAM)
    (ws / "source_trick.py").write_text(SOURCE_TRICK)
    return ws


def write_probes(ws: Path, port: int) -> None:
    """A program per attack (``attack_<name>.py``), and ``attack_all.py`` trying each in turn, as one launch."""
    outside = str(ws.parent / "outside" / "escaped.txt")
    attacks = {name: attack.format(outside=outside, mark=MARK, port=port) for name, attack in ATTACKS.items()}
    for name, attack in attacks.items():
        (ws / f"attack_{name}.py").write_text(PROBE.format(attack=attack))
    every = "".join(
        f"try:\n    {attack}\n    print('attack {name}: no error')\nexcept OSError as exc:\n"
        f"    print('attack {name}:', type(exc).__name__)\n"
        for name, attack in attacks.items()
    )
    (ws / "attack_all.py").write_text(
        f"import os, socket\n{every}print('home:', os.path.expanduser('~'))\nprint('done')\n"
    )


def escaped(base: Path) -> list[str]:
    """Every file under ``base`` holding the mark or the secret, but the secret and the attacks themselves."""
    found = []
    for folder, _, names in os.walk(base):
        for name in names:
            path = Path(folder) / name
            if path.is_symlink() or path == base / "ws" / "secrets" / "key.txt" or path.name.startswith("attack_"):
                continue  # the secret itself, and the programs that name the mark
            data = path.read_bytes()
            if MARK.encode() in data or KEY.encode() in data:
                found.append(str(path.relative_to(base)))
    return found


@contextmanager
def listener() -> Iterator[tuple[int, socket.socket]]:
    """A TCP listener on the host's 127.0.0.1 that a program outside the sandbox could reach; closed on leaving."""
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.setblocking(False)
        yield server.getsockname()[1], server
    finally:
        server.close()


def arrived(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


async def debugging(
    ws: Path,
    *rules: Rule,
    approver: Approver | None = None,
    approval: ApprovalPolicy = ApprovalPolicy.ON_REQUEST,
    sandbox: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE,
) -> ToolRegistry:
    """A registry over ``ws`` whose writable roots are the workspace and a temp folder beside it (not /tmp)."""
    return await build_registry(
        settings(ws, *rules, approval=approval, sandbox=sandbox), approver=approver or NonInteractiveApprover()
    )


# --- through the registry, in this process -------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_a_launched_program_cannot_escape_the_sandbox(tmp_path: Path, attack: str) -> None:
    ws = plant(tmp_path)
    home = tmp_path / "home"
    with listener() as (port, server):
        write_probes(ws, port)
        registry = await debugging(ws, DENY_SECRETS)
        async with DapToolProvider(
            {"debugpy": debugpy_config()}, workspace=ws, host_env={**os.environ, "HOME": str(home)}
        ) as dap:
            await registry.add_provider(dap)
            result = await registry.call(
                ToolCall(name="dap.launch", arguments={"program": f"attack_{attack}.py", "wait_sec": WAIT})
            )
        connected = arrived(server)

    text = result.text_content()
    assert not result.is_error, text
    assert "The program ended with exit code 0" in text and "done" in text, text  # it ran, to its end
    assert f"home: {home}" in text  # the attack on ~ aimed at the right place
    assert MARK not in text and KEY not in text, text
    assert escaped(tmp_path) == []
    assert not connected
    assert (ws / ".git" / "config").read_text() == "[core]\n" and (home / ".bashrc").read_text() == "# rc\n"


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_program_cannot_make_kairox_show_a_hidden_file_as_its_source(tmp_path: Path) -> None:
    ws = plant(tmp_path)
    registry = await debugging(ws, DENY_SECRETS)
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await registry.add_provider(dap)
        stopped = await registry.call(
            ToolCall(name="dap.launch", arguments={"program": "source_trick.py", "wait_sec": WAIT})
        )
        trace = await registry.call(ToolCall(name="dap.stack_trace", arguments={}))
        read = await registry.call(
            ToolCall(name="dap.evaluate", arguments={"expression": "open('secrets/key.txt').read()"})
        )
        ended = await registry.call(ToolCall(name="dap.continue", arguments={"wait_sec": WAIT}))

    said = "\n".join(r.text_content() + json.dumps(r.structured) for r in (stopped, trace, read, ended))
    assert stopped.structured is not None and stopped.structured["frame"]["path"] == "secrets/key.txt", said
    assert trace.text_content().splitlines()[0].startswith("#0 <module> at secrets/key.txt:2 [frame "), said
    assert "FileNotFoundError" in read.text_content()  # inside the sandbox the folder is empty
    assert "done" in ended.text_content()
    assert KEY not in said


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_debug_session_works_inside_the_sandbox(tmp_path: Path) -> None:
    ws = plant(tmp_path)
    registry = await debugging(ws, DENY_SECRETS)
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await registry.add_provider(dap)

        async def call(tool: str, **arguments: object) -> ToolResult:
            return await registry.call(ToolCall(name=tool, arguments=arguments))

        launched = await call(
            "dap.launch", program="program.py", breakpoints=[{"path": "program.py", "line": 6}], wait_sec=WAIT
        )
        trace = await call("dap.stack_trace")
        variables = await call("dap.variables")
        evaluated = await call("dap.evaluate", expression="x * 2")
        ended = await call("dap.continue", wait_sec=WAIT)
    assert launched.text_content().splitlines() == [
        "Debug session s1 (debugpy): program.py",
        "breakpoint program.py:6 set",
        "Stopped (breakpoint) at program.py:6 in compute, thread 1.",
        "    6 | y = x + n",
    ]
    assert [line.split(" [frame")[0] for line in trace.text_content().splitlines()] == [
        "#0 compute at program.py:6",
        "#1 main at program.py:12",
        "#2 <module> at program.py:17",
    ]
    assert variables.text_content().splitlines() == ["n = 1 (int)", "x = 42 (int)"]
    assert evaluated.text_content() == "84 (int)"
    assert ended.text_content().splitlines() == [
        "The program ended with exit code 0; debug session s1 is closed.",
        "Program output:",
        "total 43",
    ]


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_program_and_its_folder_are_held_to_the_workspace_and_the_rules_on_reading(tmp_path: Path) -> None:
    ws = plant(tmp_path)
    (tmp_path / "outside" / "elsewhere.py").write_text(f"open({str(tmp_path / 'outside' / 'ran')!r}, 'w')\n")
    (ws / "secrets" / "run.py").write_text("print('secret program')\n")
    (ws / "link.py").symlink_to(tmp_path / "outside" / "elsewhere.py")
    registry = await debugging(ws, DENY_SECRETS)
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await registry.add_provider(dap)
        results = [
            (await registry.call(ToolCall(name="dap.launch", arguments=arguments))).text_content()
            for arguments in (
                {"program": str(tmp_path / "outside" / "elsewhere.py")},
                {"program": "link.py"},
                {"program": "program.py", "cwd": str(tmp_path / "outside")},
                {"program": "secrets/run.py"},
                {"program": "program.py", "cwd": "secrets"},
            )
        ]
        sessions = dict(dap.sessions)
    outside = tmp_path / "outside"
    assert [r.splitlines()[0] for r in results] == [
        f"dap.launch failed: program {outside / 'elsewhere.py'} is outside the workspace {ws}",
        f"dap.launch failed: program {outside / 'elsewhere.py'} is outside the workspace {ws}",
        f"dap.launch failed: working directory {outside} is outside the workspace {ws}",
        f"dap.launch failed: the rules on reading hide {ws / 'secrets' / 'run.py'} "
        "(deny rule 'fs.read(secrets/**)' (kairox.toml:1)), so it cannot be debugged",
        f"dap.launch failed: the rules on reading hide {ws / 'secrets'}, so a command cannot run in {ws / 'secrets'}",
    ]
    assert sessions == {} and not (outside / "ran").exists()


# --- asking -------------------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_under_untrusted_the_question_names_the_program_and_its_arguments(tmp_path: Path) -> None:
    ws = plant(tmp_path)
    (ws / "sub").mkdir()
    (ws / "touch.py").write_text("import sys\nopen('touched', 'w').write(' '.join(sys.argv[1:]))\n")
    person = ScriptedApprover(answers=[ApprovalAnswer.deny("not now"), ApprovalAnswer.allow_once()])
    registry = await debugging(ws, approver=person, approval=ApprovalPolicy.UNTRUSTED)
    call = ToolCall(
        name="dap.launch",
        arguments={
            "program": "touch.py",
            "args": ["a b", "c"],
            "cwd": "sub",
            "env": {"MODE": "x"},
            "wait_sec": WAIT,
        },
    )
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await registry.add_provider(dap)
        refused = await registry.call(call)
        refused_left = (ws / "sub" / "touched").exists()
        approved = await registry.call(call)

    assert refused.text_content() == "dap.launch was not run: not now" and not refused_left
    assert [(r.source, r.command) for r in person.requests] == [("mode", "cd sub && env MODE=x touch.py 'a b' c")] * 2
    assert "The program ended with exit code 0" in approved.text_content()
    assert (ws / "sub" / "touched").read_text() == "a b c"


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_where_the_sandbox_cannot_start_the_launch_fails_closed_and_on_failure_asks_to_run_it_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = plant(tmp_path)
    (ws / "touch.py").write_text("open('touched', 'w')\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bwrap-here"))  # bwrap is not found: no sandbox
    call = ToolCall(name="dap.launch", arguments={"program": "touch.py", "args": ["--x"], "wait_sec": WAIT})
    person = ScriptedApprover(answers=[ApprovalAnswer.allow_once()])
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        closed = await debugging(ws)
        await closed.add_provider(dap)
        failed = await closed.call(call)
        failed_left = (ws / "touched").exists()
        retrying = await debugging(ws, approver=person, approval=ApprovalPolicy.ON_FAILURE)
        await retrying.add_provider(dap)
        retried = await retrying.call(call)

    assert failed.text_content().startswith(
        "dap.launch failed: the workspace_write sandbox needs bubblewrap (bwrap), which is not installed"
    )
    assert not failed_left
    assert [(r.source, r.unsandboxed, r.command) for r in person.requests] == [("sandbox", True, "touch.py --x")]
    assert "The program ended with exit code 0" in retried.text_content() and (ws / "touched").exists()


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_attaching_asks_never_denies_it_and_an_allow_rule_lets_it_through(tmp_path: Path) -> None:
    ws = plant(tmp_path)
    port = free_port()
    person = ScriptedApprover(answers=[ApprovalAnswer.deny("no attaching")])
    asking = await debugging(ws, approver=person)
    never = await debugging(ws, approval=ApprovalPolicy.NEVER)
    allowed = await debugging(ws, Rule(action="allow", pattern="dap.attach"), approval=ApprovalPolicy.NEVER)
    listening = [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", "--wait-for-client", "program.py"]
    async with (
        ChildProcess(listening, cwd=ws) as program,
        DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap,
    ):
        for registry in (asking, never, allowed):
            await registry.add_provider(dap)
        await wait_for_listener(port)  # attaching does not wait long for a listener (ATTACH_CONNECT_WAIT)
        asked = await asking.call(ToolCall(name="dap.attach", arguments={"port": port}))
        denied = await never.call(ToolCall(name="dap.attach", arguments={"port": port}))
        before = dict(dap.sessions)
        attached = await allowed.call(
            ToolCall(name="dap.attach", arguments={"port": port, "breakpoints": [{"path": "program.py", "line": 6}]})
        )
        ended = await allowed.call(ToolCall(name="dap.continue", arguments={}))
        code = await program.wait(10)

    assert asked.text_content() == "dap.attach was not run: no attaching"
    assert [(r.tool, r.source, r.arguments) for r in person.requests] == [("dap.attach", "mode", {"port": port})]
    assert denied.text_content().startswith(
        "dap.attach was not run: dap.attach works on a program that Kairox did not start"
    )
    assert before == {}  # nothing connected to the program
    assert attached.text_content().splitlines()[-2:] == [
        "Stopped (breakpoint) at program.py:6 in compute, thread 1.",
        "    6 | y = x + n",
    ]
    assert ended.text_content() == "The program ended; debug session s1 is closed." and code == 0


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_without_a_sandbox_a_launch_runs_as_shell_exec_does(tmp_path: Path) -> None:
    ws = plant(tmp_path)
    target = tmp_path / "outside" / "written.txt"
    (ws / "write.py").write_text(f"open({str(target)!r}, 'w').write('x')\n")
    registry = await debugging(ws, sandbox=SandboxPolicy.DANGER_FULL_ACCESS)
    async with DapToolProvider({"debugpy": debugpy_config()}, workspace=ws) as dap:
        await registry.add_provider(dap)
        result = await registry.call(ToolCall(name="dap.launch", arguments={"program": "write.py", "wait_sec": WAIT}))
    assert "The program ended with exit code 0" in result.text_content()
    assert target.read_text() == "x"  # danger_full_access opts out of the sandbox for debugging as for commands


# --- root and an unprivileged user, through the real `kairox` command ---------------------------------------------


@pytest.fixture
def place(user: str) -> Iterator[Path]:
    """A folder both users can reach (pytest's own are private to root), owned by the user who runs Kairox, so
    that only the sandbox stands between a program and what it attacks."""
    base = Path(tempfile.mkdtemp(prefix="kairox-dapbox-", dir="/tmp"))
    base.chmod(0o755)
    plant(base)
    (base / "kx").mkdir()
    (base / "kx" / "trusted_workspaces.json").write_text('{"workspaces": {}}')
    (base / "kx" / "kairox.toml").write_text(
        '[policy.rules]\ndeny = ["fs.read(secrets/**)"]\n\n'
        f'[dap_servers.debugpy]\ncommand = {json.dumps(PYTHON)}\nargs = ["-m", "debugpy.adapter"]\n'
        f"env = {{ PYTHONPATH = {json.dumps(str(SITE))} }}\n"
    )
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.timeout(300)
def test_the_kairox_command_sandboxes_debugging_for_root_and_for_an_unprivileged_user(place: Path, user: str) -> None:
    ws = place / "ws"
    with listener() as (port, server):
        write_probes(ws, port)
        # every attack in one launch: each has a launch of its own in the tests above, in this process
        calls = [
            {"tool": "dap.launch", "arguments": {"program": "attack_all.py", "wait_sec": WAIT}},
            {
                "tool": "dap.launch",
                "arguments": {
                    "program": "program.py",
                    "breakpoints": [{"path": "program.py", "line": 6}],
                    "wait_sec": WAIT,
                },
            },
            {"tool": "dap.stack_trace", "arguments": {}},
            {"tool": "dap.variables", "arguments": {}},
            {"tool": "dap.evaluate", "arguments": {"expression": "__import__('os').getuid()"}},
            {"tool": "dap.continue", "arguments": {"wait_sec": WAIT}},
        ]
        (place / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
        give_to(user, place)
        env = {
            **os.environ,
            "KAIROX_HOME": str(place / "kx"),
            "KAIROX_SYSTEM_CONFIG": str(place / "no-system.toml"),
            "HOME": str(place / "home"),
            "TMPDIR": str(place / "tmp"),
            "PYTHONPATH": f"{SOURCE}:{SITE}",
        }
        argv = [
            *as_user(user),
            PYTHON,
            "-m",
            "kairox",
            "-w",
            str(ws),
            "tools",
            "call",
            "--script",
            str(place / "calls.jsonl"),
            "--json",
        ]
        run = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, timeout=290, check=False)
        connected = arrived(server)

    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    results = [json.loads(line) for line in run.stdout.splitlines()]
    attacks, launch, stack, variables, uid, ended = results
    assert "exit code 0" in attacks["text"] and "done" in attacks["text"], attacks
    assert f"home: {place / 'home'}" in attacks["text"], attacks  # the attacks on ~ aimed at the right place
    tried = [line.split(":")[0] for line in attacks["text"].splitlines() if line.startswith("attack ")]
    assert tried == [f"attack {name}" for name in ATTACKS], attacks  # each attack ran, and failed or did nothing
    assert MARK not in said and KEY not in said, said
    assert escaped(place) == [] and not connected
    assert launch["structured"]["frame"]["line"] == 6
    assert [frame["name"] for frame in stack["structured"]["frames"]][:3] == ["compute", "main", "<module>"]
    assert "x = 42 (int)" in variables["text"].splitlines()
    assert uid["text"] == f"{0 if user == 'root' else NOBODY} (int)"  # the debuggee ran as that user
    assert ended["structured"]["state"] == "ended" and "total 43" in ended["text"]
