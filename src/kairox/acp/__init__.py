"""``kairox acp``: Kairox as an Agent Client Protocol agent over stdio, for editors (Zed, JetBrains IDEs, Neovim,
Emacs). A front end like the TUI and the GUI: sessions opened by ``kairox.agent.open_workspace``, every call
through the gate, asks answered in the editor, the editor's files and terminal used where it offers them."""

from kairox.acp._agent import serve

__all__ = ["serve"]
