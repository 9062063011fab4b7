"""A write into a configuration file of an untrusted workspace needs the user's say, from every command that
writes one: a y/N question at a terminal, ``--yes``, and without either a refusal that leaves every file as it was.
The user's own file and a trusted workspace's files are written as before."""

import os
import select
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers import Run, kairox

from kairox.cli._common import ExitCode

PROJECT_TEXT = (
    "# the team's settings: keep this comment\n"
    'model = "team-model"  # chosen together\n\n[mcp_servers.p]\ncommand = "echo"\n'
)
MCP_JSON_TEXT = '{"mcpServers": {"j": {"command": "echo"}}}\n'
SKILL_TEXT = "---\nname: notes\ndescription: Write release notes.\n---\nWrite them.\n"


@dataclass(frozen=True)
class Workspace:
    root: Path
    home: Path
    kairox_home: Path

    @property
    def project(self) -> Path:
        return self.root / "kairox.toml"

    @property
    def local(self) -> Path:
        return self.root / ".kairox" / "kairox.local.toml"

    @property
    def user(self) -> Path:
        return self.kairox_home / "kairox.toml"

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home)}

    def run(self, *args: str) -> Run:
        """The real command, with no terminal: stdin from /dev/null, output to pipes."""
        return kairox("--workspace", self.root, *args, cwd=self.root, env=self.env())

    def files(self) -> dict[str, bytes]:
        """Every file of the workspace and its bytes."""
        return {str(p.relative_to(self.root)): p.read_bytes() for p in sorted(self.root.rglob("*")) if p.is_file()}


@pytest.fixture
def ws(tmp_path: Path, isolated_home: Path) -> Workspace:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "kairox.toml").write_text(PROJECT_TEXT, encoding="utf-8")
    (root / ".mcp.json").write_text(MCP_JSON_TEXT, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    skill = isolated_home / "skills" / "notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")
    return Workspace(root=root, home=home, kairox_home=isolated_home)


def trust(ws: Workspace) -> None:
    trusted = ws.run("trust")
    assert trusted.code == ExitCode.OK, trusted.stderr
    assert ws.run("config", "paths", "--json").json()["trusted"] is True


# --- one command, each way of answering -------------------------------------------------------------------


@pytest.mark.parametrize("layer", ["project", "local"])
def test_without_a_terminal_an_untrusted_workspace_file_is_refused_and_left_byte_identical(
    ws: Workspace, layer: str
) -> None:
    before = ws.files()
    run = ws.run("config", "set", "--layer", layer, "policy.approval_policy", "never")
    file = ws.project if layer == "project" else ws.local
    assert run.code == ExitCode.DENIED, run.stderr
    assert ws.files() == before
    assert not ws.local.exists()
    first, hint = run.stderr.strip().splitlines()
    assert first.startswith(f'kairox: {file} is unchanged (policy.approval_policy = "never"): approval required: ')
    assert f"{file} is the {layer} file of a workspace you have not trusted" in first
    assert (
        "there is no terminal to ask at: run the command again at one, or with --yes to approve this write once"
        in first
    )
    assert hint == "  hint: trust the workspace (`kairox trust`) or write to the user layer instead"
    assert "Traceback" not in run.stderr


def test_a_secret_value_is_not_repeated_in_the_refusal(ws: Workspace) -> None:
    run = ws.run("config", "set", "--layer", "project", "mcp_servers.p.env.API_TOKEN", "s3cret-value")
    assert run.code == ExitCode.DENIED
    assert 'mcp_servers.p.env.API_TOKEN = "<redacted>"' in run.stderr and "s3cret-value" not in run.stderr


def test_a_trusted_workspace_file_is_written_without_a_question_and_keeps_its_comments(ws: Workspace) -> None:
    trust(ws)
    run = ws.run("config", "set", "--layer", "project", "model", "other-model")
    assert run.code == ExitCode.OK, run.stderr
    assert run.stderr == f"set model in {ws.project}\n"
    text = ws.project.read_text(encoding="utf-8")
    assert text == PROJECT_TEXT.replace('"team-model"', '"other-model"')


def test_the_user_file_is_written_from_an_untrusted_workspace(ws: Workspace) -> None:
    before = ws.files()
    run = ws.run("config", "set", "policy.approval_policy", "never")
    assert run.code == ExitCode.OK, run.stderr
    assert tomllib.loads(ws.user.read_text(encoding="utf-8"))["policy"]["approval_policy"] == "never"
    assert ws.files() == before


def test_yes_approves_the_write_into_an_untrusted_workspace_file(ws: Workspace) -> None:
    run = ws.run("config", "set", "--layer", "local", "model", "mine", "--yes")
    assert run.code == ExitCode.OK, run.stderr
    assert tomllib.loads(ws.local.read_text(encoding="utf-8")) == {"model": "mine"}
    assert ws.project.read_text(encoding="utf-8") == PROJECT_TEXT
    shown = ws.run("config", "paths", "--json").json()
    assert shown["trusted"] is False  # --yes approved one write; it trusted nothing


