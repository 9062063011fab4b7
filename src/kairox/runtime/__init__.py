"""The composition root: ``build_extension_context`` runs the pipeline and returns an ``ExtensionContext``."""

from kairox.runtime._context import ExtensionContext, RuntimeOptions, build_extension_context
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
    "PluginsLoaded",
    "RegistryBuilt",
    "RuntimeOptions",
    "SkillsReady",
    "build_extension_context",
    "gather_memory",
    "render_prompt_context",
]
