"""Kairox's gate where embedders already live: the registry as an OpenAI Agents SDK tool list and as a pydantic-ai
toolset. Each call the framework makes passes Kairox's gate (validation, hooks, policy, approval, events); a
refusal comes back to the model as the tool's result, as it does in Kairox's own sessions.

Each adapter imports its library only when it is used: ``pip install 'kairox[agents]'`` for ``agents_tools``,
``pip install 'kairox[pydantic-ai]'`` for ``KairoxToolset``.
"""

from typing import TYPE_CHECKING

from kairox._util._lazy import lazy_exports
from kairox.integrations._openai_agents import agents_tools  # imports the Agents SDK when called

if TYPE_CHECKING:
    from kairox.integrations._pydantic_ai import KairoxToolset

__all__ = ["KairoxToolset", "agents_tools"]

if not TYPE_CHECKING:  # a subclass of pydantic-ai's toolset: pydantic-ai loads when it is first named
    __getattr__, __dir__ = lazy_exports(__name__, {"._pydantic_ai": ("KairoxToolset",)})