def at_terminal(ws: Workspace, args: list[str], answer: str, *, timeout: float = 60) -> tuple[int, str]:
    """Run ``kairox ARGS`` with stdin, stdout and stderr on a pseudo-terminal, type ``answer`` and Enter once the
    y/N question is shown, and return the exit code and everything the terminal showed."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kairox", "--workspace", str(ws.root), *args],
        cwd=ws.root,
        env={**os.environ, **ws.env()},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    shown = b""
    answered = False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            assert ready, f"nothing more from the terminal after {timeout} s: {shown.decode(errors='replace')}"
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the command ended and closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            if not answered and b"[y/N] " in shown:
                os.write(master, answer.encode() + b"\n")
                answered = True
        code = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(master)
    assert answered, shown.decode(errors="replace")
    return code, shown.decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.parametrize(("answer", "written"), [("n", False), ("", False), ("y", True)])
def test_at_a_terminal_the_question_names_file_and_key_and_only_yes_writes(
    ws: Workspace, answer: str, written: bool
) -> None:
    before = ws.files()
    code, shown = at_terminal(ws, ["config", "set", "--layer", "project", "policy.approval_policy", "never"], answer)
    assert f"kairox: {ws.project} is the project file of a workspace you have not trusted" in shown
    assert '  change: policy.approval_policy = "never"\n' in shown
    assert f"  write it to {ws.project}? [y/N] " in shown
    if written:
        assert code == ExitCode.OK, shown
        after = ws.project.read_text(encoding="utf-8")
        assert after.startswith(PROJECT_TEXT)  # the comments stay
        assert tomllib.loads(after)["policy"]["approval_policy"] == "never"
    else:
        assert code == ExitCode.DENIED, shown
        assert ws.files() == before
        assert f'kairox: {ws.project} is unchanged (policy.approval_policy = "never"): denied at the prompt' in shown


# --- every command that writes a workspace's configuration ------------------------------------------------

WRITES: dict[str, list[str]] = {
    "config set project": ["config", "set", "--layer", "project", "model", "x"],
    "config set local": ["config", "set", "--layer", "local", "model", "x"],
    "config set a new server": ["config", "set", "--layer", "project", "mcp_servers.evil.command", "sh"],
    "config unset project": ["config", "unset", "--layer", "project", "model"],
    "mcp add project": ["mcp", "add", "evil", "--layer", "project", "--", "sh", "-c", "echo evil"],
    "mcp add local": ["mcp", "add", "evil", "--layer", "local", "--", "sh"],
    "mcp remove (its file)": ["mcp", "remove", "p"],
    "mcp remove --layer project": ["mcp", "remove", "p", "--layer", "project"],
    "mcp remove from .mcp.json": ["mcp", "remove", "j"],
    "skills disable --scope workspace": ["skills", "disable", "notes", "--scope", "workspace"],
    "skills enable --scope workspace": ["skills", "enable", "notes", "--scope", "workspace"],
    "mcp catalog install --layer project": [
        "mcp",
        "catalog",
        "install",
        "filesystem",
        "--layer",
        "project",
        "--no-prefetch",
    ],
    "mcp catalog install --layer local": [
        "mcp",
        "catalog",
        "install",
        "filesystem",
        "--layer",
        "local",
        "--no-prefetch",
    ],
}
"""Each command that writes a file of the workspace (``kairox.toml``, ``.kairox/kairox.local.toml``, ``.mcp.json``)."""

TARGET = {
    "config set local": ".kairox/kairox.local.toml",
    "mcp add local": ".kairox/kairox.local.toml",
    "mcp remove from .mcp.json": ".mcp.json",
    "skills disable --scope workspace": ".kairox/kairox.local.toml",
    "skills enable --scope workspace": ".kairox/kairox.local.toml",
    "mcp catalog install --layer local": ".kairox/kairox.local.toml",
}
ALWAYS_ASKS = {"mcp catalog install --layer project", "mcp catalog install --layer local"}
"""A catalog install writes configuration through the gate, which asks about any configuration file, trusted or not."""


@pytest.mark.parametrize("name", list(WRITES))
def test_no_write_command_changes_an_untrusted_workspace_without_a_terminal(ws: Workspace, name: str) -> None:
    before = ws.files()
    user_before = ws.user.read_bytes() if ws.user.exists() else None
    run = ws.run(*WRITES[name])
    assert run.code == ExitCode.DENIED, (run.code, run.stderr)
    assert ws.files() == before
    assert (ws.user.read_bytes() if ws.user.exists() else None) == user_before
    assert str(ws.root / TARGET.get(name, "kairox.toml")) in run.stderr
    if name not in ALWAYS_ASKS:
        assert (
            "of a workspace you have not trusted" in run.stderr
            and "`kairox trust`" in run.stderr
            and "--yes" in run.stderr
        )


@pytest.mark.parametrize("name", [n for n in WRITES if n not in ALWAYS_ASKS])
def test_every_write_command_writes_a_trusted_workspace_without_a_question(ws: Workspace, name: str) -> None:
    trust(ws)
    target = ws.root / TARGET.get(name, "kairox.toml")
    before = target.read_bytes() if target.exists() else None
    run = ws.run(*WRITES[name])
    assert run.code == ExitCode.OK, (run.code, run.stderr)
    assert target.exists() and target.read_bytes() != before
    if target == ws.project:
        assert target.read_text(encoding="utf-8").startswith("# the team's settings: keep this comment\n")
