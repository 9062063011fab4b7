"""The composition root: ``build_extension_context`` runs the pipeline and returns an ``ExtensionContext``."""

from kairox.runtime._context import (
    ExtensionContext,
    PluginStage,
    RuntimeOptions,
    build_extension_context,
    build_hooks,
    load_plugins,
    load_skills,
)
from kairox.runtime._events import (
    ExtensionContextClosed,
    ExtensionContextReady,
    PluginsLoaded,
    RegistryBuilt,
    SkillsReady,
)
from kairox.runtime._memory import MemoryFile, gather_memory
from kairox.runtime._prompt import render_prompt_context

__all__ = [
    "ExtensionContext",
    "ExtensionContextClosed",
    "ExtensionContextReady",
    "MemoryFile",
    "PluginStage",
    "PluginsLoaded",
    "RegistryBuilt",
    "RuntimeOptions",
    "SkillsReady",
    "build_extension_context",
    "build_hooks",
    "gather_memory",
    "load_plugins",
    "load_skills",
    "render_prompt_context",
]
