"""Skills MCP servers offer through the skills extension, as ``<server>:<name>`` skills: listed from the entries
``skills/list`` gave (nothing is read before a skill is used), their ``SKILL.md`` read when one is loaded and used
only when its size, digest and frontmatter are those of the entry."""

import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kairox.skills import SKILL_FILE, SkillDef, SkillFormat, SkillScope, load_frontmatter, parse_skill_text
from kairox.skills import split_frontmatter as split

if TYPE_CHECKING:
    from kairox.mcp import McpClient

_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


def mcp_skills(
    clients: Mapping[str, "McpClient"], home: Path
) -> tuple[list[SkillDef], Callable[[SkillDef], Awaitable[str | None]]]:
    """The servers' skills, and what brings one to its path under ``home`` when it is loaded."""
    found: dict[str, tuple[McpClient, dict[str, Any]]] = {}
    skills = []
    for server, client in clients.items():
        for entry in client.skills:
            front, uri = entry.get("frontmatter"), entry.get("uri")
            if not isinstance(front, dict) or not isinstance(uri, str) or not _NAME.match(str(front.get("name"))):
                continue
            path = home / "mcp-skills" / server / str(front["name"]) / SKILL_FILE
            text = f"---\n{yaml.safe_dump(front)}---\n"
            skill = parse_skill_text(
                text, path, fmt=SkillFormat.AGENT_SKILLS, scope=SkillScope.MCP, plugin=server
            ).skill
            if skill is not None:
                skills.append(skill)
                found[skill.qualified_name] = (client, entry)

    async def fetch(skill: SkillDef) -> str | None:
        client, entry = found[skill.qualified_name]
        uri, listed = entry["uri"], entry.get("resources")
        result = await client.read_resource(uri)
        text = result.text_content()
        if result.is_error:
            return text
        data = text.encode()
        mine = [r for r in listed if isinstance(r, dict) and r.get("uri") == uri] if isinstance(listed, list) else []
        if listed != "dynamic" and [(r.get("size"), r.get("digest")) for r in mine] != [
            (len(data), "sha256:" + hashlib.sha256(data).hexdigest())
        ]:
            return (
                f"{uri} from MCP server {client.name!r} is not the file its skills/list entry describes (size, digest)"
            )
        try:
            same = load_frontmatter(split(text).yaml_text or "") == entry["frontmatter"]
        except (ValueError, yaml.YAMLError):
            same = False
        if not same:
            return f"{uri} from MCP server {client.name!r} has other frontmatter than its skills/list entry"
        skill.path.parent.mkdir(parents=True, exist_ok=True)
        skill.path.write_bytes(data)
        return None

    return skills, fetch
