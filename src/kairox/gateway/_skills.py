"""Skills through the MCP skills extension: ``skills/list`` entries (frontmatter as written, each file's digest and
size), files as ``skill://<name>/<path>`` resources, folders for ``resources/directory/read``."""

import base64
import hashlib
import mimetypes
from typing import Any

import mcp_types as types
import yaml

from kairox.skills import SKILL_FILE, SkillDef, SkillFormat, bundled_files, load_frontmatter, split_frontmatter

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_SCHEME = "skill://"


def skill_base(skill: SkillDef) -> str:
    """``skill://<name>``; ``skill://<plugin>/<name>`` for a plugin's skill."""
    return SKILL_SCHEME + skill.qualified_name.replace(":", "/")


def served_frontmatter(skill: SkillDef) -> dict[str, Any] | None:
    """The skill's frontmatter as written, when it can be served: an Agent Skill whose frontmatter names it."""
    if skill.format is not SkillFormat.AGENT_SKILLS:
        return None
    try:
        data = load_frontmatter(split_frontmatter(skill.path.read_text(encoding="utf-8")).yaml_text or "")
    except (OSError, ValueError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) and data.get("name") == skill.name else None


def skill_entry(skill: SkillDef, frontmatter: dict[str, Any]) -> dict[str, Any]:
    base, resources = skill_base(skill), []
    for name in [SKILL_FILE, *bundled_files(skill)]:
        data = (skill.folder / name).read_bytes()
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        resources.append({"uri": f"{base}/{name}", "digest": digest, "size": len(data)})
    return {"uri": f"{base}/{SKILL_FILE}", "frontmatter": frontmatter, "resources": resources}


def skill_manifest(skill: SkillDef, frontmatter: dict[str, Any]) -> types.Resource:
    uri, description = f"{skill_base(skill)}/{SKILL_FILE}", frontmatter.get("description")
    return types.Resource(uri=uri, name=skill.name, description=description, mime_type="text/markdown")


def locate(skills: list[SkillDef], uri: str) -> tuple[SkillDef, str] | None:
    """The skill a ``skill://`` URI is under (the longest base wins) and the path within it."""
    under = [s for s in skills if uri == skill_base(s) or uri.startswith(skill_base(s) + "/")]
    if not under:
        return None
    skill = max(under, key=lambda s: len(skill_base(s)))
    return skill, uri[len(skill_base(skill)) + 1 :]


def _mime(name: str) -> str:
    return "text/markdown" if name.endswith(".md") else mimetypes.guess_type(name)[0] or "application/octet-stream"


def directory_children(skill: SkillDef, path: str) -> list[dict[str, str]] | None:
    """The files and folders right under ``path`` of the skill (folders as ``inode/directory``); None when
    ``path`` is no folder of the skill."""
    prefix, children = f"{path}/" if path else "", {}
    for name in [SKILL_FILE, *bundled_files(skill)]:
        if name.startswith(prefix):
            head, below, _ = name[len(prefix) :].partition("/")
            children[head] = "inode/directory" if below else _mime(head)
    base = skill_base(skill)
    return [{"uri": f"{base}/{prefix}{n}", "name": n, "mimeType": m} for n, m in sorted(children.items())] or None


def file_contents(skill: SkillDef, path: str, uri: str) -> types.TextResourceContents | types.BlobResourceContents:
    data = (skill.folder / path).read_bytes()
    try:
        return types.TextResourceContents(uri=uri, mime_type=_mime(path), text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return types.BlobResourceContents(uri=uri, mime_type=_mime(path), blob=base64.b64encode(data).decode())
