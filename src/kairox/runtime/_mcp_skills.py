"""Skills MCP servers offer through the skills extension, as ``<server>:<name>`` skills: listed from the entries
``skills/list`` gave (nothing is read before a skill is used), their ``SKILL.md`` read when one is loaded and used
only when its size, digest and frontmatter are those of the entry."""

import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kairox.skills import SKILL_FILE, SkillDef, SkillFormat, SkillScope, load_frontmatter, split_frontmatter
from kairox.skills import parse_skill_text as parse

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
            skill = parse(text, path, fmt=SkillFormat.AGENT_SKILLS, scope=SkillScope.MCP, plugin=server).skill
            if skill is not None:
                skills.append(skill)
                found[skill.qualified_name] = (client, entry)

    async def fetch(skill: SkillDef) -> str | None:
        client, entry = found[skill.qualified_name]
        uri = entry["uri"]
        result = await client.read_resource(uri)
        text = result.text_content()
        if result.is_error:
            return text
        data, listed = text.encode(), entry.get("resources")
        mine = [r for r in listed if isinstance(r, dict) and r.get("uri") == uri] if isinstance(listed, list) else []
        expected = [(len(data), "sha256:" + hashlib.sha256(data).hexdigest())]
        sizes = [(r.get("size"), r.get("digest")) for r in mine] if listed != "dynamic" else expected
        try:
            same = load_frontmatter(split_frontmatter(text).yaml_text or "") == entry["frontmatter"]
        except (ValueError, yaml.YAMLError):
            same = False
        if not same or sizes != expected:
            return f"{uri} of MCP server {client.name!r} is not what skills/list said (size, digest, frontmatter)"
        skill.path.parent.mkdir(parents=True, exist_ok=True)
        skill.path.write_bytes(data)
        return None

    return skills, fetch
