"""Skills (S1-S9): parsing, discovery across scopes, the registry, selection, the prompt catalog, the
``skill`` tool and install."""

from kairox.skills._discovery import bundled_files
from kairox.skills._gate import policy_authorizer
from kairox.skills._install import SkillInstallDeniedError, SkillInstallError, install_skill
from kairox.skills._load import read_body
from kairox.skills._model import SKILL_FILE, SkillArgument, SkillDef, SkillFormat, SkillScope
from kairox.skills._parse import load_frontmatter, parse_skill_text, split_frontmatter
from kairox.skills._registry import SkillEntry, SkillError, SkillRegistry
from kairox.skills._roots import registry_from_config, user_skills_dir, workspace_skills_dir
from kairox.skills._settings import EnableScope, enabled_file, enabled_key, persist_enabled, write_enabled
from kairox.skills._tool import SKILL_TOOL, SkillToolProvider
from kairox.skills._use import argument_schema, command_prompt, load_skill
from kairox.skills._validate import validate_path

__all__ = [
    "SKILL_FILE",
    "SKILL_TOOL",
    "EnableScope",
    "SkillArgument",
    "SkillDef",
    "SkillEntry",
    "SkillError",
    "SkillFormat",
    "SkillInstallDeniedError",
    "SkillInstallError",
    "SkillRegistry",
    "SkillScope",
    "SkillToolProvider",
    "argument_schema",
    "bundled_files",
    "command_prompt",
    "enabled_file",
    "enabled_key",
    "install_skill",
    "load_frontmatter",
    "load_skill",
    "parse_skill_text",
    "persist_enabled",
    "policy_authorizer",
    "read_body",
    "registry_from_config",
    "split_frontmatter",
    "user_skills_dir",
    "validate_path",
    "workspace_skills_dir",
    "write_enabled",
]
