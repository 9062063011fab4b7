"""Skills (S1-S9): parsing, discovery across scopes, the registry, selection, the prompt catalog, the
``skill`` tool and install."""

from kairox._rpc._fetch import SourceKind, classify_source
from kairox.skills._cache import SkillCache
from kairox.skills._catalog import Catalog, render_catalog
from kairox.skills._discovery import (
    Discovery,
    DiscoveryStats,
    LooseFiles,
    SkillRoot,
    bundled_files,
    discover_skills,
)
from kairox.skills._events import SkillInstalled, SkillLoaded, SkillsDiscovered, SkillsMatched
from kairox.skills._gate import policy_authorizer
from kairox.skills._install import (
    Authorize,
    InstalledSkill,
    SkillInstallDeniedError,
    SkillInstallError,
    SkillSource,
    install_skill,
)
from kairox.skills._load import parse_skill_file, read_body
from kairox.skills._match import SkillIndex, SkillMatch, TermHit
from kairox.skills._model import (
    SKILL_FILE,
    SkillArgument,
    SkillDef,
    SkillFormat,
    SkillFrontmatter,
    SkillScope,
)
from kairox.skills._parse import ParseOutcome, load_frontmatter, parse_skill_text, split_frontmatter
from kairox.skills._registry import (
    SkillEntry,
    SkillError,
    SkillLoadError,
    SkillNotFoundError,
    SkillRegistry,
    diagnostic_json,
)
from kairox.skills._roots import (
    COMPAT_DIRS,
    cache_file,
    registry_from_config,
    roots_from_config,
    skill_roots,
    user_skills_dir,
    workspace_skills_dir,
)
from kairox.skills._settings import EnableScope, enabled_file, enabled_key, persist_enabled, write_enabled
from kairox.skills._tool import SKILL_TOOL, SkillToolProvider
from kairox.skills._use import (
    LoadedSkill,
    RegisteredTools,
    SkillArgumentsError,
    SkillToolsMissingError,
    argument_schema,
    command_prompt,
    load_skill,
)
from kairox.skills._validate import ValidationReport, validate_path

__all__ = [
    "COMPAT_DIRS",
    "SKILL_FILE",
    "SKILL_TOOL",
    "Authorize",
    "Catalog",
    "Discovery",
    "DiscoveryStats",
    "EnableScope",
    "InstalledSkill",
    "LoadedSkill",
    "LooseFiles",
    "ParseOutcome",
    "RegisteredTools",
    "SkillArgument",
    "SkillArgumentsError",
    "SkillCache",
    "SkillDef",
    "SkillEntry",
    "SkillError",
    "SkillFormat",
    "SkillFrontmatter",
    "SkillIndex",
    "SkillInstallDeniedError",
    "SkillInstallError",
    "SkillInstalled",
    "SkillLoadError",
    "SkillLoaded",
    "SkillMatch",
    "SkillNotFoundError",
    "SkillRegistry",
    "SkillRoot",
    "SkillScope",
    "SkillSource",
    "SkillToolProvider",
    "SkillToolsMissingError",
    "SkillsDiscovered",
    "SkillsMatched",
    "SourceKind",
    "TermHit",
    "ValidationReport",
    "argument_schema",
    "bundled_files",
    "cache_file",
    "classify_source",
    "command_prompt",
    "diagnostic_json",
    "discover_skills",
    "enabled_file",
    "enabled_key",
    "install_skill",
    "load_frontmatter",
    "load_skill",
    "parse_skill_file",
    "parse_skill_text",
    "persist_enabled",
    "policy_authorizer",
    "read_body",
    "registry_from_config",
    "render_catalog",
    "roots_from_config",
    "skill_roots",
    "split_frontmatter",
    "user_skills_dir",
    "validate_path",
    "workspace_skills_dir",
    "write_enabled",
]
