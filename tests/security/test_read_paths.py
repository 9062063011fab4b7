"""Read rules hold on every way out (attack corpus, class 7): fs.edit, search.ripgrep with names that are not
UTF-8, the language-server tools addressed by symbol, and the paths MCP tools name."""

import os
from pathlib import Path

import pytest
from tests.lsp._fixtures import jedi_config
from tests.registry._support import ScriptedApprover, settings
from tests.security._support import SPECS, engine, workspace

from kairox.lsp import LspToolProvider
from kairox.policy import DecisionSource, Rule, Verdict
from kairox.registry import ToolRegistry, build_registry
from kairox.tools import ToolCall

DENY_READS = (("deny", "fs.read(secrets/**)"), ("deny", "fs.read(.env)"))
RULES = [
    Rule(action=a, pattern=p, layer="user", file="kairox.toml", line=i) for i, (a, p) in enumerate(DENY_READS, start=1)
]

EDITS = [
    "secrets//key.txt",
    "secrets/./key.txt",
    "secrets/key.txt",
    "./secrets/key.txt",
    "secrets/../secrets/key.txt",
    "src/../secrets/key.txt",
    ".env",
    "./.env",
    "link.txt",
    "linked/key.txt",
    "WS/secrets/key.txt",
]


@pytest.mark.parametrize("path", EDITS)
def test_fs_edit_of_a_file_that_may_not_be_read_is_denied(tmp_path: Path, path: str) -> None:
    ws = workspace(tmp_path)
    (ws / "secrets" / "key.txt").write_text("API_KEY=1\n")
    (ws / ".env").write_text("TOKEN=1\n")
    (ws / "link.txt").symlink_to(ws / "secrets" / "key.txt")
    (ws / "linked").symlink_to(ws / "secrets")
    decision = engine(ws, *DENY_READS).decide(
        SPECS["fs.edit"], {"path": path.replace("WS", str(ws)), "old_string": "API_KEY=1", "new_string": "x"}
    )
    assert (decision.verdict, decision.source) == (Verdict.DENY, DecisionSource.RULE)


@pytest.mark.anyio
@pytest.mark.parametrize("old", ["API_KEY=1", "API_KEY=2"])
async def test_fs_edit_is_no_oracle_for_a_file_that_may_not_be_read(tmp_path: Path, old: str) -> None:
    ws = workspace(tmp_path)
    secret = ws / "secrets" / "key.txt"
    secret.write_text("API_KEY=1\n")
    registry = await build_registry(settings(ws, *RULES), approver=ScriptedApprover())
    result = await registry.call(
        ToolCall(name="fs.edit", arguments={"path": "secrets/key.txt", "old_string": old, "new_string": "x"})
    )
    assert result.is_error and "denied by deny rule 'fs.read(secrets/**)'" in result.text_content()
    assert "replacement" not in result.text_content() and "not found" not in result.text_content()
    assert secret.read_text() == "API_KEY=1\n"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name", [b"\xff-token.txt", b"caf\xe9/token.txt", b"\x80\x81", b"deep/\xfe/er/t.txt", b"k\xc3\x28.txt"]
)
async def test_ripgrep_leaves_out_denied_files_whose_names_are_not_utf8(tmp_path: Path, name: bytes) -> None:
    ws = workspace(tmp_path)
    target = os.path.join(os.fsencode(ws / "secrets"), name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(b"TOKEN=hunter2\n")
    (ws / "src" / "app.py").write_text("TOKEN = None\n")
    registry = await build_registry(settings(ws, *RULES), approver=ScriptedApprover())
    result = await registry.call(ToolCall(name="search.ripgrep", arguments={"pattern": "TOKEN"}))
    assert not result.is_error, result.text_content()
    assert "hunter2" not in result.text_content()
    assert "app.py" in result.text_content()


VAULT = '''class Vault:
    """Holds the production key."""

    def key(self) -> str:
        return "sk-live-123"
'''
APP = "from secrets_pkg.vault import Vault\n\nprint(Vault().key())\n"

LSP_CALLS = [
    ("lsp.definition", {"symbol": "Vault"}),
    ("lsp.definition", {"symbol": "Vault.key"}),
    ("lsp.references", {"symbol": "Vault"}),
    ("lsp.hover", {"symbol": "Vault.key"}),
    ("lsp.definition", {"path": "src/app.py", "line": 3, "column": 7}),
    ("lsp.workspace_symbols", {"query": "Vault"}),
    ("lsp.references", {"path": "src/app.py", "line": 3, "column": 7}),
    ("lsp.hover", {"path": "src/app.py", "line": 3, "column": 7}),
    ("lsp.rename", {"symbol": "Vault", "new_name": "Safe"}),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments"), LSP_CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(LSP_CALLS)])
async def test_language_server_tools_show_nothing_of_a_file_that_may_not_be_read(
    tmp_path: Path, tool: str, arguments: dict
) -> None:
    ws = workspace(tmp_path)
    (ws / "secrets_pkg").mkdir()
    (ws / "secrets_pkg" / "__init__.py").write_text("")
    (ws / "secrets_pkg" / "vault.py").write_text(VAULT)
    (ws / "src" / "app.py").write_text(APP)
    rules = [Rule(action="deny", pattern="fs.read(secrets_pkg/**)", layer="user", file="kairox.toml", line=1)]
    registry = ToolRegistry(settings(ws, *rules), approver=ScriptedApprover())
    async with LspToolProvider({"jedi": jedi_config()}, workspace=ws) as provider:
        await registry.add_provider(provider)
        result = await registry.call(ToolCall(name=tool, arguments=arguments))
    text = result.text_content()
    assert "production key" not in text and "def key" not in text and "sk-live" not in text
    assert "secrets_pkg/vault.py:" not in text
