"""Fixture projects and language server configurations for the LSP tests (real
jedi-language-server, python-lsp-server and basedpyright from the test environment, and
typescript-language-server from tests/servers/node_modules)."""

import sys
from pathlib import Path
from typing import Any

import pytest

from kairox.config import LspServerConfig

BIN = Path(sys.executable).parent
HERE = Path(__file__).resolve().parent

GREETING = '''"""Greetings."""


class Greeter:
    """Says hello to someone."""

    def __init__(self, name: str) -> None:
        self.name = name

    def greet(self, punctuation: str = "!") -> str:
        """Return a greeting for the name."""
        return "Hello, " + self.name + punctuation


def make(name: str) -> Greeter:
    """Build a Greeter."""
    return Greeter(name)
'''

MAIN = """from pkg.greeting import Greeter, make

g = Greeter("wörld 🎉"); print(g.greet())
print(make("x").greet("?"))
"""

BROKEN = """def total(values):
    return sum(values) + undefined_name
"""


def jedi_config(**changes: Any) -> LspServerConfig:
    fields: dict[str, Any] = {"file_patterns": ["*.py"], "languages": ["python"], **changes}
    return LspServerConfig(command=str(BIN / "jedi-language-server"), **fields)


def pylsp_config(**changes: Any) -> LspServerConfig:
    # python-lsp-server counts columns in characters although it announces nothing (UTF-16 by the protocol)
    fields: dict[str, Any] = {
        "file_patterns": ["*.py"],
        "languages": ["python"],
        "position_encoding": "utf-32",
    }
    return LspServerConfig(command=str(BIN / "pylsp"), **{**fields, **changes})


SERVERS = {"jedi": jedi_config, "pylsp": pylsp_config}

NODE_MODULES = HERE.parent / "servers" / "node_modules"


def basedpyright_config(**changes: Any) -> LspServerConfig:
    fields: dict[str, Any] = {"args": ["--stdio"], "file_patterns": ["*.py"], "languages": ["python"], **changes}
    return LspServerConfig(command=str(BIN / "basedpyright-langserver"), **fields)


def typescript_config(**changes: Any) -> LspServerConfig:
    # on the Node.js the test packages bring (the server needs a newer one than some systems have)
    fields: dict[str, Any] = {
        "args": [str(NODE_MODULES / "typescript-language-server" / "lib" / "cli.mjs"), "--stdio"],
        "file_patterns": ["*.ts"],
        "languages": ["typescript"],
        **changes,
    }
    return LspServerConfig(command=str(NODE_MODULES / ".bin" / "node"), **fields)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj")


def write_project(root: Path) -> Path:
    """The fixture package: ``pkg`` with a greeting module, a main module that uses it, and a broken module."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "greeting.py").write_text(GREETING, encoding="utf-8")
    (root / "pkg" / "main.py").write_text(MAIN, encoding="utf-8")
    (root / "pkg" / "broken.py").write_text(BROKEN, encoding="utf-8")
    return root


@pytest.fixture(params=sorted(SERVERS))
def server_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)
