"""Where skills are looked for, in precedence order within each scope (S3)."""

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kairox.config import SkillsConfig
from kairox.skills._discovery import SkillRoot
from kairox.skills._model import SkillScope

if TYPE_CHECKING:
    from kairox.config import ResolvedConfig
    from kairox.events import EventSink
    from kairox.skills._registry import SkillRegistry

WORKSPACE_DIR = Path(".kairox") / "skills"
COMPAT_DIRS: tuple[Path, ...] = (
    Path(".agents") / "skills",
    Path(".codex") / "skills",
    Path(".claw") / "skills",
    Path(".claude") / "skills",
)
"""Other hosts' workspace skill folders, read when ``skills.compat_dirs`` is on (first listed wins a tie)."""
WORKSPACE_COMMANDS_DIR = Path(".kairox") / "commands"
COMPAT_COMMAND_DIRS: tuple[Path, ...] = (Path(".claude") / "commands",)
"""Workspace folders of slash commands: markdown files with frontmatter, loaded like a plugin's ``commands``
(subject to workspace trust like the workspace's skills); the ``.claude`` one when ``skills.compat_dirs`` is on."""


def user_skills_dir(home: Path) -> Path:
    return home / "skills"


def workspace_skills_dir(workspace: Path) -> Path:
    return workspace / WORKSPACE_DIR


def skill_roots(
    *,
    home: Path,
    workspace: Path | None,
    config: SkillsConfig,
    user_dirs: Iterable[Path] = (),
    workspace_dirs: Iterable[Path] = (),
    plugin_roots: Sequence[tuple[str, Path]] = (),
) -> list[SkillRoot]:
    """Every root, highest precedence first: workspace (``.kairox/skills``, configured, ``.kairox/commands``, then
    the compatibility folders), user (``$KAIROX_HOME/skills``, then configured), plugins (namespaced). Session
    skills are not found in folders: ``SkillRegistry.add_session_skill`` adds them."""
    roots: list[SkillRoot] = []
    if workspace is not None:
        roots.append(
            SkillRoot(path=workspace_skills_dir(workspace), scope=SkillScope.WORKSPACE, label=str(WORKSPACE_DIR))
        )
        roots.extend(SkillRoot(path=p, scope=SkillScope.WORKSPACE, label="[skills] dirs") for p in workspace_dirs)
        compat = (*COMPAT_DIRS, *COMPAT_COMMAND_DIRS) if config.compat_dirs else ()
        roots.extend(
            SkillRoot(path=workspace / d, scope=SkillScope.WORKSPACE, label=str(d))
            for d in (WORKSPACE_COMMANDS_DIR, *compat)
        )
    roots.append(SkillRoot(path=user_skills_dir(home), scope=SkillScope.USER, label="$KAIROX_HOME/skills"))
    roots.extend(SkillRoot(path=p, scope=SkillScope.USER, label="[skills] dirs") for p in user_dirs)
    roots.extend(
        SkillRoot(path=path, scope=SkillScope.PLUGIN, plugin=plugin, label=f"plugin:{plugin}")
        for plugin, path in plugin_roots
    )
    return _distinct(roots)


def _distinct(roots: list[SkillRoot]) -> list[SkillRoot]:
    """Each folder once. A folder that is both a workspace and a user folder (a workspace at ``~`` has
    ``.kairox/skills`` as both) keeps its user role: the user's own skills do not wait for workspace trust.
    Plugin roots stay, since they name their skills differently."""
    user_folders = {os.path.realpath(r.path) for r in roots if r.scope is SkillScope.USER}
    seen: set[tuple[str, str | None]] = set()
    kept: list[SkillRoot] = []
    for root in roots:
        real = os.path.realpath(root.path)
        if root.scope is SkillScope.WORKSPACE and real in user_folders:
            continue
        if (real, root.plugin) not in seen:
            seen.add((real, root.plugin))
            kept.append(root)
    return kept


def roots_from_config(
    resolved: "ResolvedConfig",
    *,
    plugin_roots: Sequence[tuple[str, Path]] = (),
) -> list[SkillRoot]:
    """The roots of a resolved configuration. ``[skills] dirs`` are workspace-scoped when the winning value
    comes from a project file, user-scoped otherwise, and relative to the file that lists them."""
    from kairox.config import Layer

    config = resolved.config.skills
    dirs: list[Path] = []
    workspace_scoped = False
    if config.dirs:
        origin = resolved.origin("skills.dirs")
        base = resolved.base_dir("skills.dirs")
        workspace_scoped = origin is not None and origin.layer in (Layer.PROJECT, Layer.LOCAL)
        dirs = [(base / Path(d).expanduser()).resolve() for d in config.dirs]
    return skill_roots(
        home=resolved.home,
        workspace=resolved.workspace,
        config=config,
        user_dirs=() if workspace_scoped else dirs,
        workspace_dirs=dirs if workspace_scoped else (),
        plugin_roots=plugin_roots,
    )


def cache_file(home: Path) -> Path:
    """Where discovery keeps its parse cache."""
    return home / "cache" / "skills.cache"


def registry_from_config(
    resolved: "ResolvedConfig",
    *,
    plugin_roots: Sequence[tuple[str, Path]] = (),
    events: "EventSink | None" = None,
    exclude: Iterable[str] = (),
) -> "SkillRegistry":
    """Discover every skill of a resolved configuration (trust decides what the model is offered).
    ``exclude`` takes qualified names not to load (a plugin routing's ``disabled_skills``)."""
    from kairox.skills._registry import SkillRegistry

    roots = roots_from_config(resolved, plugin_roots=plugin_roots)
    return SkillRegistry.load(
        roots,
        config=resolved.config.skills,
        trusted=resolved.trusted,
        cache_file=cache_file(resolved.home),
        events=events,
        exclude=exclude,
    )
