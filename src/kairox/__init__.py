"""Kairox: the extension layer for LLM coding agents.

``import kairox`` stays light on purpose: the feature packages, the runtime and the front ends are imported by
whoever needs them, so ``kairox --help`` starts fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
