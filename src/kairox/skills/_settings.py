"""Persisting a skill's enable state in configuration (S4), through the config writer so comments stay.

Scope ``user`` writes the user file (``$KAIROX_HOME/kairox.toml``). Scope ``workspace`` writes the local
project file (``.kairox/kairox.local.toml``): turning a skill on or off is a personal choice that should not
change the repository for everyone else, and the local file is the one meant to stay out of git.
"""

import enum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig


class EnableScope(enum.StrEnum):
    USER = "user"
    WORKSPACE = "workspace"


def enabled_key(name: str) -> str:
    """``skills.entries."<name>".enabled``, quoted where the name needs it (dots, colons)."""
    from kairox.config import join_key

    return join_key(("skills", "entries", name, "enabled"))


def write_enabled(file: Path, name: str, enabled: bool) -> None:
    """Set ``[skills.entries."<name>"] enabled`` in ``file``."""
    from kairox.config import set_value

    set_value(file, enabled_key(name), enabled)


def enabled_file(resolved: "ResolvedConfig", scope: EnableScope) -> Path:
    """The file an enable state of ``scope`` is written to."""
    from kairox.config import Layer

    return resolved.layer_file(Layer.USER if scope is EnableScope.USER else Layer.LOCAL)


def persist_enabled(resolved: "ResolvedConfig", name: str, enabled: bool, scope: EnableScope) -> Path:
    """Write the enable state into the file of ``scope`` and return that file."""
    file = enabled_file(resolved, scope)
    write_enabled(file, name, enabled)
    return file
